/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Unit tests for policy/splitk: every promise the seed's comments make, as
 * tables and as properties over sweeps. The formulas restated here are
 * written out plainly (64-bit, no helpers shared with the port) so a slip in
 * the port's arithmetic cannot hide behind the same slip in the test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitk.h"

#define POL_LEGACY ((struct splitk_policy){SPLITK_LEGACY, 0})
#define POL_AUTO ((struct splitk_policy){SPLITK_AUTO, 0})
#define POL_PIN(n) ((struct splitk_policy){SPLITK_PINNED, (n)})

/* -------------------------------------------------------------- parse */

struct parse_case {
	const char *bytes;
	size_t len; /* 0: strlen(bytes) */
	bool ok;
	enum splitk_kind kind;
	uint32_t pinned;
};

static const struct parse_case parse_cases[] = {
	/* each spelling form */
	{"legacy", 0, true, SPLITK_LEGACY, 0},
	{"auto", 0, true, SPLITK_AUTO, 0},
	{"0", 0, true, SPLITK_PINNED, 1},
	{"off", 0, true, SPLITK_PINNED, 1},
	{"false", 0, true, SPLITK_PINNED, 1},
	{"no", 0, true, SPLITK_PINNED, 1},
	{"1", 0, true, SPLITK_PINNED, 1},
	{"4", 0, true, SPLITK_PINNED, 4},
	{"16", 0, true, SPLITK_PINNED, 16},
	/* case: ASCII only */
	{"LEGACY", 0, true, SPLITK_LEGACY, 0},
	{"Auto", 0, true, SPLITK_AUTO, 0},
	{"aUtO", 0, true, SPLITK_AUTO, 0},
	{"OFF", 0, true, SPLITK_PINNED, 1},
	{"False", 0, true, SPLITK_PINNED, 1},
	{"No", 0, true, SPLITK_PINNED, 1},
	{"\xef\xbd\x81uto", 0, false, SPLITK_LEGACY, 0},  /* fullwidth a */
	{"legac\xe1\xba\x8f", 0, false, SPLITK_LEGACY, 0}, /* y with dot */
	/* ASCII whitespace */
	{" auto", 0, true, SPLITK_AUTO, 0},
	{"auto ", 0, true, SPLITK_AUTO, 0},
	{"\t\n\v\f\r legacy \r\n", 0, true, SPLITK_LEGACY, 0},
	{" 8 ", 0, true, SPLITK_PINNED, 8},
	{"au to", 0, false, SPLITK_LEGACY, 0},
	{"1 6", 0, false, SPLITK_LEGACY, 0},
	{"", 0, false, SPLITK_LEGACY, 0},
	{"   ", 0, false, SPLITK_LEGACY, 0},
	/* Unicode White_Space is trimmed ... */
	{"\xc2\xa0" "auto", 0, true, SPLITK_AUTO, 0},          /* U+00A0 */
	{"auto\xc2\x85", 0, true, SPLITK_AUTO, 0},             /* U+0085 */
	{"\xe3\x80\x80" "4\xe3\x80\x80", 0, true, SPLITK_PINNED, 4}, /* U+3000 */
	{"\xe2\x80\xa8off\xe2\x80\xa9", 0, true, SPLITK_PINNED, 1},  /* U+2028/9 */
	{"\xe1\x9a\x80" "auto\xe2\x80\xaf", 0, true, SPLITK_AUTO, 0}, /* U+1680, U+202F */
	{"\xe2\x80\x8a" "auto\xe2\x81\x9f", 0, true, SPLITK_AUTO, 0}, /* U+200A, U+205F */
	/* ... but these are not White_Space */
	{"\xe2\x80\x8b" "auto", 0, false, SPLITK_LEGACY, 0}, /* U+200B */
	{"auto\xef\xbb\xbf", 0, false, SPLITK_LEGACY, 0},    /* U+FEFF */
	{"\xe1\xa0\x8e" "auto", 0, false, SPLITK_LEGACY, 0}, /* U+180E */
	{"auto\x1f", 0, false, SPLITK_LEGACY, 0},
	/* signs: u32::from_str takes one '+', never '-' */
	{"+4", 0, true, SPLITK_PINNED, 4},
	{"+0", 0, true, SPLITK_PINNED, 1},
	{"+", 0, false, SPLITK_LEGACY, 0},
	{"++4", 0, false, SPLITK_LEGACY, 0},
	{"-1", 0, false, SPLITK_LEGACY, 0},
	{"-0", 0, false, SPLITK_LEGACY, 0},
	{"-", 0, false, SPLITK_LEGACY, 0},
	{"+-1", 0, false, SPLITK_LEGACY, 0},
	{" +4 ", 0, true, SPLITK_PINNED, 4},
	/* leading zeros */
	{"00", 0, true, SPLITK_PINNED, 1},
	{"007", 0, true, SPLITK_PINNED, 7},
	{"000000000000000000000000000016", 0, true, SPLITK_PINNED, 16},
	/* clamps and overflow: overflow is refused, not clamped */
	{"17", 0, true, SPLITK_PINNED, 16},
	{"4294967295", 0, true, SPLITK_PINNED, 16},
	{"04294967295", 0, true, SPLITK_PINNED, 16},
	{"4294967296", 0, false, SPLITK_LEGACY, 0},
	{"99999999999999999999", 0, false, SPLITK_LEGACY, 0},
	/* garbage */
	{"atuo", 0, false, SPLITK_LEGACY, 0},
	{"autoo", 0, false, SPLITK_LEGACY, 0},
	{"legac", 0, false, SPLITK_LEGACY, 0},
	{"true", 0, false, SPLITK_LEGACY, 0},
	{"yes", 0, false, SPLITK_LEGACY, 0},
	{"0x10", 0, false, SPLITK_LEGACY, 0},
	{"1e1", 0, false, SPLITK_LEGACY, 0},
	{"1_0", 0, false, SPLITK_LEGACY, 0},
	{"1.0", 0, false, SPLITK_LEGACY, 0},
	{"\xd9\xa3", 0, false, SPLITK_LEGACY, 0}, /* Arabic-Indic three */
	{"\xef\xbc\x95", 0, false, SPLITK_LEGACY, 0}, /* fullwidth five */
	/* NUL is a character like any other; the length is what counts */
	{"auto\0", 5, false, SPLITK_LEGACY, 0},
	{"auto\0junk", 4, true, SPLITK_AUTO, 0},
	/* bytes that are not UTF-8 never form a spelling */
	{"auto\xff", 0, false, SPLITK_LEGACY, 0},
	{"\xc0\xa0" "auto", 0, false, SPLITK_LEGACY, 0},      /* overlong space */
	{"\xed\xa0\x80", 0, false, SPLITK_LEGACY, 0},          /* surrogate */
	{"4\xf4\x90\x80\x80", 0, false, SPLITK_LEGACY, 0},     /* > U+10FFFF */
	{"\xe3\x80" "auto", 0, false, SPLITK_LEGACY, 0},       /* truncated */
	{"auto\xe3\x80", 0, false, SPLITK_LEGACY, 0},          /* truncated at end */
};

