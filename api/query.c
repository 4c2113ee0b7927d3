/* SPDX-License-Identifier: AGPL-3.0-only */
#include "query.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "jsonin.h"
#include "names.h"
#include "quote.h"

enum field_kind { KIND_NAME, KIND_U32, KIND_SPELLING, KIND_BOOL, KIND_LIST };

struct field_info {
	const char *name;
	size_t name_len; /* compared first: most names differ there */
	enum field_kind kind;
	size_t offset; /* of its member in struct query */
};

/* Each parameter is named as the struct query member it fills (vocab.h). */
#define FIELD_ROW(e, member, k, scope, bounds) \
	[QF_##e] = {#member, sizeof(#member) - 1, KIND_##k, offsetof(struct query, member)},

static const struct field_info fields[QF_COUNT] = {VOCAB_PARAMS(FIELD_ROW)};

/* Each row's bounds, apart from fields[]: read only where QUERY_NARROW_FIELDS
 * or QUERY_LIST_FIELDS says, and in the problems' words, so the table every
 * lookup walks keeps its 32 bytes a row. */
struct field_limits {
	uint32_t min, max, max_len; /* a U32's or a LIST element's bounds; a LIST's length */
};

#define LIMITS_ROW(e, member, k, scope, bounds) \
	[QF_##e] = {ENGINE_BOUND_MIN(bounds), ENGINE_BOUND_MAX(bounds), ENGINE_BOUND_LEN(bounds)},

static const struct field_limits limits[QF_COUNT] = {VOCAB_PARAMS(LIMITS_ROW)};

bool query_u32_within(enum query_field f, uint32_t v)
{
	return v >= limits[f].min && v <= limits[f].max;
}

const char *query_field_name(enum query_field f)
{
	return (unsigned)f < QF_COUNT ? fields[f].name : NULL;
}


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

/* The next element of a list's text at *at (its end at `end`), as a
 * plain decimal or a lone 0: true with *v, stepping past it and its
 * comma. */
static bool list_element(const char **at, const char *end, uint32_t *v)
{
	const char *comma = memchr(*at, ',', (size_t)(end - *at));
	const char *stop = comma != NULL ? comma : end;
	size_t len = (size_t)(stop - *at);

	if (len == 1 && **at == '0') {
		*v = 0;
	} else if (!decimal_parse_u32(*at, len, v)) {
		return false;
	}
	*at = comma != NULL ? comma + 1 : end;
	return comma == NULL || *at < end; /* "1," has an empty last element */
}

bool query_list_text(struct slice text, uint32_t min, uint32_t max, uint32_t max_len,
		     struct query_list *l)
{
	const char *at = text.p, *end = text.p + text.len;
	uint32_t n = 0, v;

	if (text.len == 0) {
		return false;
	}
	while (at < end) {
		if (n == max_len || !list_element(&at, end, &v) || v < min || v > max) {
			return false;
		}
		n++;
	}
	*l = (struct query_list){n, text, NULL};
	return true;
}

bool query_list_json(const cJSON *array, uint32_t min, uint32_t max, uint32_t max_len,
		     struct query_list *l)
{
	const cJSON *item;
	uint32_t n = 0;

	if (!cJSON_IsArray(array) || array->child == NULL) {
		return false;
	}
	cJSON_ArrayForEach(item, array) {
		uint64_t v;

		if (n == max_len || !jsonin_u53(item, &v) || v < min || v > max) {
			return false;
		}
		n++;
	}
	*l = (struct query_list){n, {NULL, 0}, array};
	return true;
}

size_t query_list_get(const struct query_list *l, uint32_t *out, size_t cap)
{
	size_t n = 0;

	if (l->json != NULL) {
		const cJSON *item;

		cJSON_ArrayForEach(item, l->json) {
			uint64_t v = 0;

			if (n == cap) {
				break;
			}
			jsonin_u53(item, &v); /* checked when it was read */
			out[n++] = (uint32_t)v;
		}
		return n;
	}
	for (const char *at = l->text.p, *end = l->text.p + l->text.len; at < end && n < cap;) {
		uint32_t v = 0;

		list_element(&at, end, &v); /* checked when it was read */
		out[n++] = v;
	}
	return n;
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

/* One key or value: in place when nothing in it needs decoding (most of
 * them: a copy of every byte was a twentieth of a request), else decoded
 * into scratch. Returns false on a bad escape. */
static bool split_part(const char *p, size_t len, bool coded, char *scratch, size_t *used,
		       struct slice *out)
{
	long n;

	if (!coded) {
		*out = (struct slice){p, len};
		return true;
	}
	n = decode(p, len, scratch + *used, true);
	if (n < 0) {
		return false;
	}
	*out = (struct slice){scratch + *used, (size_t)n};
	*used += (size_t)n;
	return true;
}

enum query_split_status query_split(const char *query, size_t len, char *scratch,
				    struct query_param params[QUERY_MAX_PARAMS], size_t *num_params,
				    size_t *bad_index)
{
	size_t pos = 0, used = 0;
	/* most queries hold neither '%' nor '+': two looks at the whole
	 * string then spare two a pair */
	bool any_coded = memchr(query, '%', len) != NULL || memchr(query, '+', len) != NULL;

	*num_params = 0;
	while (pos < len) {
		const char *pair = query + pos;
		const char *amp = memchr(pair, '&', len - pos);
		size_t pair_len = amp ? (size_t)(amp - pair) : len - pos;
		const char *eq = memchr(pair, '=', pair_len);
		size_t key_len = eq ? (size_t)(eq - pair) : pair_len;
		/* a '%' or '+' anywhere in the pair: decode the part holding it
		 * (memchr, not a byte loop: the pairs are short, the calls cheap) */
		const char *pct = any_coded ? memchr(pair, '%', pair_len) : NULL;
		const char *plus = any_coded ? memchr(pair, '+', pair_len) : NULL;
		const char *key_end = pair + key_len;
		bool key_coded = (pct != NULL && pct < key_end) || (plus != NULL && plus < key_end);
		struct query_param *param = &params[*num_params];

		pos += pair_len + (amp ? 1 : 0);
		if (pair_len == 0) {
			continue;
		}
		if (*num_params == QUERY_MAX_PARAMS) {
			return QUERY_SPLIT_TOO_MANY;
		}
		if (!split_part(pair, key_len, key_coded, scratch, &used, &param->key)) {
			*bad_index = *num_params;
			return QUERY_SPLIT_BAD_ESCAPE;
		}
		param->value = (struct slice){pair + pair_len, 0};
		if (eq != NULL) {
			size_t value_len = pair_len - key_len - 1;
			bool value_coded = (pct != NULL && memchr(eq + 1, '%', value_len) != NULL) ||
					   (plus != NULL && memchr(eq + 1, '+', value_len) != NULL);

			if (!split_part(eq + 1, value_len, value_coded, scratch, &used, &param->value)) {
				*bad_index = *num_params;
				return QUERY_SPLIT_BAD_ESCAPE;
			}
		}
		(*num_params)++;
	}
	return QUERY_SPLIT_OK;
}

int query_parse(const char *raw, size_t len, char *scratch, query_mask allowed, struct query *q,
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

/* The field a name can only be, by its length and a letter or two: one
 * guess, checked by the caller (QF_COUNT: no guess). */
static enum query_field guess_field(const char *name, size_t len)
{
	switch (len) {
	case 5:
		return QF_MODEL;
	case 6:
		return name[0] == 't' ? QF_TARGET : QF_FIELDS;
	case 7:
		return name[0] == 'c' ? QF_CATALOG : QF_EXPLAIN;
	case 8:
		switch (name[0]) {
		case 's':
			return name[1] == 'm' ? QF_SM_COUNT : QF_SPELLING;
		case 'd':
			return QF_DECLARED;
		case 'h':
			return QF_HEAD_DIM;
		case 'n':
			return QF_NUM_SEQS;
		case 'm':
			return QF_MAX_ROWS;
		case 'o':
			return QF_OVERRIDE;
		default:
			return QF_COUNT;
		}
	case 11:
		return QF_NUM_Q_HEADS;
	case 14:
		return QF_MAX_BATCH_SIZE;
	default:
		return QF_COUNT;
	}
}

/* An allowed field by exact name, or QF_COUNT. The guess settles nearly
 * every lookup in one compare (the loop was most of reading a query); the
 * loop stays for anything the guess does not name. */
static enum query_field find_field(const char *name, size_t len, query_mask allowed)
{
	enum query_field g = guess_field(name, len);

	if (g != QF_COUNT && (allowed & QUERY_BIT(g)) && fields[g].name_len == len &&
	    memcmp(fields[g].name, name, len) == 0) {
		return g;
	}
	for (int f = 0; f < QF_COUNT; f++) {
		if ((allowed & QUERY_BIT(f)) && fields[f].name_len == len &&
		    memcmp(fields[f].name, name, len) == 0) {
			return (enum query_field)f;
		}
	}
	return QF_COUNT;
}

/* Finds an allowed field by exact name; on a miss, fills the problem with
 * the nearest allowed name as the suggestion. */
/* The field among those allowed nearest a typo (names_near), or NULL. */
static const char *nearest_field(const char *name, size_t len, query_mask allowed, unsigned flags)
{
	struct names_near near;

	names_near_init(&near, name, len, flags);
	for (int f = 0; f < QF_COUNT; f++) {
		if (allowed & QUERY_BIT(f)) {
			names_near_offer(&near, fields[f].name);
		}
	}
	return near.best;
}

/* An unknown parameter's problem, with the nearest allowed name: apart
 * from lookup so that its buffer and calls stay off every request. */
static int __attribute__((noinline, cold))
unknown_field(const char *name, size_t len, query_mask allowed, struct problem *p)
{
	const char *near = nearest_field(name, len, allowed, NAMES_SAME | NAMES_PREFIX);
	char quoted[QUOTE_MAX];

	quote_excerpt(name, len, quoted, sizeof(quoted));
	if (near != NULL) {
		return problem_set(p, PROBLEM_UNKNOWN_PARAMETER, quoted, near,
				   "unknown parameter \"%s\"; did you mean \"%s\"?", quoted, near);
	}
	return problem_set(p, PROBLEM_UNKNOWN_PARAMETER, quoted, NULL,
			   "unknown parameter \"%s\"", quoted);
}

static int lookup(const char *name, size_t len, query_mask allowed, enum query_field *out,
		  struct problem *p)
{
	*out = find_field(name, len, allowed);
	if (*out != QF_COUNT) {
		return 0;
	}
	return unknown_field(name, len, allowed, p);
}

/* One parameter's value, from either source. */
struct value {
	const cJSON *json; /* a JSON body member; NULL for a query-string value */
	struct slice text; /* the decoded query-string value */
	/* an evaluation context's: numbers may be decimal strings, spellings
	 * integers, written into the field's row here; NULL for a body */
	char (*digits)[QUERY_DIGITS];
};

/* "<field> must be <rule>", and ", not <JSON type>" when `json` is set. */
static int invalid(enum query_field f, const char *rule, const cJSON *json, struct problem *p)
{
	if (json != NULL) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL, "%s must be %s, not %s",
				   fields[f].name, rule, jsonin_type_name(json));
	}
	return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL, "%s must be %s",
			   fields[f].name, rule);
}

static struct slice string_of(const cJSON *json)
{
	return (struct slice){json->valuestring, strlen(json->valuestring)};
}

/* A number refused, worded with its row's bounds: apart from read_u32
 * so that its buffer and calls stay off every request. (A U32 row's
 * least is at least 1: the decimal rule has no 0.) */
static int __attribute__((noinline, cold))
u32_refused(enum query_field f, const struct value *v, bool text, bool parsed, struct problem *p)
{
	char rule[128];

	if (parsed) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
				   "%s must be from %u to %u", fields[f].name, (unsigned)limits[f].min,
				   (unsigned)limits[f].max);
	}
	snprintf(rule, sizeof(rule),
		 text ? "a plain decimal integer from %u to %u (no sign, no leading zero, no spaces)"
		 : v->digits != NULL ? "an integer from %u to %u or a decimal string"
				     : "an integer from %u to %u",
		 (unsigned)limits[f].min, (unsigned)limits[f].max);
	return invalid(f, rule, text ? NULL : v->json, p);
}

