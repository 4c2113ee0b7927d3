/* SPDX-License-Identifier: AGPL-3.0-only */
/* Query strings: splitting and percent-decoding, and the strict decimal
 * numbers their values must be. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "query.h"

Test(query, query_parse_decodes_and_splits)
{
	const char *q = "a=1&&b=x%20y+z&c&d=%E3%80%80&=v";
	char scratch[64];
	struct query_param p[QUERY_MAX_PARAMS];
	size_t n, bad;

	cr_assert_eq(query_split(q, strlen(q), scratch, p, &n, &bad), QUERY_SPLIT_OK);
	cr_assert_eq(n, 5);
	cr_assert_eq(p[1].value.len, 5);
	cr_assert(memcmp(p[1].value.p, "x y z", 5) == 0);
	cr_assert_eq(p[2].key.len, 1);
	cr_assert_eq(p[2].value.len, 0);
	cr_assert_not_null(p[2].value.p);
	cr_assert(memcmp(p[3].value.p, "\xe3\x80\x80", 3) == 0);
	cr_assert_eq(p[4].key.len, 0);
}

/* Nothing to decode: the slices are the input's own bytes, not a copy. */
Test(query, plain_pairs_are_not_copied)
{
	const char *q = "target=h100&model=qwen3.8-27b&override=x+y&k%41=1";
	char scratch[64];
	struct query_param p[QUERY_MAX_PARAMS];
	size_t n, bad;

	cr_assert_eq(query_split(q, strlen(q), scratch, p, &n, &bad), QUERY_SPLIT_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(p[0].key.p, q);
	cr_assert_eq(p[0].value.p, q + 7);
	cr_assert_eq(p[1].value.p, q + 18);
	cr_assert_eq(p[2].key.p, q + 30);
	cr_assert(p[2].value.p >= scratch && p[2].value.p < scratch + sizeof(scratch));
	cr_assert(memcmp(p[2].value.p, "x y", 3) == 0);
	cr_assert(p[3].key.p >= scratch && p[3].key.p < scratch + sizeof(scratch));
	cr_assert(memcmp(p[3].key.p, "kA", 2) == 0 && p[3].value.p == q + 48);
}

/* The splitter as the form-encoding rule states it, one pair at a time,
 * every byte decoded into a copy: what query_split must agree with. */
static int ref_split(const char *q, size_t len, char out[][2][32], size_t lens[][2])
{
	int n = 0;
	size_t pos = 0;

	while (pos <= len) {
		const char *amp = memchr(q + pos, '&', len - pos);
		size_t end = amp ? (size_t)(amp - q) : len, eq = end;

		for (size_t i = pos; i < end; i++) {
			if (q[i] == '=') {
				eq = i;
				break;
			}
		}
		if (end > pos) {
			for (int part = 0; part < 2; part++) {
				size_t from = part ? (eq < end ? eq + 1 : end) : pos, to = part ? end : eq, k = 0;

				for (size_t i = from; i < to; i++) {
					if (q[i] == '%') {
						unsigned v;

						if (i + 2 >= to || sscanf(q + i + 1, "%2x", &v) != 1 ||
						    !strchr("0123456789abcdefABCDEF", q[i + 1]) ||
						    !strchr("0123456789abcdefABCDEF", q[i + 2])) {
							return -1;
						}
						out[n][part][k++] = (char)v;
						i += 2;
					} else {
						out[n][part][k++] = q[i] == '+' ? ' ' : q[i];
					}
				}
				lens[n][part] = k;
			}
			n++;
		}
		pos = end + 1;
	}
	return n;
}

Test(query, split_agrees_with_the_rule_over_random_queries)
{
	static const char alphabet[] = "ab=&%+2F0";
	uint32_t seed = 22;

	for (int iter = 0; iter < 20000; iter++) {
		char q[16], scratch[16], want[16][2][32];
		size_t len = (seed >> 8) % 14, wlens[16][2], n = 0, bad = 0;
		struct query_param p[QUERY_MAX_PARAMS];
		int wn;
		enum query_split_status st;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			q[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		seed = seed * 1103515245u + 12345u;
		wn = ref_split(q, len, want, wlens);
		st = query_split(q, len, scratch, p, &n, &bad);
		cr_assert_eq(st == QUERY_SPLIT_BAD_ESCAPE, wn < 0, "%.*s", (int)len, q);
		if (wn < 0) {
			continue;
		}
		cr_assert_eq(st, QUERY_SPLIT_OK);
		cr_assert_eq(n, (size_t)wn, "%.*s", (int)len, q);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(p[i].key.len, wlens[i][0], "%.*s pair %zu", (int)len, q, i);
			cr_assert_eq(p[i].value.len, wlens[i][1], "%.*s pair %zu", (int)len, q, i);
			cr_assert(memcmp(p[i].key.p, want[i][0], wlens[i][0]) == 0, "%.*s", (int)len, q);
			cr_assert(memcmp(p[i].value.p, want[i][1], wlens[i][1]) == 0, "%.*s", (int)len, q);
			cr_assert_not_null(p[i].value.p);
		}
	}
}

Test(query, query_parse_refuses_bad_escapes)
{
	static const char *const bad_queries[] = {"a=%", "a=%4", "a=%zz", "a=1&b%=2", "x=%g0"};
	char scratch[64];
	struct query_param p[QUERY_MAX_PARAMS];
	size_t n, bad;

	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(query_split(bad_queries[i], strlen(bad_queries[i]), scratch, p, &n, &bad),
			     QUERY_SPLIT_BAD_ESCAPE, "%s", bad_queries[i]);
	}
}

