/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the catalog loader. For every input: no crash, no
 * leak; a refused catalog says why; an accepted one holds the rule's
 * constants within their bounds and every declared count within
 * 1..max_decode_splits, round-trips through its canonical form to the same
 * digest and constants, every name and alias finds
 * its own entry, and the change stream's event from the embedded catalog
 * to it is whole SSE text (its cells capped, names escaped onto one line).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "catalog.h"
#include "embedded.h"
#include "events.h"

static struct catalog *embedded;

/* The change event from the embedded catalog to `cat`: always one, within
 * EVENTS_TEXT_MAX, and every line of it a field, so no name breaks the
 * framing. */
static void check_event(const struct catalog *cat)
{
	static char out[EVENTS_TEXT_MAX];
	struct events_revision was = {1, embedded->digest, 0}, now = {2, cat->digest, 1};
	size_t n = events_change(out, sizeof(out), "f00d", &now, &was, embedded, cat);
	size_t blank = 0;

	CHECK(n > 0 && n < sizeof(out));
	CHECK(strlen(out) == n);
	for (const char *line = out; line < out + n;) {
		const char *end = strchr(line, '\n');

		CHECK(end != NULL);
		if (end == line) {
			blank++;
		} else {
			CHECK(strncmp(line, "data: ", 6) == 0 || strncmp(line, "id: ", 4) == 0 ||
			      strncmp(line, "event: ", 7) == 0);
		}
		line = end + 1;
	}
	CHECK(blank == 2); /* the OFREP message and the catalog event */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	embedded = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	CHECK(embedded != NULL);
	return 0;
}

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
		CHECK(t->declared_policy.kind != SPLITK_PINNED ||
		      (t->declared_policy.pinned >= 1 &&
		       t->declared_policy.pinned <= cat->constants.max_decode_splits));
	}
	CHECK(splitk_constants_valid(cat->constants));
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
	CHECK(again->constants.target_waves == cat->constants.target_waves &&
	      again->constants.max_decode_splits == cat->constants.max_decode_splits);
	check_event(cat);
	jsonw_cleanup(&w);
	catalog_free(again);
	catalog_free(cat);
	return 0;
}
