/* SPDX-License-Identifier: AGPL-3.0-only */
#include "jsonscan.h"

#include <stdint.h>
#include <string.h>

/* SWAR ("SIMD within a register") byte tests on eight bytes at once, from
 * the classic bit hacks: a lane's high bit is set when that byte is zero,
 * or less than n. Exact for every lane below the first hit, which is all
 * jsonscan_plain_run needs. */
#define ONES 0x0101010101010101u
#define HIGHS 0x8080808080808080u

static uint64_t zero_lanes(uint64_t x)
{
	return (x - ONES) & ~x & HIGHS;
}

static uint64_t less_lanes(uint64_t x, unsigned char n)
{
	return (x - ONES * n) & ~x & HIGHS;
}

/* Whether any of the eight bytes at s is not plain. With ascii_only a
 * lane with its high bit set is a hit anyway, so the "& ~x" that keeps
 * such a lane from posing as zero or small can go: a lane below 0x20
 * borrows into its high bit, one equal to '"' or '\\' does once XORed to
 * zero, and a borrow only ever climbs from a lane that is itself a hit. */
static inline bool any_special(const char *s, bool ascii_only)
{
	uint64_t x;

	memcpy(&x, s, 8);
	if (ascii_only) {
		return ((x | (x - ONES * 0x20) | ((x ^ (ONES * '"')) - ONES) | ((x ^ (ONES * '\\')) - ONES)) &
			HIGHS) != 0;
	}
	return (less_lanes(x, 0x20) | zero_lanes(x ^ (ONES * '"')) | zero_lanes(x ^ (ONES * '\\'))) != 0;
}

size_t jsonscan_plain_run(const char *s, size_t len, bool ascii_only)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		if (any_special(s + i, ascii_only)) {
			break; /* the byte-wise loop below finds which lane */
		}
	}
	/* the last few bytes of a longer string in one more step, the word
	 * ending at the end (it overlaps bytes already seen, which are plain):
	 * most strings are wholly plain, and the tail was half the cost */
	if (i < len && len >= 8 && i + 8 > len && !any_special(s + len - 8, ascii_only)) {
		return len;
	}
	for (; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '\\' || (ascii_only && c >= 0x80)) {
			break;
		}
	}
	return i;
}
