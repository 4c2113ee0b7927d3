/* SPDX-License-Identifier: AGPL-3.0-only */
/* Strict JSON input: what cJSON alone would let through is refused, and the
 * arena path gives the same trees as the malloc path. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonin.h"

struct strict_case {
	const char *text;
	size_t len; /* 0: strlen */
	bool ok;
};

static const struct strict_case strict_cases[] = {
	{"{\"a\":1}", 0, true},
	{" [1, 2, {\"b\": \"c\"}] \n", 0, true},
	{"{\"a\":\"\\u00e9\\\\u0000\"}", 0, true}, /* an escaped backslash, then text */
	{"{\"a\":\"x\\u0000\"}", 0, false},       /* cJSON would cut the string here */
	{"{\"a\":\"x\ty\"}", 0, false},           /* raw control character */
	{"{\"a\":1}\0", 8, false},                 /* a NUL byte */
	{"{\"a\":\"\xc3\x28\"}", 0, false},         /* not UTF-8 */
	{"{\"a\":1} {\"b\":2}", 0, false},         /* trailing value */
	{"{\"a\":1,}", 0, false},
	{"", 0, false},
	{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 0, true}, /* 32 deep */
	{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 0, false}, /* 33 */
	{"\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"", 0, true}, /* brackets in a string */
};

static void run_cases(bool arena)
{
	for (size_t i = 0; i < sizeof(strict_cases) / sizeof(strict_cases[0]); i++) {
		const struct strict_case *c = &strict_cases[i];
		size_t len = c->len ? c->len : strlen(c->text);
		char err[160] = "";
		struct jsonin_arena a = {0};
		cJSON *tree = arena ? jsonin_parse_in(&a, c->text, len, err, sizeof(err))
				    : jsonin_parse(c->text, len, err, sizeof(err));

		cr_expect_eq(tree != NULL, c->ok, "case %zu (%s): %s", i, c->text, err);
		if (!c->ok) {
			cr_expect_gt(strlen(err), 0, "case %zu: no reason given", i);
		}
		if (arena) {
			jsonin_arena_cleanup(&a);
		} else {
			cJSON_Delete(tree);
		}
	}
}

Test(jsonin, strict_without_hooks)
{
	run_cases(false);
	run_cases(true); /* no hooks: the arena falls back to malloc and still cleans up */
}

Test(jsonin, strict_with_arena_hooks)
{
	/* each Criterion test runs in its own process, so the hooks stay here */
	jsonin_init();
	run_cases(true);
	run_cases(false); /* outside an arena, the hooks are plain malloc/free */
}

Test(jsonin, arena_tree_is_whole_and_large_inputs_span_blocks)
{
	size_t cap = 400000, n = 0;
	char *text = malloc(cap);
	struct jsonin_arena a = {0};
	char err[160];
	cJSON *tree, *item;
	int count = 0;

	jsonin_init();
	n += (size_t)snprintf(text + n, cap - n, "[");
	for (int i = 0; i < 5000; i++) {
		n += (size_t)snprintf(text + n, cap - n, "%s{\"name\":\"item-%d\",\"n\":%d}", i ? "," : "", i, i);
	}
	n += (size_t)snprintf(text + n, cap - n, "]");
	tree = jsonin_parse_in(&a, text, n, err, sizeof(err));
	cr_assert_not_null(tree, "%s", err);
	cJSON_ArrayForEach(item, tree) {
		char want[32];

		snprintf(want, sizeof(want), "item-%d", count);
		cr_assert_str_eq(cJSON_GetObjectItem(item, "name")->valuestring, want);
		cr_assert_eq(cJSON_GetObjectItem(item, "n")->valueint, count);
		count++;
	}
	cr_assert_eq(count, 5000);
	jsonin_arena_cleanup(&a);
	free(text);
}

Test(jsonin, check_keys)
{
	static const char *const allowed[] = {"a", "b"};
	const char *bad = NULL;
	cJSON *ok = cJSON_Parse("{\"a\":1,\"b\":2}");
	cJSON *unknown = cJSON_Parse("{\"a\":1,\"c\":2}");
	cJSON *dup = cJSON_Parse("{\"a\":1,\"a\":2}");

	cr_assert_eq(jsonin_check_keys(ok, allowed, 2, &bad), JSONIN_KEYS_OK);
	cr_assert_eq(jsonin_check_keys(unknown, allowed, 2, &bad), JSONIN_KEYS_UNKNOWN);
	cr_assert_str_eq(bad, "c");
	cr_assert_eq(jsonin_check_keys(dup, allowed, 2, &bad), JSONIN_KEYS_DUPLICATE);
	cr_assert_str_eq(bad, "a");
	cJSON_Delete(ok);
	cJSON_Delete(unknown);
	cJSON_Delete(dup);
}

/* A refusal says where: byte offset, line and column (in characters). */
Test(jsonin, errors_say_where)
{
	static const struct {
		const char *text;
		size_t len; /* 0: strlen */
		const char *want;
	} cases[] = {
		{"{\"target\":\"h100\",\n \"model\": qwen}", 0, "malformed JSON at offset 28 (line 2, column 11)"},
		/* a stray comma is named where it is, not at the bracket after it */
		{"{\"a\":1,}", 0, "malformed JSON: a comma with nothing after it at offset 6 (line 1, column 7)"},
		{"{\"a\":[1,\n  ]}", 0, "malformed JSON: a comma with nothing after it at offset 7 (line 1, column 8)"},
		{"{\"a\":1,,}", 0, "malformed JSON: a comma with nothing after it at offset 7 (line 1, column 8)"},
		{"{\"a\":1 2}", 0, "malformed JSON at offset 7 (line 1, column 8)"},
		/* wherever cJSON stops after it (here the byte after the bracket) */
		{"{\"a\": [],\n  \"b\": [],\n}\n", 0, "malformed JSON: a comma with nothing after it at offset 19 (line 2, column 10)"},
		/* a comma inside a string is no stray comma; the place is the x */
		{"{\"a\": \",}\", \"b\": x}", 0, "malformed JSON at offset 17 (line 1, column 18)"},
		{"[1, 2]\n\n  x", 0, "trailing data after the JSON value at offset 10 (line 3, column 3)"},
		{"{\"\xc3\xa9\":\"a\tb\"}", 0, "control character in a string at offset 8 (line 1, column 8)"},
		{"[\"x\"]\0", 6, "NUL byte at offset 5 (line 1, column 6)"},
		{"{\"a\":\"x\\u0000\"}", 0, "\\u0000 in a string at offset 7 (line 1, column 8)"},
		{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 0,
		 "nesting deeper than 32 levels at offset 32 (line 1, column 33)"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[160] = "";
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		cJSON *tree = jsonin_parse(cases[i].text, len, err, sizeof(err));

		cr_assert_null(tree, "case %zu parsed", i);
		cr_assert(strstr(err, cases[i].want) != NULL, "case %zu: \"%s\", want \"%s\"", i, err,
			  cases[i].want);
	}
}