Test(splitk_parse, table)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		size_t len = c->len ? c->len : strlen(c->bytes);
		struct splitk_policy p = {SPLITK_LEGACY, 999};
		bool ok = splitk_parse(c->bytes, len, &p);

		cr_expect_eq(ok, c->ok, "case %zu (%s): ok=%d", i, c->bytes, ok);
		if (ok && c->ok) {
			cr_expect_eq(p.kind, c->kind, "case %zu (%s): kind", i, c->bytes);
			if (c->kind == SPLITK_PINNED) {
				cr_expect_eq(p.pinned, c->pinned, "case %zu (%s): pinned %u", i,
					     c->bytes, p.pinned);
			}
		}
		if (!ok) {
			cr_expect_eq(p.pinned, 999, "case %zu: a failed parse wrote *out", i);
		}
	}
}

Test(splitk_parse, needs_no_nul_terminator)
{
	char buf[4] = {'a', 'u', 't', 'o'}; /* no NUL anywhere */
	struct splitk_policy p;

	cr_assert(splitk_parse(buf, sizeof(buf), &p));
	cr_assert_eq(p.kind, SPLITK_AUTO);
	cr_assert(splitk_parse("16", 1, &p)); /* only the "1" */
	cr_assert_eq(p.pinned, 1);
	cr_assert_not(splitk_parse(NULL, 0, &p));
}

Test(splitk_parse, every_decimal_to_4096_pins_its_clamp)
{
	char buf[16];

	for (uint32_t n = 0; n <= 4096; n++) {
		struct splitk_policy p;
		int len = snprintf(buf, sizeof(buf), "%u", n);

		cr_assert(splitk_parse(buf, (size_t)len, &p), "%u", n);
		cr_assert_eq(p.kind, SPLITK_PINNED);
		cr_assert_eq(p.pinned, n < 1 ? 1 : (n > 16 ? 16 : n), "%u", n);
	}
}

/* -------------------------------------------------------------- label */

Test(splitk_label, round_trips_through_parse)
{
	const struct splitk_policy ps[] = {POL_LEGACY, POL_AUTO, POL_PIN(1), POL_PIN(9),
					   POL_PIN(16)};
	char out[SPLITK_LABEL_MAX];

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct splitk_policy back;
		size_t n = splitk_label(ps[i], out);

		cr_assert_eq(n, strlen(out));
		cr_assert(splitk_parse(out, n, &back));
		cr_assert_eq(back.kind, ps[i].kind);
		cr_assert_eq(back.pinned, ps[i].pinned);
	}
}

Test(splitk_label, spellings)
{
	char out[SPLITK_LABEL_MAX];

	cr_assert_eq(splitk_label(POL_LEGACY, out), 6);
	cr_assert_str_eq(out, "legacy");
	cr_assert_eq(splitk_label(POL_AUTO, out), 4);
	cr_assert_str_eq(out, "auto");
	cr_assert_eq(splitk_label(POL_PIN(0), out), 1);
	cr_assert_str_eq(out, "0");
	cr_assert_eq(splitk_label(POL_PIN(12), out), 2);
	cr_assert_str_eq(out, "12");
	cr_assert_eq(splitk_label(POL_PIN(UINT32_MAX), out), 10);
	cr_assert_str_eq(out, "4294967295");
}

/* ------------------------------------------------------------ resolve */

struct resolve_case {
	const char *declared;
	const char *override; /* NULL: unset */
	const char *label;
	bool from_override;
};

static const struct resolve_case resolve_cases[] = {
	{"auto", NULL, "auto", false},
	{"legacy", NULL, "legacy", false},
	{"auto", "legacy", "legacy", true},
	{"legacy", "auto", "auto", true},
	{"legacy", "4", "4", true},
	{"auto", "off", "1", true},
	{"auto", "99", "16", true},
	{"auto", "atuo", "auto", false},        /* a typo keeps the declaration */
	{"legacy", "", "legacy", false},         /* set but empty: does not parse */
	{"auto", "   ", "auto", false},
	{"auto", "-1", "auto", false},
	{"auto", "4294967296", "auto", false},
	{"auto", " AUTO ", "auto", true},
	{"nonsense", NULL, "legacy", false},     /* a bad declaration is legacy */
	{"nonsense", "auto", "auto", true},
	{"nonsense", "bogus", "legacy", false},
	{"", NULL, "legacy", false},
	{"8", NULL, "8", false},
	{"0", "legacy", "legacy", true},
};

