/* SPDX-License-Identifier: AGPL-3.0-only */
#include "lookup.h"

/* How a request names each kind of catalog entry, for its problems. */
struct kind_words {
	enum problem_kind unknown;
	const char *list; /* the route that lists them */
	const char *missing;
};

static const struct kind_words kind_words[] = {
	[CATALOG_TARGETS] = {PROBLEM_UNKNOWN_TARGET, "GET /v1/targets",
			     "give a target (e.g. target=h100) or an sm_count"},
	[CATALOG_MODELS] = {PROBLEM_UNKNOWN_MODEL, "GET /v1/models",
			    "give a model (e.g. model=llama-3.1-8b) or num_q_heads"},
};

long lookup_find(const struct catalog *cat, enum catalog_kind kind, const char *param,
		 struct slice name, struct problem *p)
{
	const struct kind_words *k = &kind_words[kind];
	long i = catalog_find(cat, kind, name.p, name.len);

	if (i < 0) {
		problem_unknown_name(p, k->unknown, param, lookup_param(kind), name.p, name.len,
				     catalog_suggest(cat, kind, name.p, name.len), k->list);
	}
	return i;
}

int lookup_missing(enum catalog_kind kind, struct problem *p)
{
	return problem_set(p, PROBLEM_MISSING_PARAMETER, lookup_param(kind), NULL, "%s",
			   kind_words[kind].missing);
}
