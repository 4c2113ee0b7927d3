/* SPDX-License-Identifier: AGPL-3.0-only */
#include "query.h"

#include <stddef.h>
#include <string.h>

#include "decimal.h"
#include "jsonin.h"
#include "names.h"
#include "quote.h"

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

/* The member a field fills, by the table's offset: a slice for names
 * and spellings, a query_u32 for numbers. */
static struct slice *slice_of(struct query *q, enum query_field f)
{
	return (struct slice *)(void *)((char *)q + fields[f].offset);
}

static struct query_u32 *u32_of(struct query *q, enum query_field f)
{
	return (struct query_u32 *)(void *)((char *)q + fields[f].offset);
}

static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* Percent-decodes in[0..len) into out; '+' becomes a space when plus_is_space.
 * Returns the decoded length or -1. */
static long decode(const char *in, size_t len, char *out, bool plus_is_space)
{
	size_t i = 0, n = 0;

	while (i < len) {
		unsigned char c = (unsigned char)in[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= len) {
				return -1;
			}
			hi = hex_digit((unsigned char)in[i + 1]);
			lo = hex_digit((unsigned char)in[i + 2]);
			if (hi < 0 || lo < 0) {
				return -1;
			}
			out[n++] = (char)(hi * 16 + lo);
			i += 3;
		} else {
			out[n++] = (plus_is_space && c == '+') ? ' ' : (char)c;
			i++;
		}
	}
	return (long)n;
}

long query_percent_decode(const char *in, size_t len, char *out)
{
	return decode(in, len, out, false);
}

enum query_split_status query_split(const char *query, size_t len, char *scratch,
				    struct query_param params[QUERY_MAX_PARAMS], size_t *num_params,
				    size_t *bad_index)
{
	size_t pos = 0, used = 0;

	*num_params = 0;
	while (pos < len) {
		const char *pair = query + pos;
		const char *amp = memchr(pair, '&', len - pos);
		size_t pair_len = amp ? (size_t)(amp - pair) : len - pos;
		const char *eq = memchr(pair, '=', pair_len);
		size_t key_len = eq ? (size_t)(eq - pair) : pair_len;
		long k, v;

		pos += pair_len + (amp ? 1 : 0);
		if (pair_len == 0) {
			continue;
		}
		if (*num_params == QUERY_MAX_PARAMS) {
			return QUERY_SPLIT_TOO_MANY;
		}
		k = decode(pair, key_len, scratch + used, true);
		if (k < 0) {
			*bad_index = *num_params;
			return QUERY_SPLIT_BAD_ESCAPE;
		}
		params[*num_params].key = (struct slice){scratch + used, (size_t)k};
		used += (size_t)k;
		v = 0;
		if (eq != NULL) {
			v = decode(eq + 1, pair_len - key_len - 1, scratch + used, true);
			if (v < 0) {
				*bad_index = *num_params;
				return QUERY_SPLIT_BAD_ESCAPE;
			}
		}
		params[*num_params].value = (struct slice){scratch + used, (size_t)v};
		used += (size_t)v;
		(*num_params)++;
	}
	return QUERY_SPLIT_OK;
}

int query_parse(const char *raw, size_t len, char *scratch, unsigned allowed, struct query *q,
		struct problem *p)
{
	struct query_param params[QUERY_MAX_PARAMS];
	size_t n = 0, bad = 0;

	switch (query_split(raw != NULL ? raw : "", len, scratch, params, &n, &bad)) {
	case QUERY_SPLIT_OK:
		break;
	case QUERY_SPLIT_TOO_MANY:
		return problem_set(p, PROBLEM_MALFORMED_QUERY, NULL, NULL,
				   "more than %d query parameters", QUERY_MAX_PARAMS);
	case QUERY_SPLIT_BAD_ESCAPE:
		return problem_set(p, PROBLEM_MALFORMED_QUERY, NULL, NULL,
				   "query parameter %zu has a '%%' not followed by two hex digits",
				   bad + 1);
	}
	return query_from_params(params, n, allowed, q, p);
}

/* Finds an allowed field by exact name; on a miss, fills the problem with
 * the nearest allowed name as the suggestion. */
static int lookup(const char *name, size_t len, unsigned allowed, enum query_field *out,
		  struct problem *p)
{
	const char *near = NULL;
	char quoted[QUOTE_MAX];

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
		    (names_is_near(name, len, fields[f].name) || names_equal(name, len, fields[f].name))) {
			near = fields[f].name;
		}
	}
	quote_excerpt(name, len, quoted, sizeof(quoted));
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

int query_from_params(const struct query_param *params, size_t n, unsigned allowed,
		      struct query *q, struct problem *p)
{
	unsigned seen = 0;

	memset(q, 0, sizeof(*q));
	for (size_t i = 0; i < n; i++) {
		const struct slice *v = &params[i].value;
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
			u32_of(q, f)->set = decimal_parse_u32(v->p, v->len, &u32_of(q, f)->v);
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
			if (v->len == 0 || names_equal(v->p, v->len, "true") || names_equal(v->p, v->len, "1")) {
				q->explain = true;
			} else if (names_equal(v->p, v->len, "false") || names_equal(v->p, v->len, "0")) {
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
			*slice_of(q, f) = (struct slice){m->valuestring, strlen(m->valuestring)};
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