Test(splitk_resolve, table)
{
	for (size_t i = 0; i < sizeof(resolve_cases) / sizeof(resolve_cases[0]); i++) {
		const struct resolve_case *c = &resolve_cases[i];
		struct splitk_resolved r = splitk_resolve(
			c->declared, strlen(c->declared), c->override,
			c->override != NULL ? strlen(c->override) : 0);
		char label[SPLITK_LABEL_MAX];

		splitk_label(r.policy, label);
		cr_expect_str_eq(label, c->label, "case %zu (%s, %s)", i, c->declared,
				 c->override ? c->override : "unset");
		cr_expect_eq(r.from_override, c->from_override, "case %zu", i);
	}
}

/* ---------------------------------------------------- the seed's receipts */

/* #928: Qwen3.8-27B (24 q heads) on a 132-SM H100 at --max-batch-size 16. */
Test(receipts, issue_928_legacy_is_one_split_at_every_batch_size)
{
	for (uint32_t num_seqs = 1; num_seqs <= 16; num_seqs++) {
		uint32_t ref = splitk_split_ref_seqs(num_seqs, 16);

		cr_assert_eq(ref, 16);
		cr_assert_eq(splitk_num_splits(POL_LEGACY, 132, 24, ref), 1, "C=%u", num_seqs);
	}
	/* and the 24 CTAs on 132 SMs it launched at C=1 */
	cr_assert_eq(24u * splitk_num_splits(POL_LEGACY, 132, 24, 16), 24);
}

Test(receipts, issue_928_auto_gives_eleven)
{
	cr_assert_eq(splitk_auto_splits(132, 24), 11); /* ceil(264 / 24) */
	cr_assert_eq(splitk_num_splits(POL_AUTO, 132, 24, 16), 11);
	/* 16 rows * 24 heads * 11 splits */
	cr_assert_eq(splitk_workspace_slots(POL_AUTO, 132, 24, 16, 16), 4224);
}

Test(receipts, gb10_legacy_48_sms)
{
	cr_assert_eq(splitk_num_splits(POL_LEGACY, 48, 24, 16), 1);
	cr_assert_eq(splitk_workspace_slots(POL_LEGACY, 48, 24, 16, 16), 48);
	/* a single stream on gb10 under legacy: 48 / 24 = 2 */
	cr_assert_eq(splitk_legacy_splits(48, 24, 1), 2);
}

Test(receipts, b200_fits_under_the_cap)
{
	cr_assert_eq(splitk_auto_splits(148, 24), 13); /* 2*148/24 = 12.33 -> 13 */
	cr_assert_leq(splitk_auto_splits(148, 24), SPLITK_MAX_DECODE_SPLITS);
}

/* The header's constants by what they do, so a header that says one
 * thing while the rules use another fails here. That they are the seed's
 * own values (2 and 16) the crosscheck compares, with the seed compiled. */
Test(receipts, constants_are_the_ones_the_rules_use)
{
	char label[SPLITK_LABEL_MAX + 8];

	/* the cap: auto and pinned reach it and never pass it */
	cr_assert_eq(splitk_auto_splits(UINT32_MAX, 1), SPLITK_MAX_DECODE_SPLITS);
	cr_assert_eq(splitk_num_splits(POL_PIN(UINT32_MAX), 1, 1, 1), SPLITK_MAX_DECODE_SPLITS);
	cr_assert_eq(splitk_num_splits(POL_PIN(SPLITK_MAX_DECODE_SPLITS - 1), 1, 1, 1),
		     SPLITK_MAX_DECODE_SPLITS - 1);
	/* the waves: where auto is not clamped, its count is the fewest splits
	 * that put WAVES * sm_count CTAs on the device */
	for (uint32_t sm = 1; sm <= 300; sm++) {
		for (uint32_t heads = 1; heads <= 160; heads++) {
			uint64_t s = splitk_auto_splits(sm, heads), want = SPLITK_TARGET_WAVES * (uint64_t)sm;

			if (s > 1 && s < SPLITK_MAX_DECODE_SPLITS) {
				cr_assert_geq(heads * s, want, "sm %u heads %u", sm, heads);
				cr_assert_lt(heads * (s - 1), want, "sm %u heads %u", sm, heads);
			}
		}
	}
	/* the label: the longest is the largest count, and it fits */
	cr_assert_eq(splitk_label(POL_PIN(UINT32_MAX), label), SPLITK_LABEL_MAX - 1);
	cr_assert_str_eq(label, "4294967295");
}

/* ------------------------------------------------------------- clamps */

Test(clamps, auto_clamps_to_sixteen_and_one)
{
	cr_assert_eq(splitk_auto_splits(132, 1), 16); /* MQA: 264 splits wanted */
	cr_assert_eq(splitk_auto_splits(132, 8), 16); /* 33 wanted */
	cr_assert_eq(splitk_auto_splits(1, 1024), 1);  /* ceil(2/1024) = 1 */
	cr_assert_eq(splitk_auto_splits(0, 0), 2);     /* both raised to 1 */
	cr_assert_eq(splitk_auto_splits(UINT32_MAX, 1), 16);
	cr_assert_eq(splitk_auto_splits(UINT32_MAX, UINT32_MAX), 1); /* saturated 2*sm */
}

Test(clamps, pinned_clamps_to_one_through_sixteen)
{
	cr_assert_eq(splitk_num_splits(POL_PIN(0), 132, 24, 1), 1);
	cr_assert_eq(splitk_num_splits(POL_PIN(1), 132, 24, 1), 1);
	cr_assert_eq(splitk_num_splits(POL_PIN(16), 132, 24, 1), 16);
	cr_assert_eq(splitk_num_splits(POL_PIN(17), 132, 24, 1), 16);
	cr_assert_eq(splitk_num_splits(POL_PIN(UINT32_MAX), 132, 24, 1), 16);
}