/* A JSON number that is an integer; or a query string's strict decimal,
 * which a context may also give as a JSON string, judged by the query
 * string's rule and words; within the row's bounds. */
static int read_u32(enum query_field f, const struct value *v, struct query_u32 *out,
		    struct problem *p)
{
	bool text = v->json == NULL || (v->digits != NULL && cJSON_IsString(v->json));
	struct slice s = v->json == NULL ? v->text : text ? string_of(v->json) : (struct slice){NULL, 0};
	bool parsed = text ? decimal_parse_u32(s.p, s.len, &out->v) : jsonin_u32(v->json, &out->v);

	out->set = parsed && (!(QUERY_NARROW_FIELDS & QUERY_BIT(f)) || query_u32_within(f, out->v));
	if (out->set) {
		return 0;
	}
	return u32_refused(f, v, text, parsed, p);
}

/* A context's integer for a spelling, written back in decimal (an
 * environment variable holds text, so 4 and "4" mean the same): 0 to
 * 2^53 - 1, the integers a JSON number carries exactly. */
static bool integer_text(const cJSON *json, char out[QUERY_DIGITS], struct slice *s)
{
	uint64_t u;
	int n;

	if (!jsonin_u53(json, &u)) {
		return false;
	}
	n = snprintf(out, QUERY_DIGITS, "%llu", (unsigned long long)u);
	*s = (struct slice){out, (size_t)n};
	return true;
}

