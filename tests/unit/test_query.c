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

