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
