/* SPDX-License-Identifier: AGPL-3.0-only */
#include "fnv.h"

#define FNV_PRIME 0x100000001b3u

uint64_t fnv_add(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

uint64_t fnv_hash(const void *p, size_t n)
{
	return fnv_add(FNV_OFFSET, p, n);
}
