/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the catalog loader. For every input: no crash, no
 * leak; a refused catalog says why; an accepted one round-trips through
 * its canonical form to the same digest, and every name and alias finds
 * its own entry.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	struct catalog *cat = catalog_load((const char *)data, size, err, sizeof(err));
	struct catalog *again;
	struct jsonw w;

	if (cat == NULL) {
		CHECK(err[0] != '\0');
		return 0;
	}
	for (size_t i = 0; i < cat->num_targets; i++) {
		const struct catalog_target *t = &cat->targets[i];

		CHECK(catalog_find_target(cat, t->names.name, t->names.name_len) == t);
		for (size_t a = 0; a < t->names.num_aliases; a++) {
			CHECK(catalog_find_target(cat, t->names.aliases[a], t->names.alias_lens[a]) == t);
		}
		CHECK(t->sm_count >= 1);
	}
	for (size_t i = 0; i < cat->num_models; i++) {
		const struct catalog_model *m = &cat->models[i];

		CHECK(catalog_find_model(cat, m->names.name, m->names.name_len) == m);
		CHECK(m->num_q_heads >= 1);
	}
	jsonw_init(&w, 0);
	catalog_write(&w, cat, false);
	CHECK(!w.failed);
	again = catalog_load(w.buf, w.len, err, sizeof(err));
	CHECK(again != NULL);
	CHECK(strcmp(again->digest, cat->digest) == 0);
	jsonw_cleanup(&w);
	catalog_free(again);
	catalog_free(cat);
	return 0;
}
