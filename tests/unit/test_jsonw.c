/* SPDX-License-Identifier: AGPL-3.0-only */
/* The JSON writer: escaping, exact integers, and the eight-bytes-a-step
 * scan it copies plain runs with. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonin.h"
#include "jsonscan.h"
#include "jsonw.h"

static char *written(void (*fill)(struct jsonw *))
{
	struct jsonw w;
	size_t n;

	jsonw_init(&w, 4); /* tiny, so growth is exercised */
	fill(&w);
	return jsonw_take(&w, &n);
}

static void fill_escapes(struct jsonw *w)
{
	jsonw_object_begin(w);
	jsonw_kv_str(w, "q", "a\"b\\c\n\t\x01\x7f");
	jsonw_key(w, "bad");
	jsonw_strn(w, "x\xff\xe3\x80y\xe3\x80\x80", 8);
	jsonw_key(w, "a");
	jsonw_array_begin(w);
	jsonw_u64(w, 0);
	jsonw_u64(w, UINT64_MAX);
	jsonw_u128(w, 1, 0);
	jsonw_u128(w, UINT64_MAX, UINT64_MAX);
	jsonw_milli(w, 2424);
	jsonw_milli(w, 7);
	jsonw_null(w);
	jsonw_bool(w, false);
	jsonw_array_end(w);
	jsonw_object_end(w);
}

Test(jsonw, escapes_and_exact_integers)
{
	char *s = written(fill_escapes);

	cr_assert_str_eq(s, "{\"q\":\"a\\\"b\\\\c\\n\\t\\u0001\x7f\","
			    "\"bad\":\"x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy\xe3\x80\x80\","
			    "\"a\":[0,18446744073709551615,18446744073709551616,"
			    "340282366920938463463374607431768211455,2.424,0.007,null,false]}");
	free(s);
}

/* The eight-bytes-a-step scan against a plain byte loop, on strings built
 * from the bytes that matter at every offset and length. */
Test(jsonscan, plain_run_matches_a_byte_loop)
{
	static const unsigned char alphabet[] = {'a', 'Z', '0', ' ', '"', '\\', 0x00, 0x1f, 0x20,
						 0x7f, 0x80, 0xc3, 0xff, '}', ':', '~'};
	unsigned char buf[40];
	uint64_t state = 0x2545F4914F6CDD1Du;

	for (int round = 0; round < 200000; round++) {
		size_t len, want_strict, want_loose;

		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		len = state % sizeof(buf);
		for (size_t i = 0; i < len; i++) {
			/* mostly plain letters, so long runs are exercised too */
			uint64_t r = (state >> (i % 56)) ^ (i * 0x9E3779B97F4A7C15u);

			buf[i] = (r % 7 == 0) ? alphabet[(r >> 8) % sizeof(alphabet)] : (unsigned char)('a' + r % 26);
		}
		for (want_strict = 0; want_strict < len; want_strict++) {
			unsigned char c = buf[want_strict];

			if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
				break;
			}
		}
		for (want_loose = 0; want_loose < len; want_loose++) {
			unsigned char c = buf[want_loose];

			if (c < 0x20 || c == '"' || c == '\\') {
				break;
			}
		}
		cr_assert_eq(jsonscan_plain_run((const char *)buf, len, true), want_strict, "round %d", round);
		cr_assert_eq(jsonscan_plain_run((const char *)buf, len, false), want_loose, "round %d", round);
	}
}

/* jsonw_escape into a buffer of every size against the writer's own
 * string: the same bytes when it fits, and otherwise a prefix of them that
 * ends between two units (never inside a UTF-8 sequence or an escape). */
Test(jsonw, escape_into_a_buffer_is_the_writers_string_cut_whole)
{
	static const char *const inputs[] = {
		"plain ascii text", "a\"b\\c\nd\te\x01\x1f\x7f", "caf\xc3\xa9 \xe3\x80\x80 \xf0\x9f\x98\x80",
		"bad \xff\xfe \xc3\x28 \xe3\x80 end", "\xed\xa0\x80 surrogate", "",
	};

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		const char *in = inputs[i];
		struct jsonw w;
		size_t whole_len;
		char *whole, out[128];

		jsonw_init(&w, 0);
		jsonw_str(&w, in);
		whole = jsonw_take(&w, &whole_len);
		/* the writer's value without its quotes */
		cr_assert_eq(jsonw_escape(out, sizeof(out), in, strlen(in)), whole_len - 2, "%s", in);
		cr_assert_eq(memcmp(out, whole + 1, whole_len - 2), 0, "%s", in);
		for (size_t cap = 0; cap < whole_len - 2; cap++) {
			size_t n = jsonw_escape(out, cap, in, strlen(in));
			char quoted[130], err[160];
			cJSON *parsed;

			cr_assert_leq(n, cap);
			cr_assert_gt(n + 6, cap, "%s: stopped early at %zu of %zu", in, n, cap);
			cr_assert_eq(memcmp(out, whole + 1, n), 0, "%s at %zu", in, cap);
			/* whole units only: quoted, it is strict JSON (valid UTF-8,
			 * no half escape) */
			quoted[0] = '"';
			memcpy(quoted + 1, out, n);
			quoted[n + 1] = '"';
			parsed = jsonin_parse(quoted, n + 2, err, sizeof(err));
			cr_assert_not_null(parsed, "%s cut at %zu: %.*s (%s)", in, cap, (int)n, out, err);
			cJSON_Delete(parsed);
		}
		free(whole);
	}
}
