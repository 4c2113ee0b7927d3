/* SPDX-License-Identifier: AGPL-3.0-only */
/* Excerpts of client input for messages: short, whole UTF-8 sequences. */
#include <criterion/criterion.h>
#include <string.h>

#include "quote.h"

Test(quote, short_input_is_copied_whole)
{
	char out[QUOTE_MAX];

	cr_assert_str_eq(quote_excerpt("targt", 5, out, sizeof(out)), "targt");
	cr_assert_str_eq(quote_excerpt("a\0b", 3, out, sizeof(out)), "a"); /* as C sees it */
	cr_assert_eq(memcmp(out, "a\0b", 4), 0);
}

Test(quote, long_input_is_cut_with_an_ellipsis)
{
	char in[200], out[16];

	memset(in, 'x', sizeof(in));
	quote_excerpt(in, sizeof(in), out, sizeof(out));
	cr_assert_eq(strlen(out), 15);
	cr_assert_str_eq(out + 12, "...");
	cr_assert_str_eq(quote_excerpt(in, sizeof(in), out, 1), "");
}

Test(quote, a_cut_never_splits_a_utf8_sequence)
{
	/* U+3000 is three bytes: at every shift one of them straddles the cut */
	for (size_t shift = 0; shift < 3; shift++) {
		char in[64], out[16];
		size_t n = shift;

		memset(in, 'a', shift);
		while (n + 3 <= sizeof(in)) {
			memcpy(in + n, "\xe3\x80\x80", 3);
			n += 3;
		}
		quote_excerpt(in, n, out, sizeof(out));
		cr_assert_str_eq(out + strlen(out) - 3, "...", "shift %zu", shift);
		/* what stands before the ellipsis is shift 'a's and whole U+3000s */
		cr_assert_eq((strlen(out) - 3 - shift) % 3, 0, "shift %zu: %s", shift, out);
	}
}
