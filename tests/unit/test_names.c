/* SPDX-License-Identifier: AGPL-3.0-only */
/* Names as people type them: case-insensitive equality and did-you-mean. */
#include <criterion/criterion.h>
#include <string.h>

#include "names.h"

Test(names, distance_and_nearness)
{
	cr_assert_eq(names_distance("target", 6, "targt", 5, 9), 1);
	cr_assert_eq(names_distance("TARGET", 6, "target", 6, 9), 0);
	cr_assert_eq(names_distance("abc", 3, "xyz", 3, 2), 2); /* capped */
	cr_assert(names_is_near("atuo", 4, "auto"));
	cr_assert(names_is_near("hoper", 5, "hopper"));
	cr_assert_not(names_is_near("auto", 4, "auto")); /* equal is not a typo */
	cr_assert_not(names_is_near("x", 1, "no"));
	cr_assert_not(names_is_near("tpu", 3, "h100"));
}

Test(names, equal_ignores_ascii_case_only)
{
	cr_assert(names_equal("H100", 4, "h100"));
	cr_assert(names_equal("", 0, ""));
	cr_assert_not(names_equal("h10", 3, "h100")); /* a prefix is not equal */
	cr_assert_not(names_equal("h1000", 5, "h100"));
	cr_assert_not(names_equal("\xc3\x84", 2, "\xc3\xa4")); /* no Unicode folding */
}

Test(names, nearest_of_a_list)
{
	static const char *const words[] = {"legacy", "auto", "off", "false"};

	cr_assert_str_eq(names_nearest("atuo", 4, words, 4), "auto");
	cr_assert_str_eq(names_nearest("of", 2, words, 4), "off");
	cr_assert_null(names_nearest("auto", 4, words, 4)); /* exact is not a typo */
	cr_assert_null(names_nearest("xyzzy", 5, words, 4));
	cr_assert_null(names_nearest("atuo", 4, words, 0));
}

/* One rule for every did-you-mean: the nearest wins wherever it is
 * listed, the first offered on a tie, and the flags let an exact or a
 * folded match count (distance 0). */
Test(names, near_takes_the_nearest_then_the_first)
{
	static const char *const later_is_nearer[] = {"h200", "h100"}; /* "h10": 2 and 1 edits */
	static const char *const tie[] = {"b200", "h200"};             /* "x200": 1 edit each */
	struct names_near n;

	cr_assert_str_eq(names_nearest("h10", 3, later_is_nearer, 2), "h100");
	cr_assert_str_eq(names_nearest("x200", 4, tie, 2), "b200");
	names_near_init(&n, "target", 6, 0);
	names_near_offer(&n, "target");
	cr_assert_null(n.best, "without NAMES_SAME an exact match is not a typo");
	names_near_init(&n, "TARGET", 6, NAMES_SAME);
	names_near_offer(&n, "targets");
	names_near_offer(&n, "target");
	cr_assert_str_eq(n.best, "target", "the exact match (0) beats one edit");
	/* four edits away, so near only by folding */
	names_near_init(&n, "--max--batch--size", 18, NAMES_FOLDED);
	names_near_offer(&n, "max_rows");
	names_near_offer(&n, "max_batch_size");
	cr_assert_str_eq(n.best, "max_batch_size");
	names_near_init(&n, "--max--batch--size", 18, 0);
	names_near_offer(&n, "max_batch_size");
	cr_assert_null(n.best, "folding only with NAMES_FOLDED");
}

Test(names, equal_folded_ignores_case_underscores_and_hyphens)
{
	cr_assert(names_equal_folded("maxBatchSize", 12, "max_batch_size"));
	cr_assert(names_equal_folded("MAX-BATCH-SIZE", 14, "max_batch_size"));
	cr_assert(names_equal_folded("max_batch_size", 14, "max_batch_size"));
	cr_assert(names_equal_folded("_-target-_", 10, "target"));
	cr_assert(names_equal_folded("", 0, "_"));
	cr_assert_not(names_equal_folded("maxBatchSizes", 13, "max_batch_size"));
	cr_assert_not(names_equal_folded("maxBatch", 8, "max_batch_size")); /* a prefix is not equal */
	cr_assert_not(names_equal_folded("max.batch.size", 14, "max_batch_size"));
	cr_assert_not(names_equal_folded("max batch size", 14, "max_batch_size"));
	/* the length bounds the input: a NUL-free slice of a longer buffer */
	cr_assert(names_equal_folded("smCountXYZ", 7, "sm_count"));
}

/* NAMES_PREFIX: the first words of a candidate, at a word boundary, at
 * least 4 bytes, and only after every edit-distance match. */
Test(names, prefix_is_a_last_resort)
{
	static const struct {
		const char *typed;
		const char *want; /* NULL: no suggestion */
	} cases[] = {
		{"max_batch", "max_batch_size"},
		{"MAX_BATCH", "max_batch_size"},
		{"num_q", "num_q_heads"},
		{"max_b", NULL},         /* not at a word boundary */
		{"max", NULL},           /* under 4 bytes */
		{"max_batch_size", NULL}, /* itself without NAMES_SAME */
		{"max_rowz", "max_rows"}, /* an edit-distance match wins over any prefix */
	};
	const char *const candidates[] = {"max_batch_size", "num_q_heads", "max_rows"};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct names_near n;

		names_near_init(&n, cases[i].typed, strlen(cases[i].typed), NAMES_PREFIX);
		for (size_t j = 0; j < 3; j++) {
			names_near_offer(&n, candidates[j]);
		}
		if (cases[i].want == NULL) {
			cr_assert_null(n.best, "%s: %s", cases[i].typed, n.best);
		} else {
			cr_assert_str_eq(n.best, cases[i].want, "%s", cases[i].typed);
		}
	}
	/* without the flag, no prefix match: max_batch gets nothing */
	cr_assert_null(names_nearest("max_batch", 9, candidates, 3));
}
