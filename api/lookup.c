/* SPDX-License-Identifier: AGPL-3.0-only */
#include "lookup.h"

/* How a request names each kind of catalog entry, for its problems. */
struct kind_words {
	enum problem_kind unknown;
	const char *param; /* also the word in messages */
	const char *list;  /* the route that lists them */
	const char *missing;
};

static const struct kind_words kind_words[] = {
	[CATALOG_TARGETS] = {PROBLEM_UNKNOWN_TARGET, "target", "GET /v1/targets",
			     "give a target (e.g. target=h100) or an sm_count"},
	[CATALOG_MODELS] = {PROBLEM_UNKNOWN_MODEL, "model", "GET /v1/models",
			    "give a model (e.g. model=llama-3.1-8b) or num_q_heads"},
};

long lookup_find(const struct catalog *cat, enum catalog_kind kind, const char *param,
		 struct slice name, struct problem *p)
{
	const struct kind_words *k = &kind_words[kind];
	long i = catalog_find(cat, kind, name.p, name.len);

	if (i < 0) {
		problem_unknown_name(p, k->unknown, param, k->param, name.p, name.len,
				     catalog_suggest(cat, kind, name.p, name.len), k->list);
	}
	return i;
}

int lookup_entry(const struct catalog *cat, enum catalog_kind kind, struct slice name,
		 bool number_given, long *index, struct problem *p)
{
	*index = -1;
	if (name.p != NULL) {
		*index = lookup_find(cat, kind, kind_words[kind].param, name, p);
		return *index < 0 ? -1 : 0;
	}
	if (!number_given) {
		return problem_set(p, PROBLEM_MISSING_PARAMETER, kind_words[kind].param, NULL, "%s",
				   kind_words[kind].missing);
	}
	return 0;
}
