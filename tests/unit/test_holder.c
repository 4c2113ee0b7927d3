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
	struct holder_options o = {.max_revisions = 3, .source = "cat.json"};
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
	struct holder_options o = {.max_revisions = 8, .max_bytes = one * 5 / 2};
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
	struct holder_options o = {.max_revisions = 1};
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

/* ------------------------------------------------------ named catalogs */

/* The revisions held for `name` through one reference: *n of them. */
static const struct revision_named *named_in(const struct holder_ref *ref, const char *name)
{
	size_t n;
	const struct revision_named *all = holder_catalogs(ref, &n);

	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, name) == 0) {
			return &all[i];
		}
	}
	return NULL;
}

Test(holder, named_catalogs_swap_on_their_own_and_share_one_reference)
{
	struct holder h;
	struct holder_options o = {.name = "today", .max_catalogs = 2};
	struct catalog *today = with_sm(140), *legacy = with_sm(141), *legacy2 = with_sm(142);
	struct holder_ref *before, *after;
	const struct revision_named *nt, *nl;
	size_t n;

	cr_assert_eq(holder_init_with(&h, today, &o), 0);
	cr_assert_str_eq(today->name, "today");
	cr_assert_eq(holder_swap_named(&h, "legacy", legacy, "legacy.json"), 0);
	cr_assert_str_eq(legacy->name, "legacy");
	cr_assert_eq(holder_swap_named(&h, "third", with_sm(143), NULL), -2, "past max_catalogs");
	holder_acquire(&h, &before);
	cr_assert_eq(holder_catalogs(before, &n)[0].revisions[0].catalog, today);
	cr_assert_eq(n, 2);
	/* a swap of legacy leaves today's set as it was: the same revisions */
	cr_assert_eq(holder_swap_named(&h, "legacy", legacy2, NULL), 0);
	cr_assert_eq(holder_acquire(&h, &after), today, "the default is still today");
	nt = named_in(after, "today");
	nl = named_in(after, "legacy");
	cr_assert_eq(nt->revisions, named_in(before, "today")->revisions, "today's set is shared");
	cr_assert(nt->is_default && !nl->is_default);
	cr_assert_eq(nl->num_revisions, 2);
	cr_assert_eq(nl->revisions[0].catalog, legacy2);
	cr_assert_eq(nl->revisions[1].catalog, legacy);
	cr_assert_eq(named_in(before, "legacy")->revisions[0].catalog, legacy, "old ref unchanged");
	holder_release(&h, before);
	holder_release(&h, after);
	/* the default is never removed; another is, and a ref taken before keeps it */
	cr_assert_eq(holder_remove(&h, "today"), -1);
	cr_assert_eq(holder_remove(&h, "nope"), -1);
	holder_acquire(&h, &before);
	cr_assert_eq(holder_remove(&h, "legacy"), 0);
	cr_assert_eq(holder_acquire_named(&h, "legacy", &after), NULL);
	cr_assert_null(after);
	cr_assert_gt(named_in(before, "legacy")->revisions[0].catalog->num_targets, 0);
	holder_release(&h, before);
	holder_acquire(&h, &after);
	holder_catalogs(after, &n);
	cr_assert_eq(n, 1);
	holder_release(&h, after);
	holder_cleanup(&h);
}

/* max_bytes bounds every catalog's revisions together; each current one stays. */
Test(holder, named_catalogs_share_the_memory_bound)
{
	struct holder h;
	struct catalog *cat = with_sm(150);
	size_t one = canonical_bytes(cat), n;
	struct holder_options o = {.max_revisions = 8, .max_bytes = one * 5 / 2};
	struct holder_ref *ref;

	cr_assert_eq(holder_init_with(&h, cat, &o), 0);
	cr_assert_eq(holder_swap_named(&h, "b", with_sm(151), NULL), 0);
	/* two held: a third revision of "b" would be over two and a half */
	cr_assert_eq(holder_swap_named(&h, "b", with_sm(152), NULL), 0);
	holder_acquire(&h, &ref);
	cr_assert_eq(named_in(ref, "b")->num_revisions, 1, "the default's bytes count against b");
	holder_revisions(ref, &n);
	cr_assert_eq(n, 1);
	holder_release(&h, ref);
	holder_cleanup(&h);
}
