/* SPDX-License-Identifier: AGPL-3.0-only */
#include "fields.h"

#include <string.h>

#include "names.h"
#include "quote.h"
#include "splitk.h"

#define NAME_ROW(e) [FM_##e] = VOCAB_M_##e,
static const char *const member_names[FM_COUNT] = {VOCAB_MEMBERS(NAME_ROW)};

const char *fields_name(enum fields_member m)
{
	return (unsigned)m < FM_COUNT ? member_names[m] : NULL;
}

static int member_of(const char *name, size_t len)
{
	for (int m = 0; m < FM_COUNT; m++) {
		if (strlen(member_names[m]) == len && memcmp(member_names[m], name, len) == 0) {
			return m;
		}
	}
	return -1;
}

/* One name of the list that is no member: a problem, with the nearest
 * member (by the same rule as every other "did you mean") when there is one. */
static int unknown(struct slice name, const char *param, struct problem *p)
{
	char quoted[QUOTE_MAX];
	struct names_near nn;
	const char *near;

	/* the one "did you mean" search, an exact match but for case included */
	names_near_init(&nn, name.p, name.len, NAMES_SAME);
	for (int m = 0; m < FM_COUNT; m++) {
		names_near_offer(&nn, member_names[m]);
	}
	near = nn.best;
	quote_excerpt(name.p, name.len, quoted, sizeof(quoted));
	if (near != NULL) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, param, near,
				   "%s: \"%s\" is no member of the answer; did you mean \"%s\"?", param,
				   quoted, near);
	}
	return problem_set(p, PROBLEM_INVALID_PARAMETER, param, NULL,
			   "%s: \"%s\" is no member of the answer (see /openapi.json, Decision)",
			   param, quoted);
}

int fields_parse(struct slice list, const char *param, unsigned *mask, struct problem *p)
{
	size_t pos = 0;

	*mask = 0;
	if (list.len == 0) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, param, NULL,
				   "%s must name at least one member of the answer, e.g. "
				   "num_splits,workspace_bytes",
				   param);
	}
	while (pos <= list.len) {
		const char *start = list.p + pos;
		const char *comma = memchr(start, ',', list.len - pos);
		struct slice name = {start, comma != NULL ? (size_t)(comma - start) : list.len - pos};
		int m;

		if (name.len == 0) {
			return problem_set(p, PROBLEM_INVALID_PARAMETER, param, NULL,
					   "%s has an empty name: members are separated by one comma, "
					   "e.g. num_splits,workspace_bytes",
					   param);
		}
		m = member_of(name.p, name.len);
		if (m < 0) {
			return unknown(name, param, p);
		}
		if (*mask & FIELDS_BIT(m)) {
			return problem_set(p, PROBLEM_INVALID_PARAMETER, param, NULL,
					   "%s names \"%s\" more than once", param, member_names[m]);
		}
		*mask |= FIELDS_BIT(m);
		pos += name.len + 1;
	}
	return 0;
}