Test(clamps, legacy_guards)
{
	cr_assert_eq(splitk_legacy_splits(0, 0, 0), 1);
	cr_assert_eq(splitk_legacy_splits(132, 0, 0), 132);
	cr_assert_eq(splitk_legacy_splits(UINT32_MAX, UINT32_MAX, UINT32_MAX), 1);
	cr_assert_eq(splitk_legacy_splits(UINT32_MAX, 65536, 65536), 1); /* saturates */
}

/* ---------------------------------------------------------- workspace */

Test(workspace, legacy_is_sm_count)
{
	for (uint32_t sm = 0; sm <= 300; sm++) {
		for (uint32_t rows = 0; rows <= 64; rows += 7) {
			cr_assert_eq(splitk_workspace_slots(POL_LEGACY, sm, 24, rows, rows),
				     sm < 1 ? 1 : sm);
		}
	}
}

Test(workspace, legacy_bound_covers_every_batch)
{
	/* The seed's argument for keeping the old arena: under legacy,
	 * num_seqs * heads * splits <= sm_count whenever the rule splits. */
	for (uint32_t sm = 1; sm <= 170; sm++) {
		for (uint32_t h = 1; h <= 64; h++) {
			for (uint32_t seqs = 1; seqs <= 16; seqs++) {
				uint32_t s = splitk_legacy_splits(sm, h, seqs);

				if (s > 1) {
					cr_assert_leq((uint64_t)seqs * h * s, sm);
				}
			}
		}
	}
}

Test(workspace, saturates_instead_of_wrapping)
{
	cr_assert_eq(splitk_workspace_slots(POL_AUTO, 132, 65536, 65536, 1), UINT32_MAX);
	cr_assert_eq(splitk_workspace_slots(POL_PIN(16), 1, UINT32_MAX, 2, 1), UINT32_MAX);
	cr_assert_eq(splitk_workspace_slots(POL_PIN(16), 1, 0, 0, 0), 16);
}

/* The exact byte count against the compiler's own 128-bit arithmetic:
 * the edges of both operands and a sweep between them, so a carry lost
 * between the two 64-bit halves shows. */
__extension__ typedef unsigned __int128 u128; /* the oracle: GCC's own, not ISO C */

static void assert_bytes(uint32_t slots, uint32_t head_dim)
{
	struct splitk_bytes b = splitk_workspace_bytes(slots, head_dim);
	u128 want = (u128)slots * ((u128)head_dim + 2) * 4;

	cr_assert(b.known, "%u x %u", slots, head_dim);
	cr_assert_eq(b.hi, (uint64_t)(want >> 64), "%u x %u", slots, head_dim);
	cr_assert_eq(b.lo, (uint64_t)want, "%u x %u", slots, head_dim);
}

Test(workspace, bytes_are_exact_past_2_to_the_64)
{
	static const uint32_t edges[] = {1, 2, 3, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, UINT32_MAX};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		for (size_t j = 0; j < sizeof(edges) / sizeof(edges[0]); j++) {
			assert_bytes(edges[i], edges[j]);
		}
	}
	for (uint64_t s = 1; s <= UINT32_MAX; s = s * 3 + 1) {
		for (uint64_t h = 1; h <= UINT32_MAX; h = h * 5 + 3) {
			assert_bytes((uint32_t)s, (uint32_t)h);
		}
	}
	/* the largest: (2^32 - 1) * (2^32 + 1) * 4, past 2^66 */
	cr_assert_eq(splitk_workspace_bytes(UINT32_MAX, UINT32_MAX).hi, 3);
	/* the seed's worked example: 4224 slots of (128 + 2) floats */
	cr_assert_eq(splitk_workspace_bytes(4224, 128).lo, 4224u * 130u * 4u);
	cr_assert_eq(splitk_workspace_bytes(4224, 128).hi, 0);
}

Test(workspace, bytes_unknown_without_a_head_dim)
{
	struct splitk_bytes b = splitk_workspace_bytes(4224, 0);

	cr_assert(!b.known);
	cr_assert_eq(b.hi, 0);
	cr_assert_eq(b.lo, 0);
}

Test(splitk_kind_name, every_kind_once)
{
	cr_assert_str_eq(splitk_kind_name(SPLITK_LEGACY), "legacy");
	cr_assert_str_eq(splitk_kind_name(SPLITK_AUTO), "auto");
	cr_assert_str_eq(splitk_kind_name(SPLITK_PINNED), "pinned");
	cr_assert_str_eq(splitk_kind_name((enum splitk_kind)3), "unknown");
}

/* ------------------------------------------------------- determinism */

Test(determinism, the_auto_split_count_does_not_move_with_the_co_batched_count)
{
	const struct splitk_policy ps[] = {POL_AUTO, POL_PIN(1), POL_PIN(3), POL_PIN(16),
					   POL_PIN(40)};

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		for (uint32_t sm = 1; sm <= 200; sm += 7) {
			for (uint32_t h = 1; h <= 128; h += 5) {
				for (uint32_t max_batch = 1; max_batch <= 64; max_batch *= 2) {
					uint32_t first = splitk_num_splits(
						ps[i], sm, h, splitk_split_ref_seqs(1, max_batch));
					uint32_t slots = splitk_workspace_slots(
						ps[i], sm, h, max_batch, splitk_split_ref_seqs(1, max_batch));

					for (uint32_t seqs = 1; seqs <= max_batch; seqs++) {
						uint32_t ref = splitk_split_ref_seqs(seqs, max_batch);

						cr_assert_eq(splitk_num_splits(ps[i], sm, h, ref), first);
						cr_assert_eq(splitk_workspace_slots(ps[i], sm, h, max_batch, ref),
							     slots);
					}
				}
			}
		}
	}
}