/* A JSON string, or any query-string value; both at most QUERY_MAX_VALUE.
 * A context may give a spelling as an integer. */
static int read_string(enum query_field f, const struct value *v, struct slice *out,
		       struct problem *p)
{
	struct slice s = v->text;

	if (v->json != NULL && cJSON_IsString(v->json)) {
		s = string_of(v->json);
	} else if (v->json != NULL) {
		bool spelling = v->digits != NULL && fields[f].kind == KIND_SPELLING;

		if (!spelling || !integer_text(v->json, v->digits[f], &s)) {
			return invalid(f, spelling ? "a string or an integer from 0 to 9007199254740991" : "a string",
				       v->json, p);
		}
	}
	if (s.len > QUERY_MAX_VALUE) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, fields[f].name, NULL,
				   "%s is longer than %d bytes", fields[f].name, QUERY_MAX_VALUE);
	}
	*out = s;
	return 0;
}

/* A JSON boolean, or true/false/1/0 in a query string, where a bare
 * `?explain` reads as true. */
static int read_bool(enum query_field f, const struct value *v, bool *out, struct problem *p)
{
	const struct slice *t = &v->text;

	if (v->json != NULL) {
		if (!cJSON_IsBool(v->json)) {
			return invalid(f, "true or false", v->json, p);
		}
		*out = cJSON_IsTrue(v->json);
	} else if (t->len == 0 || names_equal(t->p, t->len, "true") || names_equal(t->p, t->len, "1")) {
		*out = true;
	} else if (names_equal(t->p, t->len, "false") || names_equal(t->p, t->len, "0")) {
		*out = false;
	} else {
		return invalid(f, "true, false, 1 or 0", NULL, p);
	}
	return 0;
}

