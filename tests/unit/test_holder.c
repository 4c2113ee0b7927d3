/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The catalog holder without a server: a reference outlives a swap, a
 * reader follows swaps and holds one reference between them; and the
 * revisions each swap records (issue 20), newest first, bounded by count
 * and by bytes, a catalog loaded again held once.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "embedded.h"
#include "holder.h"
#include "jsonw.h"

static struct catalog *load(void)
{
	char err[256];
	struct catalog *c =
		catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));

	cr_assert_not_null(c, "embedded catalog: %s", err);
	return c;
}

Test(holder, a_reference_outlives_a_swap)
{
	struct holder h;
	struct catalog *first = load(), *second = load();
	struct holder_ref *old_ref, *new_ref;
	const struct catalog *seen;

	cr_assert_eq(holder_init(&h, first), 0);
	seen = holder_acquire(&h, &old_ref);
	cr_assert_eq(seen, first);
	cr_assert_eq(holder_swap(&h, second), 0);
	cr_assert_eq(atomic_load(&h.generation), 1);
	/* the old catalog is still whole for its reader (ASan and valgrind
	 * would see a use after free here) */
	cr_assert_gt(seen->num_targets, 0);
	cr_assert_eq(holder_acquire(&h, &new_ref), second);
	holder_release(&h, old_ref);
	holder_release(&h, new_ref);
	holder_cleanup(&h);
}

Test(holder, a_reader_follows_swaps)
{
	struct holder h;
	struct holder_reader r = {0};
	struct catalog *cats[3] = {load(), load(), load()};

	cr_assert_eq(holder_init(&h, cats[0]), 0);
	cr_assert_eq(holder_read(&h, &r), cats[0]);
	cr_assert_eq(holder_read(&h, &r), cats[0]);
	for (int i = 1; i < 3; i++) {
		cr_assert_eq(holder_swap(&h, cats[i]), 0);
		cr_assert_eq(holder_read(&h, &r), cats[i], "after swap %d", i);
		cr_assert_eq(r.generation, (unsigned)i);
	}
	holder_reader_cleanup(&h, &r);
	cr_assert_null(r.ref);
	/* the reader can be used again */
	cr_assert_eq(holder_read(&h, &r), cats[2]);
	holder_reader_cleanup(&h, &r);
	holder_cleanup(&h);
}

/* ------------------------------------------------------------ revisions */

/* The embedded catalog with b200's SM count set to sm (a distinct digest each). */
static struct catalog *with_sm(unsigned sm)
{
	const char *at = strstr(embedded_catalog_json, "\"sm_count\": 148");
	char text[1 << 16], err[256];
	size_t head;
	struct catalog *cat;
	int n;

	cr_assert_not_null(at);
	head = (size_t)(at - embedded_catalog_json);
	cr_assert_lt(embedded_catalog_json_len + 16, sizeof(text));
	memcpy(text, embedded_catalog_json, head);
	n = snprintf(text + head, sizeof(text) - head, "\"sm_count\": %u", sm);
	memcpy(text + head + n, at + strlen("\"sm_count\": 148"),
	       embedded_catalog_json_len - head - strlen("\"sm_count\": 148"));
	cat = catalog_load(text, embedded_catalog_json_len - strlen("\"sm_count\": 148") + (size_t)n, err,
			   sizeof(err));
	cr_assert_not_null(cat, "%s", err);
	return cat;
}

static size_t canonical_bytes(const struct catalog *cat)
{
	struct jsonw w;
	size_t n;

	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	n = w.len;
	jsonw_cleanup(&w);
	return n;
}

static void held(struct holder *h, char digests[][CATALOG_DIGEST_LEN + 1], size_t *n)
{
	struct holder_ref *ref;
	const struct revision *revs;

	holder_acquire(h, &ref);
	revs = holder_revisions(ref, n);
	for (size_t i = 0; i < *n; i++) {
		memcpy(digests[i], revs[i].catalog->digest, sizeof(digests[i]));
		cr_assert_not_null(revs[i].loaded_at);
		cr_assert_eq(strlen(revs[i].loaded_at), strlen("2026-01-01T00:00:00Z"));
	}
	holder_release(h, ref);
}

