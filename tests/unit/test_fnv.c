/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * fnv: FNV-1a 64 as its authors publish it (the test vectors of
 * draft-eastlake-fnv), and a hash over pieces equal to the hash of the
 * whole, at every cut: the catalog's digest, the reload's keys and the
 * streams' boots all rest on both.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fnv.h"

static const struct {
	const char *in;
	uint64_t want;
} vectors[] = {
	{"", 0xcbf29ce484222325u},
	{"a", 0xaf63dc4c8601ec8cu},
	{"foobar", 0x85944171f73967e8u},
};

Test(fnv, the_published_vectors)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint64_t got = fnv_hash(vectors[i].in, strlen(vectors[i].in));

		cr_expect_eq(got, vectors[i].want, "\"%s\": %016llx", vectors[i].in,
			     (unsigned long long)got);
	}
}

Test(fnv, pieces_hash_as_the_whole)
{
	const char *s = "a catalog's canonical JSON, or a boot and a name";
	size_t n = strlen(s);
	uint64_t whole = fnv_hash(s, n);

	for (size_t cut = 0; cut <= n; cut++) {
		cr_expect_eq(fnv_add(fnv_add(FNV_OFFSET, s, cut), s + cut, n - cut), whole,
			     "cut at %zu", cut);
	}
	cr_expect_eq(fnv_add(whole, NULL, 0), whole, "nothing added changes nothing");
}
