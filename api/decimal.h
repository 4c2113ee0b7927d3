/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * decimal — the strict decimal numbers a query string carries: what a
 * parameter such as max_batch_size=16 may look like, and nothing more
 * lenient (no sign, no leading zero, no spaces, no hex, no exponent); and
 * the exact decimal text of a count too large for a JSON number.
 * No allocation; thread-safe (no state).
 */
#ifndef SPLITKD_DECIMAL_H
#define SPLITKD_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A plain decimal from 1 to 4294967295: ASCII digits only, no sign, no
 * leading zero, no spaces. Returns true and sets *out, or returns false for
 * anything else and leaves *out alone. */
bool decimal_parse_u32(const char *s, size_t len, uint32_t *out);

/* Room for the decimal digits of a 128-bit value (39) and a NUL. */
#define DECIMAL_U128_MAX 40

/* Writes hi * 2^64 + lo in decimal, exactly, and a NUL into out. Returns
 * the number of digits. */
size_t decimal_format_u128(uint64_t hi, uint64_t lo, char out[DECIMAL_U128_MAX]);

/* "00" "01" ... "99": n's two digits at decimal_pairs[2 * n], n < 100 */
extern const char decimal_pairs[200];

/* decimal_put_u64 for v of 100 and more. */
char *decimal_put_u64_long(char *p, uint64_t v);

/* Writes v in decimal at p (at most 20 bytes, no NUL) and returns the end.
 * Most of an answer's numbers have one or two digits: those inline, the
 * rest out of line. */
static inline __attribute__((always_inline)) char *decimal_put_u64(char *p, uint64_t v)
{
	if (v < 10u) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100u) {
		memcpy(p, decimal_pairs + 2 * v, 2);
		return p + 2;
	}
	return decimal_put_u64_long(p, v);
}

#endif /* SPLITKD_DECIMAL_H */