Test(decimal, parse_u32_is_plain_decimal)
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

		cr_assert_eq(decimal_parse_u32(cases[i].s, strlen(cases[i].s), &v), cases[i].ok, "%s", cases[i].s);
		if (cases[i].ok) {
			cr_assert_eq(v, cases[i].v);
		}
	}
}


Test(decimal, format_u128_is_exact)
{
	char out[DECIMAL_U128_MAX];

	cr_assert_eq(decimal_format_u128(0, 0, out), 1);
	cr_assert_str_eq(out, "0");
	decimal_format_u128(0, 9007199254740992u, out);
	cr_assert_str_eq(out, "9007199254740992");
	decimal_format_u128(0, UINT64_MAX, out);
	cr_assert_str_eq(out, "18446744073709551615");
	decimal_format_u128(1, 0, out);
	cr_assert_str_eq(out, "18446744073709551616");
	cr_assert_eq(decimal_format_u128(UINT64_MAX, UINT64_MAX, out), 39);
	cr_assert_str_eq(out, "340282366920938463463374607431768211455");
}

/* An OpenFeature evaluation context through the query module. */
static int context(const char *json, struct query_context *c, struct problem *p)
{
	cJSON *root = cJSON_Parse(json);
	int ret;

	cr_assert_not_null(root, "%s", json);
	/* the inputs of a decision; the query's string slices die with the tree */
	ret = query_from_context(root, ~QUERY_BIT(QF_EXPLAIN) & ~QUERY_BIT(QF_SPELLING), c, p);
	cJSON_Delete(root);
	return ret;
}

Test(query, context_numbers_may_be_decimal_strings)
{
	struct query_context c;
	struct problem p;

	cr_assert_eq(context("{\"sm_count\":\"132\",\"num_q_heads\":24.0,\"max_rows\":\"4294967295\"}", &c, &p), 0,
		     "%s", p.detail);
	cr_assert(c.q.sm_count.set && c.q.sm_count.v == 132);
	cr_assert(c.q.num_q_heads.set && c.q.num_q_heads.v == 24);
	cr_assert_eq(c.q.max_rows.v, 4294967295u);
	cr_assert_not(c.q.head_dim.set);
	cr_assert_eq(context("{\"sm_count\":\"0132\"}", &c, &p), -1);
	cr_assert_str_eq(p.detail,
			 "sm_count must be a plain decimal integer from 1 to 4294967295 (no sign, no leading "
			 "zero, no spaces)");
	cr_assert_eq(context("{\"sm_count\":false}", &c, &p), -1);
	cr_assert_str_eq(p.detail, "sm_count must be an integer from 1 to 4294967295 or a decimal string, not boolean");
	cr_assert_eq(p.kind, PROBLEM_INVALID_PARAMETER);
}

