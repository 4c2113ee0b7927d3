/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The catalog holder without a server: a reference outlives a swap, a
 * reader follows swaps and holds one reference between them.
 */
#include <criterion/criterion.h>

#include "catalog.h"
#include "embedded.h"
#include "holder.h"

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