Test(determinism, legacy_does_move_beyond_max_batch)
{
	/* The legacy rule reads num_seqs once it exceeds the max batch: this is
	 * the dependence the seed keeps verbatim, shown so it is not lost. */
	cr_assert_eq(splitk_num_splits(POL_LEGACY, 132, 8, splitk_split_ref_seqs(1, 1)), 16);
	cr_assert_eq(splitk_num_splits(POL_LEGACY, 132, 8, splitk_split_ref_seqs(4, 1)), 4);
}

/* ------------------------------------------ sweeps against the formulas */

Test(sweep, auto_matches_formula)
{
	for (uint64_t sm = 0; sm <= 400; sm++) {
		for (uint64_t h = 0; h <= 300; h++) {
			uint64_t s = sm < 1 ? 1 : sm, hh = h < 1 ? 1 : h;
			uint64_t want = (2 * s + hh - 1) / hh;

			want = want < 1 ? 1 : (want > 16 ? 16 : want);
			cr_assert_eq(splitk_auto_splits((uint32_t)sm, (uint32_t)h), want, "%lu %lu",
				     (unsigned long)sm, (unsigned long)h);
		}
	}
}

Test(sweep, legacy_matches_formula)
{
	for (uint64_t sm = 0; sm <= 200; sm++) {
		for (uint64_t h = 0; h <= 70; h++) {
			for (uint64_t r = 0; r <= 20; r++) {
				uint64_t ctas = (h < 1 ? 1 : h) * (r < 1 ? 1 : r);
				uint64_t want = ctas >= sm ? 1 : sm / ctas;

				cr_assert_eq(splitk_legacy_splits((uint32_t)sm, (uint32_t)h, (uint32_t)r),
					     want);
			}
		}
	}
}

Test(sweep, workspace_matches_formula)
{
	const struct splitk_policy ps[] = {POL_AUTO, POL_PIN(0), POL_PIN(5), POL_PIN(16),
					   POL_PIN(99)};

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		for (uint64_t sm = 0; sm <= 180; sm += 3) {
			for (uint64_t h = 0; h <= 130; h += 3) {
				for (uint64_t rows = 0; rows <= 1100; rows += 37) {
					uint64_t splits = splitk_num_splits(ps[i], (uint32_t)sm,
									    (uint32_t)h, 1);
					uint64_t want = (rows < 1 ? 1 : rows) * (h < 1 ? 1 : h) * splits;

					cr_assert_eq(splitk_workspace_slots(ps[i], (uint32_t)sm,
									    (uint32_t)h, (uint32_t)rows, 1),
						     want > UINT32_MAX ? UINT32_MAX : want);
				}
			}
		}
	}
}

Test(sweep, split_ref_seqs_is_the_larger)
{
	for (uint32_t a = 0; a <= 64; a++) {
		for (uint32_t b = 0; b <= 64; b++) {
			cr_assert_eq(splitk_split_ref_seqs(a, b), a > b ? a : b);
		}
	}
	cr_assert_eq(splitk_split_ref_seqs(UINT32_MAX, 0), UINT32_MAX);
}

/* ------------------------------------------------------------- terms */

/* The terms are the count's own arithmetic: the same count as
 * splitk_num_splits, and the clamp applied to the value before it. */
Test(terms, agree_with_num_splits_over_a_sweep)
{
	static const uint32_t edges[] = {0, 1, 2, 3, 23, 24, 47, 48, 132, 148, 1000, 65536,
					 2147483647u, 2147483648u, 3000000000u, 4294967294u, 4294967295u};
	const size_t n = sizeof(edges) / sizeof(edges[0]);
	const struct splitk_policy pols[] = {POL_LEGACY, POL_AUTO, POL_PIN(0), POL_PIN(9), POL_PIN(99)};

	for (size_t p = 0; p < 5; p++) {
		for (size_t a = 0; a < n; a++) {
			for (size_t b = 0; b < n; b++) {
				for (size_t c = 0; c < n; c += 4) {
					struct splitk_terms t = splitk_split_terms(pols[p], edges[a], edges[b], edges[c]);
					uint32_t want = splitk_num_splits(pols[p], edges[a], edges[b], edges[c]);
					uint32_t clamped = t.unclamped < 1 ? 1 : t.unclamped > 16 ? 16 : t.unclamped;

					cr_assert_eq(t.kind, pols[p].kind);
					cr_assert_eq(t.num_splits, want, "policy %zu sm %u heads %u", p, edges[a], edges[b]);
					cr_assert_eq(t.num_splits, pols[p].kind == SPLITK_LEGACY ? t.unclamped : clamped);
				}
			}
		}
	}
}

/* issue 9: 2 * 4294967295 saturates at u32, so ceil(4294967295 / 3e9) = 2;
 * in 64 bits it would be ceil(8589934590 / 3e9) = 3. */
Test(terms, auto_saturates_as_the_seed_does)
{
	struct splitk_terms t = splitk_split_terms(POL_AUTO, 4294967295u, 3000000000u, 1);

	cr_assert_eq(t.product, UINT32_MAX);
	cr_assert(t.saturated);
	cr_assert_eq(t.unclamped, 2);
	cr_assert_eq(t.num_splits, 2);
	t = splitk_split_terms(POL_AUTO, 132, 24, 1);
	cr_assert_eq(t.product, 264);
	cr_assert_not(t.saturated);
	cr_assert_eq(t.unclamped, 11);
}

