/* SPDX-License-Identifier: AGPL-3.0-only */
/* The small helpers: query splitting, strict numbers, edit distance, and
 * the JSON writer's escaping and exact integers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "jsonw.h"
#include "text.h"

Test(text, query_parse_decodes_and_splits)
{
	const char *q = "a=1&&b=x%20y+z&c&d=%E3%80%80&=v";
	char scratch[64];
	struct text_param p[TEXT_MAX_PARAMS];
	size_t n, bad;

	cr_assert_eq(text_query_parse(q, strlen(q), scratch, p, &n, &bad), TEXT_QUERY_OK);
	cr_assert_eq(n, 5);
	cr_assert_eq(p[1].value.len, 5);
	cr_assert(memcmp(p[1].value.p, "x y z", 5) == 0);
	cr_assert_eq(p[2].key.len, 1);
	cr_assert_eq(p[2].value.len, 0);
	cr_assert_not_null(p[2].value.p);
	cr_assert(memcmp(p[3].value.p, "\xe3\x80\x80", 3) == 0);
	cr_assert_eq(p[4].key.len, 0);
}

Test(text, query_parse_refuses_bad_escapes)
{
	static const char *const bad_queries[] = {"a=%", "a=%4", "a=%zz", "a=1&b%=2", "x=%g0"};
	char scratch[64];
	struct text_param p[TEXT_MAX_PARAMS];
	size_t n, bad;

	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(text_query_parse(bad_queries[i], strlen(bad_queries[i]), scratch, p, &n, &bad),
			     TEXT_QUERY_BAD_ESCAPE, "%s", bad_queries[i]);
	}
}

Test(text, parse_u32_is_plain_decimal)
{
	static const struct {
		const char *s;
		bool ok;
		uint32_t v;
	} cases[] = {
		{"1", true, 1},	       {"16", true, 16},   {"4294967295", true, 4294967295u},
		{"0", false, 0},       {"00", false, 0},   {"016", false, 0},
		{"+1", false, 0},      {"-1", false, 0},   {" 1", false, 0},
		{"1 ", false, 0},      {"", false, 0},	   {"4294967296", false, 0},
		{"99999999999", false, 0}, {"1e3", false, 0}, {"0x10", false, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = 0;

		cr_assert_eq(text_parse_u32(cases[i].s, strlen(cases[i].s), &v), cases[i].ok, "%s", cases[i].s);
		if (cases[i].ok) {
			cr_assert_eq(v, cases[i].v);
		}
	}
}

Test(text, distance_and_nearness)
{
	cr_assert_eq(text_distance("target", 6, "targt", 5, 9), 1);
	cr_assert_eq(text_distance("TARGET", 6, "target", 6, 9), 0);
	cr_assert_eq(text_distance("abc", 3, "xyz", 3, 2), 2); /* capped */
	cr_assert(text_is_near("atuo", 4, "auto"));
	cr_assert(text_is_near("hoper", 5, "hopper"));
	cr_assert_not(text_is_near("auto", 4, "auto")); /* equal is not a typo */
	cr_assert_not(text_is_near("x", 1, "no"));
	cr_assert_not(text_is_near("tpu", 3, "h100"));
}

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
Test(text, plain_run_matches_a_byte_loop)
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
		cr_assert_eq(text_plain_run((const char *)buf, len, true), want_strict, "round %d", round);
		cr_assert_eq(text_plain_run((const char *)buf, len, false), want_loose, "round %d", round);
	}
}