Test(holder, keeps_the_newest_n_newest_first)
{
	struct holder h;
	struct holder_options o = {3, 0, "cat.json"};
	char want[6][CATALOG_DIGEST_LEN + 1], got[HOLDER_MAX_REVISIONS][CATALOG_DIGEST_LEN + 1];
	size_t n;

	for (unsigned i = 0; i < 6; i++) {
		struct catalog *cat = with_sm(140 + i);

		memcpy(want[i], cat->digest, sizeof(want[i]));
		cr_assert_eq(i == 0 ? holder_init_with(&h, cat, &o) : holder_swap(&h, cat), 0);
	}
	held(&h, got, &n);
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(got[i], want[5 - i]);
	}
	holder_cleanup(&h);
}

Test(holder, a_catalog_loaded_again_moves_to_the_front)
{
	struct holder h;
	char a[CATALOG_DIGEST_LEN + 1], got[HOLDER_MAX_REVISIONS][CATALOG_DIGEST_LEN + 1];
	struct catalog *first = with_sm(140);
	struct holder_ref *ref;
	size_t n;

	memcpy(a, first->digest, sizeof(a));
	cr_assert_eq(holder_init(&h, first), 0);
	cr_assert_eq(holder_swap_from(&h, with_sm(141), "other.json"), 0);
	cr_assert_eq(holder_swap(&h, with_sm(140)), 0); /* a rollback */
	held(&h, got, &n);
	cr_assert_eq(n, 2, "held once, not twice");
	cr_assert_str_eq(got[0], a);
	holder_acquire(&h, &ref);
	cr_assert_str_eq(holder_revisions(ref, &n)[1].source, "other.json");
	cr_assert_str_eq(holder_revisions(ref, &n)[0].source, "embedded");
	holder_release(&h, ref);
	holder_cleanup(&h);
}

Test(holder, bounded_in_bytes_the_current_one_always_held)
{
	struct holder h;
	struct catalog *cat = with_sm(140);
	size_t one = canonical_bytes(cat), n;
	/* room for two and a half: the third newest does not fit */
	struct holder_options o = {8, one * 5 / 2, NULL};
	char got[HOLDER_MAX_REVISIONS][CATALOG_DIGEST_LEN + 1];

	cr_assert_eq(holder_init_with(&h, cat, &o), 0);
	for (unsigned i = 1; i < 5; i++) {
		cr_assert_eq(holder_swap(&h, with_sm(140 + i)), 0);
	}
	held(&h, got, &n);
	cr_assert_eq(n, 2, "%zu held within %zu bytes of %zu each", n, o.max_bytes, one);
	holder_cleanup(&h);
	o.max_bytes = 1; /* less than one catalog: the current one stays all the same */
	cr_assert_eq(holder_init_with(&h, with_sm(150), &o), 0);
	cr_assert_eq(holder_swap(&h, with_sm(151)), 0);
	held(&h, got, &n);
	cr_assert_eq(n, 1);
	holder_cleanup(&h);
}

Test(holder, a_reference_outlives_the_swaps_that_evict_it)
{
	struct holder h;
	struct holder_options o = {1, 0, NULL};
	struct holder_ref *ref;
	struct holder_reader reader = {0};
	const struct catalog *old, *via_reader;
	char digest[CATALOG_DIGEST_LEN + 1];
	size_t n;

	cr_assert_eq(holder_init_with(&h, with_sm(140), &o), 0);
	old = holder_acquire(&h, &ref);
	via_reader = holder_read(&h, &reader);
	cr_assert_eq(old, via_reader);
	memcpy(digest, old->digest, sizeof(digest));
	for (unsigned i = 1; i < 4; i++) {
		cr_assert_eq(holder_swap(&h, with_sm(140 + i)), 0);
	}
	/* still readable (ASan would catch a use after free) */
	cr_assert_str_eq(old->digest, digest);
	cr_assert_eq(old->targets[2].sm_count, 140);
	cr_assert_eq(holder_revisions(ref, &n)[0].catalog, old);
	holder_release(&h, ref);
	cr_assert_neq(holder_read(&h, &reader), via_reader, "the reader moves on after a swap");
	cr_assert_eq(holder_read(&h, &reader)->targets[2].sm_count, 143);
	cr_assert_eq(holder_reader_revisions(&reader, &n)[0].catalog->targets[2].sm_count, 143);
	cr_assert_eq(n, 1);
	holder_reader_cleanup(&h, &reader);
	holder_cleanup(&h);
}