Test(query, context_spellings_may_be_integers_written_back)
{
	struct query_context c;
	struct problem p;
	cJSON *root = cJSON_Parse("{\"override\":4,\"declared\":9007199254740991,\"target\":\"h100\"}");

	cr_assert_eq(query_from_context(root, ~(query_mask)0, &c, &p), 0, "%s", p.detail);
	cr_assert_eq(c.q.override.len, 1);
	cr_assert(memcmp(c.q.override.p, "4", 1) == 0);
	cr_assert_eq(c.q.declared.len, 16);
	cr_assert(memcmp(c.q.declared.p, "9007199254740991", 16) == 0);
	cr_assert(memcmp(c.q.target.p, "h100", 4) == 0);
	cJSON_Delete(root);
	cr_assert_eq(context("{\"override\":9007199254740992}", &c, &p), -1);
	cr_assert_eq(context("{\"target\":4}", &c, &p), -1, "a name is never a number");
	cr_assert_str_eq(p.detail, "target must be a string, not number");
}

Test(query, context_keys_by_kind)
{
	struct query_context c;
	struct problem p;

	cr_assert_eq(context("{\"targetingKey\":{},\"region\":1,\"target\":null,\"mode\":2}", &c, &p), 0);
	cr_assert_null(c.q.target.p);
	cr_assert_eq(c.num_warnings, 1);
	cr_assert_str_eq(c.warnings[0],
			 "context key \"mode\" is not an input and is ignored; did you mean \"model\"?");
	cr_assert_eq(context("{\"numQHeads\":8}", &c, &p), -1);
	cr_assert_eq(p.kind, PROBLEM_UNKNOWN_PARAMETER);
	cr_assert_str_eq(p.param, "numQHeads");
	cr_assert_str_eq(p.suggestion, "num_q_heads");
	cr_assert_eq(context("{\"model\":null,\"model\":\"x\"}", &c, &p), -1);
	cr_assert_eq(p.kind, PROBLEM_REPEATED_PARAMETER);
	cr_assert_eq(context("{\"explain\":true}", &c, &p), -1);
	cr_assert_str_eq(p.param, "explain");
	cr_assert_eq(context("{\"explain\":null}", &c, &p), 0);
	cr_assert_eq(context("[]", &c, &p), -1);
	cr_assert_eq(query_from_context(NULL, ~(query_mask)0, &c, &p), 0);
}

/* Every field is found by its own name, allowed alone, and refused when
 * not allowed: the lookup's shortcut by length names each one right. */
Test(query, every_field_is_found_by_its_name)
{
#define NAME_ROW(e, name, kind, scope, bounds) #name,
#define KIND_ROW(e, name, kind, scope, bounds) #kind,
	static const char *const names[QF_COUNT] = {VOCAB_PARAMS(NAME_ROW)};
	static const char *const kinds[QF_COUNT] = {VOCAB_PARAMS(KIND_ROW)};
#undef NAME_ROW
#undef KIND_ROW

	for (int f = 0; f < QF_COUNT; f++) {
		char raw[64], scratch[64];
		struct query q;
		struct problem p;

		cr_assert_str_eq(query_field_name((enum query_field)f), names[f]);
		snprintf(raw, sizeof(raw), "%s=%s", names[f], strcmp(kinds[f], "BOOL") == 0 ? "1" : "7");
		cr_assert_eq(query_parse(raw, strlen(raw), scratch, QUERY_BIT(f), &q, &p), 0, "%s: %s", raw,
			     p.detail);
		cr_assert_eq(query_parse(raw, strlen(raw), scratch, ~(query_mask)0 & ~QUERY_BIT(f), &q, &p), -1, "%s", raw);
		cr_assert_eq(p.kind, PROBLEM_UNKNOWN_PARAMETER, "%s", raw);
	}
}