Test(terms, pinned_and_legacy)
{
	struct splitk_terms t = splitk_split_terms(POL_PIN(99), 132, 24, 1);

	cr_assert_eq(t.unclamped, 99);
	cr_assert_eq(t.num_splits, 16);
	t = splitk_split_terms(POL_PIN(0), 132, 24, 1);
	cr_assert_eq(t.unclamped, 0);
	cr_assert_eq(t.num_splits, 1);
	/* legacy on an H100 at --max-batch-size 16: 24 * 16 = 384 CTAs >= 132 */
	t = splitk_split_terms(POL_LEGACY, 132, 24, 16);
	cr_assert_eq(t.product, 384);
	cr_assert_eq(t.num_splits, 1);
	t = splitk_split_terms(POL_LEGACY, 132, 8, 1); /* 132 / 8 */
	cr_assert_eq(t.product, 8);
	cr_assert_eq(t.num_splits, 16);
	t = splitk_split_terms(POL_LEGACY, 4294967295u, 65536, 65536);
	cr_assert(t.saturated);
	cr_assert_eq(t.num_splits, 1);
}

/* splitk_resolve_detail is splitk_resolve, and says what it read. */
Test(terms, resolve_detail_says_what_it_read)
{
	static const char *const spellings[] = {"auto", "legacy", "99", "off", "atuo", "", " 4 ", NULL};

	for (size_t a = 0; spellings[a] != NULL; a++) {
		for (size_t b = 0; b <= 7; b++) {
			const char *d = spellings[a], *o = spellings[b];
			size_t olen = o ? strlen(o) : 0;
			struct splitk_resolution r = splitk_resolve_detail(d, strlen(d), o, olen);
			struct splitk_resolved want = splitk_resolve(d, strlen(d), o, olen);
			struct splitk_policy p;
			uint32_t req = 0;

			cr_assert_eq(r.resolved.policy.kind, want.policy.kind, "%s / %s", d, o ? o : "unset");
			cr_assert_eq(r.resolved.policy.pinned, want.policy.pinned);
			cr_assert_eq(r.resolved.from_override, want.from_override);
			cr_assert_eq(r.declared_parses, splitk_parse_requested(d, strlen(d), &p, &req));
			cr_assert_eq(r.declared.kind, r.declared_parses ? p.kind : SPLITK_LEGACY);
			cr_assert_eq(r.declared_requested, r.declared_parses ? req : 0);
			cr_assert_eq(r.override_parses, want.from_override);
		}
	}
	cr_assert_eq(splitk_resolve_detail("auto", 4, "99", 2).override_requested, 99);
	cr_assert_eq(splitk_resolve_detail("99", 2, NULL, 0).declared_requested, 99);
}

/* ------------------------------------------ the rule at other constants */

/*
 * The core at constants other than the seed's (a catalog's
 * splitk_target_waves and max_decode_splits), against the formulas
 * written out again in 64-bit arithmetic (u128 for the
 * workspace's three-factor product and its bytes), over random inputs from
 * a seeded PRNG. The seed is printed with every failure; set
 * SPLITK_PROPERTY_SEED to replay one (or to try another).
 */
#define PROPERTY_CASES 200000u

/* splitmix64: small, and the same sequence on every platform */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* A u32 that often sits where the rule turns: an edge, a small number, or
 * a random magnitude (uniform bit length, then uniform below it). */
