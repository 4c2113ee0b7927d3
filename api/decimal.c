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