/* A query string's comma-separated decimals, a JSON array of integers, or
 * in a context also the query string's text as a JSON string. */
static int read_list(enum query_field f, const struct value *v, struct query_list *out,
		     struct problem *p)
{
	const struct field_info *fi = &fields[f];
	const struct field_limits *li = &limits[f];
	bool text = v->json == NULL || (v->digits != NULL && cJSON_IsString(v->json));
	struct slice s = v->json == NULL ? v->text : text ? string_of(v->json) : (struct slice){NULL, 0};

	if (text ? query_list_text(s, li->min, li->max, li->max_len, out)
		 : query_list_json(v->json, li->min, li->max, li->max_len, out)) {
		return 0;
	}
	if (!text && !cJSON_IsArray(v->json)) {
		return invalid(f, "an array of integers", v->json, p);
	}
	return problem_set(p, PROBLEM_INVALID_PARAMETER, fi->name, NULL,
			   text ? "%s must be 1 to %u plain decimals from %u to %u, comma-separated"
				: "%s must be an array of 1 to %u integers from %u to %u",
			   fi->name, (unsigned)li->max_len, (unsigned)li->min, (unsigned)li->max);
}

/* The one path every parameter takes, from a query string, a body or a
 * context, once its field is known: once only, then the value by the
 * field's type. In a context, null is absent (how a layer unsets a key). */
