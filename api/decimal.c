/* SPDX-License-Identifier: AGPL-3.0-only */
#include "decimal.h"

bool decimal_parse_u32(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	/* ten digits at most, so v cannot overflow 64 bits below */
	if (len == 0 || len > 10 || s[0] < '1' || s[0] > '9') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
		v = v * 10u + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

size_t decimal_format_u128(uint64_t hi, uint64_t lo, char out[DECIMAL_U128_MAX])
{
	/* Long division by 10 in 32-bit limbs: exact with no compiler
	 * extension (__int128 is not ISO C). */
	uint32_t limb[4] = {(uint32_t)(hi >> 32), (uint32_t)hi, (uint32_t)(lo >> 32), (uint32_t)lo};
	char rev[DECIMAL_U128_MAX];
	size_t n = 0;
	bool zero;

	do {
		uint64_t rem = 0;

		zero = true;
		for (int i = 0; i < 4; i++) {
			uint64_t cur = (rem << 32) | limb[i];

			limb[i] = (uint32_t)(cur / 10u);
			rem = cur % 10u;
			zero = zero && limb[i] == 0;
		}
		rev[n++] = (char)('0' + rem);
	} while (!zero);
	for (size_t i = 0; i < n; i++) {
		out[i] = rev[n - 1 - i];
	}
	out[n] = '\0';
	return n;
}

#define DECIMAL_ROW(d) d "0" d "1" d "2" d "3" d "4" d "5" d "6" d "7" d "8" d "9"
const char decimal_pairs[200] = DECIMAL_ROW("0") DECIMAL_ROW("1") DECIMAL_ROW("2")
	DECIMAL_ROW("3") DECIMAL_ROW("4") DECIMAL_ROW("5") DECIMAL_ROW("6") DECIMAL_ROW("7")
	DECIMAL_ROW("8") DECIMAL_ROW("9");

/* Decimal digits, most significant first, with no buffer between: the
 * count first, then two digits a step from the end (a division by 100
 * for two, not by 10 for each: the answer's nine numbers were a
 * twentieth of writing it). */
char *decimal_put_u64_long(char *p, uint64_t v)
{
	size_t n = 1;

	for (uint64_t t = v; t >= 10u; t /= 100u) {
		n += t >= 100u ? 2 : 1;
	}
	for (size_t i = n; v >= 10u; v /= 100u) {
		i -= 2;
		memcpy(p + i, decimal_pairs + 2 * (v % 100u), 2);
	}
	if (n % 2 == 1) {
		p[0] = (char)('0' + v);
	}
	return p + n;
}
