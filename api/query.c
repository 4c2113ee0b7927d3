/* SPDX-License-Identifier: AGPL-3.0-only */
#include "query.h"

#include <stddef.h>
#include <string.h>

#include "jsonin.h"

enum field_kind { KIND_NAME, KIND_U32, KIND_SPELLING, KIND_BOOL };

struct field_info {
	const char *name;
	enum field_kind kind;
	size_t offset; /* of its member in struct query */
};

#define FIELD(f, n, k, member) [f] = {n, k, offsetof(struct query, member)}

static const struct field_info fields[QF_COUNT] = {
	FIELD(QF_TARGET, "target", KIND_NAME, target),
	FIELD(QF_SM_COUNT, "sm_count", KIND_U32, sm_count),
	FIELD(QF_DECLARED, "declared", KIND_SPELLING, declared),
	FIELD(QF_MODEL, "model", KIND_NAME, model),
	FIELD(QF_NUM_Q_HEADS, "num_q_heads", KIND_U32, num_q_heads),
	FIELD(QF_HEAD_DIM, "head_dim", KIND_U32, head_dim),
	FIELD(QF_MAX_BATCH_SIZE, "max_batch_size", KIND_U32, max_batch_size),
	FIELD(QF_NUM_SEQS, "num_seqs", KIND_U32, num_seqs),
	FIELD(QF_MAX_ROWS, "max_rows", KIND_U32, max_rows),
	FIELD(QF_OVERRIDE, "override", KIND_SPELLING, override),
	FIELD(QF_EXPLAIN, "explain", KIND_BOOL, explain),
	FIELD(QF_SPELLING, "spelling", KIND_SPELLING, spelling),
};

/* Longest accepted string value: names are at most 64 bytes, and an
 * environment value longer than this is not a spelling anyone means. */
#define QUERY_MAX_VALUE 256

/* The member a field fills, by the table's offset: a text_slice for names
 * and spellings, a query_u32 for numbers. */
static struct text_slice *slice_of(struct query *q, enum query_field f)
{
	return (struct text_slice *)(void *)((char *)q + fields[f].offset);
}

static struct query_u32 *u32_of(struct query *q, enum query_field f)
{
	return (struct query_u32 *)(void *)((char *)q + fields[f].offset);
}

/* Finds an allowed field by exact name; on a miss, fills the problem with
 * the nearest allowed name as the suggestion. */
static int lookup(const char *name, size_t len, unsigned allowed, enum query_field *out,
		  struct problem *p)
{
	const char *near = NULL;
	char quoted[72];

	for (int f = 0; f < QF_COUNT; f++) {
		if ((allowed & QUERY_BIT(f)) && strlen(fields[f].name) == len &&
		    memcmp(fields[f].name, name, len) == 0) {
			*out = (enum query_field)f;
			return 0;
		}
	}
	/* only now, off the hot path: the nearest name for the message */
	for (int f = 0; f < QF_COUNT && near == NULL; f++) {
		if ((allowed & QUERY_BIT(f)) &&
		    (text_is_near(name, len, fields[f].name) || text_ieq(name, len, fields[f].name))) {
			near = fields[f].name;
		}
	}
	text_quote(name, len, quoted, sizeof(quoted));
	if (near != NULL) {
		return problem_set(p, PROBLEM_UNKNOWN_PARAMETER, quoted, near,
				   "unknown parameter \"%s\"; did you mean \"%s\"?", quoted, near);
	}
	return problem_set(p, PROBLEM_UNKNOWN_PARAMETER, quoted, NULL,
			   "unknown parameter \"%s\"", quoted);
}

static int u32_problem(enum query_field f, struct problem *p)
{
	return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
			   "%s must be a plain decimal integer from 1 to 4294967295 "
			   "(no sign, no leading zero, no spaces)",
			   fields[f].name);
}

static int too_long(enum query_field f, struct problem *p)
{
	return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
			   "%s is longer than %d bytes", fields[f].name, QUERY_MAX_VALUE);
}

int query_from_params(const struct text_param *params, size_t n, unsigned allowed,
		      struct query *q, struct problem *p)
{
	unsigned seen = 0;

	memset(q, 0, sizeof(*q));
	for (size_t i = 0; i < n; i++) {
		const struct text_slice *v = &params[i].value;
		enum query_field f;

		if (lookup(params[i].key.p, params[i].key.len, allowed, &f, p) != 0) {
			return -1;
		}
		if (seen & QUERY_BIT(f)) {
			return problem_set(p, PROBLEM_REPEATED_PARAMETER, fields[f].name, NULL,
					   "%s is given more than once", fields[f].name);
		}
		seen |= QUERY_BIT(f);
		switch (fields[f].kind) {
		case KIND_U32:
			u32_of(q, f)->set = text_parse_u32(v->p, v->len, &u32_of(q, f)->v);
			if (!u32_of(q, f)->set) {
				return u32_problem(f, p);
			}
			break;
		case KIND_NAME:
		case KIND_SPELLING:
			if (v->len > QUERY_MAX_VALUE) {
				return too_long(f, p);
			}
			*slice_of(q, f) = *v;
			break;
		case KIND_BOOL:
			/* a bare `?explain` reads as true */
			if (v->len == 0 || text_ieq(v->p, v->len, "true") || text_ieq(v->p, v->len, "1")) {
				q->explain = true;
			} else if (text_ieq(v->p, v->len, "false") || text_ieq(v->p, v->len, "0")) {
				q->explain = false;
			} else {
				return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
						   "%s must be true, false, 1 or 0", fields[f].name);
			}
			break;
		}
	}
	return 0;
}

int query_from_json(const cJSON *object, unsigned allowed, struct query *q, struct problem *p)
{
	unsigned seen = 0;
	const cJSON *m;

	memset(q, 0, sizeof(*q));
	if (!cJSON_IsObject(object)) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, NULL, NULL,
				   "a query must be a JSON object, not %s", jsonin_type_name(object));
	}
	cJSON_ArrayForEach(m, object) {
		enum query_field f;

		if (lookup(m->string, strlen(m->string), allowed, &f, p) != 0) {
			return -1;
		}
		if (seen & QUERY_BIT(f)) {
			return problem_set(p, PROBLEM_REPEATED_PARAMETER, fields[f].name, NULL,
					   "%s is given more than once", fields[f].name);
		}
		seen |= QUERY_BIT(f);
		switch (fields[f].kind) {
		case KIND_U32:
			u32_of(q, f)->set = jsonin_u32(m, &u32_of(q, f)->v);
			if (!u32_of(q, f)->set) {
				return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
						   "%s must be an integer from 1 to 4294967295, not %s",
						   fields[f].name, jsonin_type_name(m));
			}
			break;
		case KIND_NAME:
		case KIND_SPELLING:
			if (!cJSON_IsString(m)) {
				return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
						   "%s must be a string, not %s", fields[f].name,
						   jsonin_type_name(m));
			}
			if (strlen(m->valuestring) > QUERY_MAX_VALUE) {
				return too_long(f, p);
			}
			*slice_of(q, f) = (struct text_slice){m->valuestring, strlen(m->valuestring)};
			break;
		case KIND_BOOL:
			if (!cJSON_IsBool(m)) {
				return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
						   "%s must be true or false, not %s", fields[f].name,
						   jsonin_type_name(m));
			}
			q->explain = cJSON_IsTrue(m);
			break;
		}
	}
	return 0;
}
