/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * etag_of: the tag replicas agree on. A tag splitkd has served is pinned,
 * and every length from 0 to 40 bytes (each tail length, one and several
 * words) agrees with the hash written byte by byte, as the header
 * describes it: little-endian words on any host.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "etag.h"

/* The same hash, each word assembled from bytes: the portable reference. */
static uint64_t reference(const unsigned char *p, size_t len)
{
	uint64_t h = 0x9E3779B97F4A7C15u ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		w = 0;
		for (int b = 7; b >= 0; b--) {
			w = w << 8 | p[i + (size_t)b];
		}
		h = (h ^ w) * 0xBF58476D1CE4E5B9u;
		h ^= h >> 31;
	}
	w = 0;
	for (size_t b = len; b > i; b--) {
		w = w << 8 | p[b - 1];
	}
	h = (h ^ w) * 0x94D049BB133111EBu;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDu;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53u;
	h ^= h >> 33;
	return h;
}

Test(etag, a_served_tag_stays_the_same)
{
	/* GET /v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&fields=num_splits,workspace_bytes
	 * as splitkd 0.1.0 tagged it before the hash's load was rewritten */
	const char *body = "{\"num_splits\":11,\"workspace_bytes\":null}";
	char tag[ETAG_MAX];

	etag_of(body, strlen(body), tag);
	cr_assert_str_eq(tag, "\"03c00d7c7a0111e8\"");
}

Test(etag, every_length_agrees_with_the_bytewise_hash)
{
	unsigned char body[41];

	for (size_t i = 0; i < sizeof(body); i++) {
		body[i] = (unsigned char)(0x80u + i * 37u); /* high bits too: no sign trouble */
	}
	for (size_t len = 0; len <= 40; len++) {
		char tag[ETAG_MAX], want[ETAG_MAX];

		etag_of((const char *)body, len, tag);
		snprintf(want, sizeof(want), "\"%016llx\"", (unsigned long long)reference(body, len));
		cr_assert_str_eq(tag, want, "length %zu", len);
	}
}
