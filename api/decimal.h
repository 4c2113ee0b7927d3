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

/* A plain decimal from 1 to 4294967295: ASCII digits only, no sign, no
 * leading zero, no spaces. Returns true and sets *out, or returns false for
 * anything else and leaves *out alone. */
bool decimal_parse_u32(const char *s, size_t len, uint32_t *out);

/* Room for the decimal digits of a 128-bit value (39) and a NUL. */
#define DECIMAL_U128_MAX 40

/* Writes hi * 2^64 + lo in decimal, exactly, and a NUL into out. Returns
 * the number of digits. */
size_t decimal_format_u128(uint64_t hi, uint64_t lo, char out[DECIMAL_U128_MAX]);

#endif /* SPLITKD_DECIMAL_H */