static uint32_t random_u32(uint64_t *state)
{
	static const uint32_t edges[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 48, 64, 65, 132, 148,
					 1023, 1024, 1025, 65535, 65536, 2147483648u,
					 UINT32_MAX - 1, UINT32_MAX};
	uint64_t r = next_random(state);

	switch (r % 4) {
	case 0:
		return edges[(r >> 8) % (sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return (uint32_t)((r >> 8) % 300);
	default: {
		unsigned bits = (unsigned)((r >> 8) % 33);

		return bits == 0 ? 0 : (uint32_t)(next_random(state) >> (64 - bits));
	}
	}
}

/* The constants of case i: the issue's 4 and 32, the seed's, the corners of
 * the bounds, then random valid pairs across them. */
static struct splitk_constants case_constants(uint64_t i, uint64_t *state)
{
	static const struct splitk_constants fixed[] = {
		{4, 32}, {2, 16}, {1, 1}, {1, SPLITK_MAX_DECODE_SPLITS_MAX},
		{SPLITK_TARGET_WAVES_MAX, 1}, {SPLITK_TARGET_WAVES_MAX, SPLITK_MAX_DECODE_SPLITS_MAX},
	};
	struct splitk_constants k;
	size_t n = sizeof(fixed) / sizeof(fixed[0]);

	if (i % 8 < n) {
		return fixed[i % 8];
	}
	k.target_waves = 1 + (uint32_t)(next_random(state) % SPLITK_TARGET_WAVES_MAX);
	k.max_decode_splits = 1 + (uint32_t)(next_random(state) % SPLITK_MAX_DECODE_SPLITS_MAX);
	return k;
}

/* the workspace's three factors and its bytes pass 2^64 */
__extension__ typedef unsigned __int128 u128;

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t clamp64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* The seed's rules at constants k, in 64 bits; u32 saturation where the
 * seed's u32::saturating_mul has it. */
static uint64_t want_auto(struct splitk_constants k, uint64_t sm, uint64_t heads)
{
	uint64_t target = (uint64_t)k.target_waves * max64(sm, 1);

	target = target > UINT32_MAX ? UINT32_MAX : target;
	return clamp64((target + max64(heads, 1) - 1) / max64(heads, 1), 1, k.max_decode_splits);
}

static uint64_t want_legacy(uint64_t sm, uint64_t heads, uint64_t ref)
{
	uint64_t ctas = max64(heads, 1) * max64(ref, 1);

	ctas = ctas > UINT32_MAX ? UINT32_MAX : ctas;
	return ctas >= sm ? 1 : sm / ctas;
}

static uint64_t want_splits(struct splitk_constants k, struct splitk_policy p, uint64_t sm,
			    uint64_t heads, uint64_t ref)
{
	switch (p.kind) {
	case SPLITK_LEGACY:
		return want_legacy(sm, heads, ref);
	case SPLITK_AUTO:
		return want_auto(k, sm, heads);
	case SPLITK_PINNED:
		break;
	}
	return clamp64(p.pinned, 1, k.max_decode_splits);
}

static uint64_t want_slots(struct splitk_constants k, struct splitk_policy p, uint64_t sm,
			   uint64_t heads, uint64_t rows, uint64_t ref)
{
	u128 slots;

	if (p.kind == SPLITK_LEGACY) {
		return max64(sm, 1);
	}
	slots = (u128)max64(rows, 1) * max64(heads, 1) * want_splits(k, p, sm, heads, ref);
	return slots > UINT32_MAX ? UINT32_MAX : (uint64_t)slots;
}

/* Fails the test with the seed, the case (`seed` and `i` where it is
 * used) and its inputs, formatted by the printf arguments that follow. */
#define PROPERTY_EQ(got, want, ...) PROPERTY_EQ_(got, want, __VA_ARGS__)
#define PROPERTY_EQ_(got, want, what, ...)                                                       \
	do {                                                                                      \
		uint64_t got_ = (got), want_ = (want);                                            \
		if (got_ != want_) {                                                              \
			char inputs_[256];                                                        \
			snprintf(inputs_, sizeof(inputs_), __VA_ARGS__);                          \
			cr_assert_fail("seed %llu (SPLITK_PROPERTY_SEED=%llu replays it), case %llu: %s: " \
				 "got %llu, want %llu; %s",                                       \
				 (unsigned long long)seed, (unsigned long long)seed,              \
				 (unsigned long long)i, what, (unsigned long long)got_,           \
				 (unsigned long long)want_, inputs_);                             \
		}                                                                                 \
	} while (0)

static uint64_t property_seed(void)
{
	const char *env = getenv("SPLITK_PROPERTY_SEED");

	return env != NULL && *env != '\0' ? strtoull(env, NULL, 0) : 0x28c0ffee5eedull;
}

Test(constants, the_core_at_other_constants_is_the_formula_in_64_bits)
{
	uint64_t seed = property_seed(), state = seed;

	for (uint64_t i = 0; i < PROPERTY_CASES; i++) {
		struct splitk_constants k = case_constants(i, &state);
		uint32_t sm = random_u32(&state), heads = random_u32(&state);
		uint32_t rows = random_u32(&state), ref = random_u32(&state), n = random_u32(&state);
		uint32_t head_dim = random_u32(&state);
		const struct splitk_policy pols[] = {POL_AUTO, POL_LEGACY, POL_PIN(n)};

		for (size_t p = 0; p < 3; p++) {
			uint64_t splits = want_splits(k, pols[p], sm, heads, ref);
			uint64_t slots = want_slots(k, pols[p], sm, heads, rows, ref);
			struct splitk_launch l =
				splitk_launch_with(k, pols[p], sm, heads, rows, ref);
			struct splitk_terms t = splitk_split_terms_with(k, pols[p], sm, heads, ref);
			struct splitk_bytes b = splitk_workspace_bytes(l.workspace_slots, head_dim);
			u128 bytes = (u128)slots * ((uint64_t)head_dim + 2) * 4;

#define ARGS(what)                                                                               \
	what, "k {%u, %u}, policy %d/%u, sm %u, heads %u, rows %u, ref %u, head_dim %u",          \
		k.target_waves, k.max_decode_splits, (int)pols[p].kind, n, sm, heads, rows, ref,  \
		head_dim
			PROPERTY_EQ(splitk_num_splits_with(k, pols[p], sm, heads, ref), splits, ARGS("num_splits"));
			PROPERTY_EQ(l.num_splits, splits, ARGS("launch num_splits"));
			PROPERTY_EQ(t.num_splits, splits, ARGS("terms num_splits"));
			PROPERTY_EQ(splitk_workspace_slots_with(k, pols[p], sm, heads, rows, ref), slots,
				    ARGS("workspace_slots"));
			PROPERTY_EQ(l.workspace_slots, slots, ARGS("launch workspace_slots"));
			PROPERTY_EQ(b.known, head_dim != 0, ARGS("bytes known"));
			PROPERTY_EQ(b.lo, head_dim != 0 ? (uint64_t)bytes : 0, ARGS("bytes lo"));
			PROPERTY_EQ(b.hi, head_dim != 0 ? (uint64_t)(bytes >> 64) : 0, ARGS("bytes hi"));
			if (pols[p].kind == SPLITK_AUTO) {
				uint64_t product = (uint64_t)k.target_waves * max64(sm, 1);

				PROPERTY_EQ(t.product, product > UINT32_MAX ? UINT32_MAX : product,
					    ARGS("auto product"));
				PROPERTY_EQ(t.saturated, product > UINT32_MAX, ARGS("auto saturated"));
				PROPERTY_EQ(splitk_auto_splits_with(k, sm, heads), splits, ARGS("auto_splits"));
			}
			/* at the seed's constants, the functions without _with, bit for bit */
			if (k.target_waves == SPLITK_TARGET_WAVES &&
			    k.max_decode_splits == SPLITK_MAX_DECODE_SPLITS) {
				PROPERTY_EQ(splitk_num_splits(pols[p], sm, heads, ref), splits, ARGS("seed num_splits"));
				PROPERTY_EQ(splitk_workspace_slots(pols[p], sm, heads, rows, ref), slots,
					    ARGS("seed workspace_slots"));
			}
#undef ARGS
		}
	}
}

/* A declared spelling and an override spelling of a count clamp to
 * 1..max_decode_splits (0/off/false/no and 0 are 1), keep the count as
 * written, and the override wins; written with the forms the seed's parse
 * takes (a '+', leading zeros, white space around). */
Test(constants, declared_and_override_counts_clamp_to_max_decode_splits)
{
	uint64_t seed = property_seed() ^ 0xdec1a5ed, state = seed;

	for (uint64_t i = 0; i < PROPERTY_CASES; i++) {
		struct splitk_constants k = case_constants(i, &state);
		uint32_t d = random_u32(&state), o = random_u32(&state);
		uint64_t form = next_random(&state);
		char ds[32], os[32];
		int dl = snprintf(ds, sizeof(ds), "%s%s%u ", form & 1 ? " +" : "", form & 2 ? "00" : "", d);
		int ol = snprintf(os, sizeof(os), "%s%u", form & 4 ? "\t" : "", o);
		struct splitk_resolution r = splitk_resolve_detail_with(k, ds, (size_t)dl, os, (size_t)ol);
		struct splitk_resolution rr =
			splitk_resolve_read_with(k, r.declared, r.declared_requested, os, (size_t)ol);
		struct splitk_policy p = {SPLITK_LEGACY, 0};
		uint32_t requested = 7;

#define ARGS(what)                                                                       \
	what, "k {%u, %u}, declared \"%s\", override \"%s\"", k.target_waves, k.max_decode_splits, \
		ds, os
		PROPERTY_EQ(splitk_parse_requested_with(k, ds, (size_t)dl, &p, &requested), 1, ARGS("parses"));
		PROPERTY_EQ(p.kind, SPLITK_PINNED, ARGS("kind"));
		PROPERTY_EQ(p.pinned, clamp64(d, 1, k.max_decode_splits), ARGS("declared pinned"));
		PROPERTY_EQ(requested, d, ARGS("declared requested"));
		PROPERTY_EQ(r.declared_parses && r.override_parses && r.resolved.from_override, 1,
			    ARGS("the override parses and wins"));
		PROPERTY_EQ(r.declared.pinned, clamp64(d, 1, k.max_decode_splits), ARGS("resolved declared"));
		PROPERTY_EQ(r.override.pinned, clamp64(o, 1, k.max_decode_splits), ARGS("resolved override"));
		PROPERTY_EQ(r.resolved.policy.pinned, clamp64(o, 1, k.max_decode_splits), ARGS("resolved"));
		PROPERTY_EQ(r.override_requested, o, ARGS("override requested"));
		PROPERTY_EQ(rr.resolved.policy.pinned, r.resolved.policy.pinned, ARGS("resolve_read"));
		PROPERTY_EQ(rr.declared.pinned, r.declared.pinned, ARGS("resolve_read declared"));
		PROPERTY_EQ(splitk_num_splits_with(k, r.resolved.policy, 1, 1, 1),
			    clamp64(o, 1, k.max_decode_splits), ARGS("pinned count"));
#undef ARGS
	}
}

/* The bounds, at their edges: 0 and past the bound are not valid; what the
 * functions read for them is the seed's value and the bound. */
Test(constants, the_bounds_at_their_edges)
{
	static const struct {
		struct splitk_constants k, read;
		bool valid;
	} cases[] = {
		{{2, 16}, {2, 16}, true},
		{{1, 1}, {1, 1}, true},
		{{64, 1024}, {64, 1024}, true},
		{{0, 16}, {2, 16}, false},
		{{2, 0}, {2, 16}, false},
		{{0, 0}, {2, 16}, false},
		{{65, 16}, {64, 16}, false},
		{{2, 1025}, {2, 1024}, false},
		{{UINT32_MAX, UINT32_MAX}, {64, 1024}, false},
	};
	const struct splitk_constants seed = SPLITK_SEED_CONSTANTS;

	cr_assert_eq(seed.target_waves, SPLITK_TARGET_WAVES);
	cr_assert_eq(seed.max_decode_splits, SPLITK_MAX_DECODE_SPLITS);
	cr_assert_eq(SPLITK_TARGET_WAVES_MAX, 64);
	cr_assert_eq(SPLITK_MAX_DECODE_SPLITS_MAX, 1024);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct splitk_constants r = splitk_constants_read(cases[i].k);

		cr_assert_eq(splitk_constants_valid(cases[i].k), cases[i].valid, "case %zu", i);
		cr_assert_eq(r.target_waves, cases[i].read.target_waves, "case %zu", i);
		cr_assert_eq(r.max_decode_splits, cases[i].read.max_decode_splits, "case %zu", i);
		/* the functions compute with what splitk_constants_read says */
		cr_assert_eq(splitk_auto_splits_with(cases[i].k, 132, 1),
			     splitk_auto_splits_with(r, 132, 1), "case %zu", i);
		cr_assert_eq(splitk_num_splits_with(cases[i].k, POL_PIN(UINT32_MAX), 1, 1, 1),
			     r.max_decode_splits, "case %zu", i);
	}
	/* the issue's example at 4 waves and a cap of 32: ceil(4 * 132 / 24) = 22 */
	cr_assert_eq(splitk_auto_splits_with((struct splitk_constants){4, 32}, 132, 24), 22);
	cr_assert_eq(splitk_workspace_slots_with((struct splitk_constants){4, 32}, POL_AUTO, 132, 24, 16, 16),
		     16 * 24 * 22);
	cr_assert_eq(splitk_auto_splits_with((struct splitk_constants){4, 32}, 132, 1), 32);
}