/* The LIST kind (vocab.h), at bounds of the test's own: 1 to 65536, at
 * most 4 elements. A query string's comma-separated decimals and a JSON
 * array read to the same elements; anything past a bound, empty, signed,
 * spaced or of another type is refused. */
Test(query, a_list_reads_within_its_bounds_from_text_and_json)
{
	static const struct {
		const char *text, *json;
		uint32_t n, v[4];
	} good[] = {
		{"7", "[7]", 1, {7}},
		{"1,2,65536", "[1, 2, 65536]", 3, {1, 2, 65536}},
		{"4096,1,4096,9", "[4096,1.0,4096,9]", 4, {4096, 1, 4096, 9}},
	};
	static const char *const bad_text[] = {
		"", ",", "1,", ",1", "1,,2", "0", "65537", "1,2,3,4,5", "+1", "01", "1, 2", "a",
		"4294967296",
	};
	static const char *const bad_json[] = {
		"[]", "[0]", "[65537]", "[1,2,3,4,5]", "[1.5]", "[-1]", "[\"1\"]", "[null]", "7",
		"\"1,2\"", "{}", "[[1]]",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct query_list t = {0}, j = {0};
		uint32_t out[4], few[2];
		cJSON *json = cJSON_Parse(good[i].json);

		cr_assert(query_list_text((struct slice){good[i].text, strlen(good[i].text)}, 1, 65536,
					  4, &t), "%s", good[i].text);
		cr_assert(query_list_json(json, 1, 65536, 4, &j), "%s", good[i].json);
		cr_assert_eq(t.n, good[i].n);
		cr_assert_eq(j.n, good[i].n);
		cr_assert_eq(query_list_get(&t, out, 4), good[i].n);
		cr_assert_arr_eq(out, good[i].v, good[i].n * sizeof(uint32_t), "%s", good[i].text);
		memset(out, 0, sizeof(out));
		cr_assert_eq(query_list_get(&j, out, 4), good[i].n);
		cr_assert_arr_eq(out, good[i].v, good[i].n * sizeof(uint32_t), "%s", good[i].json);
		/* a smaller room takes the first ones */
		cr_assert_eq(query_list_get(&t, few, 1), 1);
		cr_assert_eq(few[0], good[i].v[0]);
		cJSON_Delete(json);
	}
	for (size_t i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++) {
		struct query_list l = {0};

		cr_assert(!query_list_text((struct slice){bad_text[i], strlen(bad_text[i])}, 1, 65536, 4,
					   &l), "\"%s\" read", bad_text[i]);
		cr_assert_eq(l.n, 0, "\"%s\" left a count", bad_text[i]);
	}
	for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		struct query_list l = {0};
		cJSON *json = cJSON_Parse(bad_json[i]);

		cr_assert_not_null(json, "%s", bad_json[i]);
		cr_assert(!query_list_json(json, 1, 65536, 4, &l), "%s read", bad_json[i]);
		cr_assert_eq(l.n, 0);
		cJSON_Delete(json);
	}
}

/* A list whose bounds start at 0 takes a lone 0, never a leading one. */
Test(query, a_list_from_zero_takes_zero)
{
	struct query_list l = {0};
	uint32_t out[3];

	cr_assert(query_list_text((struct slice){"0,10,0", 6}, 0, 10, 3, &l));
	cr_assert_eq(query_list_get(&l, out, 3), 3);
	cr_assert(out[0] == 0 && out[1] == 10 && out[2] == 0);
	cr_assert(!query_list_text((struct slice){"00", 2}, 0, 10, 3, &l));
}