static int accept_field(struct query *q, enum query_field f, query_mask *seen,
			const struct value *v, struct problem *p)
{
	if (*seen & QUERY_BIT(f)) {
		return problem_set(p, PROBLEM_REPEATED_PARAMETER, fields[f].name, NULL,
				   "%s is given more than once", fields[f].name);
	}
	*seen |= QUERY_BIT(f);
	if (v->digits != NULL && cJSON_IsNull(v->json)) {
		return 0;
	}
	/* a list apart from the switch, by the constant mask: with no LIST
	 * row it is no test at all */
	if (QUERY_LIST_FIELDS & QUERY_BIT(f)) {
		return read_list(f, v, (struct query_list *)(void *)((char *)q + fields[f].offset), p);
	}
	switch (fields[f].kind) {
	case KIND_U32:
		return read_u32(f, v, u32_of(q, f), p);
	case KIND_NAME:
	case KIND_SPELLING:
		return read_string(f, v, slice_of(q, f), p);
	case KIND_LIST: /* read above */
	case KIND_BOOL:
		break;
	}
	return read_bool(f, v, (bool *)(void *)((char *)q + fields[f].offset), p);
}

/* A parameter by name, from a query string or a body: an unknown name is
 * a problem. */
static int accept(struct query *q, query_mask allowed, query_mask *seen, struct slice name,
		  const struct value *v, struct problem *p)
{
	enum query_field f = QF_COUNT;

	if (lookup(name.p, name.len, allowed, &f, p) != 0) {
		return -1;
	}
	return accept_field(q, f, seen, v, p);
}

int query_from_params(const struct query_param *params, size_t n, query_mask allowed,
		      struct query *q, struct problem *p)
{
	query_mask seen = 0;

	memset(q, 0, sizeof(*q));
	for (size_t i = 0; i < n; i++) {
		struct value v = {NULL, params[i].value, NULL};

		if (accept(q, allowed, &seen, params[i].key, &v, p) != 0) {
			return -1;
		}
	}
	return 0;
}

int query_from_json(const cJSON *object, query_mask allowed, struct query *q, struct problem *p)
{
	query_mask seen = 0;
	const cJSON *m;

	memset(q, 0, sizeof(*q));
	if (!cJSON_IsObject(object)) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, NULL, NULL,
				   "a query must be a JSON object, not %s", jsonin_type_name(object));
	}
	cJSON_ArrayForEach(m, object) {
		struct value v = {m, {NULL, 0}, NULL};

		if (accept(q, allowed, &seen, (struct slice){m->string, strlen(m->string)}, &v, p) != 0) {
			return -1;
		}
	}
	return 0;
}

