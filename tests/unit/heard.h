/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * What a hearer of the reload's notices heard, for the server tests that
 * drive a reload (test_reload.c, test_catsource.c): how many notices, and
 * the last one's members every kind has, with its catalog's name when it
 * names one (copied: a notice's pointers live for the call only).
 */
#ifndef SPLITKD_TEST_HEARD_H
#define SPLITKD_TEST_HEARD_H

#include <stdbool.h>
#include <stdio.h>

#include "reload.h"

struct heard {
	int calls;
	const struct reload_source *source;
	bool ok, changed;
	enum api_trigger trigger;
	char error[API_STATUS_TEXT];
	bool named; /* the notice named a catalog (a kind's member) */
	char catalog[CATALOG_NAME_MAX + 1];
};

static inline void heard_take(struct heard *h, const struct reload_attempt *a)
{
	h->calls++;
	h->source = a->source;
	h->ok = a->ok;
	h->changed = a->changed;
	h->trigger = a->trigger;
	snprintf(h->error, sizeof(h->error), "%s", a->error);
	h->named = a->catalog != NULL;
	snprintf(h->catalog, sizeof(h->catalog), "%s", a->catalog != NULL ? a->catalog : "");
}

#endif /* SPLITKD_TEST_HEARD_H */