/* What a key of an evaluation context is to splitkd. */
enum context_key {
	KEY_INPUT,    /* an allowed field, by its exact name */
	KEY_FOREIGN,  /* for another provider or hook, or targetingKey: ignored */
	KEY_MISSPELT, /* a field but for case, '_' or '-': refused */
	KEY_NEAR,     /* within two edits of a field: ignored, with a warning */
	KEY_EXPLAIN,  /* explain: its answer is not a flag value, refused */
};

static enum context_key classify(struct slice key, query_mask allowed, enum query_field *f)
{
	static const char targeting_key[] = "targetingKey";
	const char *near;

	if (key.len == sizeof(targeting_key) - 1 && memcmp(key.p, targeting_key, key.len) == 0) {
		return KEY_FOREIGN;
	}
	*f = find_field(key.p, key.len, allowed);
	if (*f != QF_COUNT) {
		return KEY_INPUT;
	}
	for (int i = 0; i < QF_COUNT; i++) {
		if ((allowed & QUERY_BIT(i)) && names_equal_folded(key.p, key.len, fields[i].name)) {
			*f = (enum query_field)i;
			return KEY_MISSPELT;
		}
	}
	if (names_equal_folded(key.p, key.len, fields[QF_EXPLAIN].name)) {
		return KEY_EXPLAIN;
	}
	near = nearest_field(key.p, key.len, allowed, 0);
	for (int i = 0; i < QF_COUNT && near != NULL; i++) {
		if (fields[i].name == near) {
			*f = (enum query_field)i;
			return KEY_NEAR;
		}
	}
	return KEY_FOREIGN;
}

/* One key of a context that is not an input: 0 to go on (ignored, perhaps
 * with a warning), or -1 with the problem set. */
static int context_other(struct query_context *c, enum context_key kind, struct slice key,
			 enum query_field f, const cJSON *value, struct problem *p)
{
	char quoted[QUOTE_MAX];

	quote_excerpt(key.p, key.len, quoted, sizeof(quoted));
	switch (kind) {
	case KEY_MISSPELT:
		return problem_set(p, PROBLEM_UNKNOWN_PARAMETER, quoted, fields[f].name,
				   "unknown context key \"%s\"; did you mean \"%s\"?", quoted,
				   fields[f].name);
	case KEY_EXPLAIN:
		if (cJSON_IsNull(value)) {
			return 0;
		}
		return problem_set(p, PROBLEM_INVALID_PARAMETER, quoted, NULL,
				   "%s is not carried over OFREP; use GET /v1/splits?explain=1", quoted);
	case KEY_NEAR:
		if (c->num_warnings < QUERY_MAX_NEAR) {
			snprintf(c->warnings[c->num_warnings++], sizeof(c->warnings[0]),
				 "context key \"%s\" is not an input and is ignored; did you mean \"%s\"?",
				 quoted, fields[f].name);
		}
		return 0;
	case KEY_INPUT:
	case KEY_FOREIGN:
		break;
	}
	return 0;
}

int query_from_context(const cJSON *context, query_mask allowed, struct query_context *c,
		       struct problem *p)
{
	query_mask seen = 0;
	const cJSON *m;

	memset(&c->q, 0, sizeof(c->q));
	c->num_warnings = 0;
	if (context == NULL || cJSON_IsNull(context)) {
		return 0;
	}
	if (!cJSON_IsObject(context)) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, "context", NULL,
				   "context must be a JSON object, not %s", jsonin_type_name(context));
	}
	cJSON_ArrayForEach(m, context) {
		struct slice key = {m->string, strlen(m->string)};
		enum query_field f = QF_COUNT;
		enum context_key kind = classify(key, allowed, &f);
		struct value v = {m, {NULL, 0}, c->digits};

		if (kind == KEY_INPUT ? accept_field(&c->q, f, &seen, &v, p) != 0
				      : context_other(c, kind, key, f, m, p) != 0) {
			return -1;
		}
	}
	return 0;
}
