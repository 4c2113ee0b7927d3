/* SPDX-License-Identifier: AGPL-3.0-only */
#include "batchfast.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "decide.h"
#include "engines.h"
#include "fields.h"

/* A position in the body. */
struct cursor {
	const char *s;
	size_t n, i;
};

/* RFC 8259 whitespace only: cJSON skips every byte up to 0x20, but such a
 * body is not the common shape. */
static inline void skip_ws(struct cursor *c)
{
	/* the common body has none: one compare when the next byte is not */
	if (c->i < c->n && (unsigned char)c->s[c->i] > ' ') {
		return;
	}
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\n' || c->s[c->i] == '\r' ||
			       c->s[c->i] == '\t')) {
		c->i++;
	}
}

/* The punctuation `ch` next (after whitespace): steps over it. */
static inline bool punct(struct cursor *c, char ch)
{
	skip_ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return true;
	}
	return false;
}

/* The bytes a plain string holds as they are: printable ASCII and DEL,
 * not '"' (0x22) or '\\' (0x5C). One look-up a byte: the strings of a
 * batch are short, too short for jsonscan's eight-byte steps to pay. */
#define R8 1, 1, 1, 1, 1, 1, 1, 1
static const unsigned char plain_byte[256] = {
	[0x20] = 1, 1, 0, 1, 1, 1, 1, 1, /* ' ' '!' '"' ... */
	R8, R8, R8, R8, R8, R8,          /* 0x28 to 0x57 */
	1, 1, 1, 1, 0, 1, 1, 1,          /* 'X' 'Y' 'Z' '[' '\\' ... */
	R8, R8, R8, R8,                  /* 0x60 to 0x7F */
};
#undef R8

/* A string of plain ASCII, no escape: its content in place. */
static bool plain_string(struct cursor *c, struct slice *out)
{
	const unsigned char *u = (const unsigned char *)c->s;
	size_t start, i;

	skip_ws(c);
	if (c->i >= c->n || c->s[c->i] != '"') {
		return false;
	}
	start = i = c->i + 1;
	while (i < c->n && plain_byte[u[i]]) {
		i++;
	}
	if (i >= c->n || c->s[i] != '"') {
		return false; /* an escape, a control or non-ASCII byte, or the end */
	}
	*out = (struct slice){c->s + start, i - start};
	c->i = i + 1;
	return true;
}

/* An integer from 1 to 4294967295 with no sign, fraction or exponent
 * (what follows must be ',' or '}', which the caller checks). */
static bool plain_u32(struct cursor *c, uint32_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;

	skip_ws(c);
	if (c->i >= c->n || c->s[c->i] < '1' || c->s[c->i] > '9') {
		return false;
	}
	while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
		if (++digits > 10) {
			return false;
		}
		v = v * 10 + (uint64_t)(c->s[c->i] - '0');
		c->i++;
	}
	if (v > UINT32_MAX || (c->i < c->n && (c->s[c->i] == '.' || c->s[c->i] == 'e' ||
						 c->s[c->i] == 'E'))) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

static bool plain_bool(struct cursor *c, bool *out)
{
	skip_ws(c);
	if (c->n - c->i >= 4 && memcmp(c->s + c->i, "true", 4) == 0) {
		c->i += 4;
		*out = true;
		return true;
	}
	if (c->n - c->i >= 5 && memcmp(c->s + c->i, "false", 5) == 0) {
		c->i += 5;
		*out = false;
		return true;
	}
	return false;
}

enum kind { STRING, NUMBER, BOOLEAN };

/* The inputs a batch query takes (DECIDE_FIELDS), named as query.c names
 * them, with where each goes in struct query. */
struct input {
	const char *name;
	size_t len;
	enum query_field field;
	enum kind kind;
	size_t offset;
};

#define INPUT(f, k, member) {#member, sizeof(#member) - 1, f, k, offsetof(struct query, member)},
/* a LIST is an array: no row, so its key is declined for the cJSON path */
#define INPUT_OF_LIST(f, member)
#define INPUT_OF_U32(f, member) INPUT(f, NUMBER, member)
#define INPUT_OF_NAME(f, member) INPUT(f, STRING, member)
#define INPUT_OF_SPELLING(f, member) INPUT(f, STRING, member)
#define INPUT_OF_BOOL(f, member) INPUT(f, BOOLEAN, member)
#define INPUT_IF_DECIDE(e, member, k) INPUT_OF_##k(QF_##e, member)
#define INPUT_IF_ENGINE(e, member, k) INPUT_OF_##k(QF_##e, member)
#define INPUT_IF_OTHER(e, member, k)
#define INPUT_ROW(e, member, k, scope, bounds) INPUT_IF_##scope(e, member, k)

/* The rows of vocab.h whose scope is DECIDE or ENGINE, in the table's
 * order, less the LIST rows. */
static const struct input inputs[] = {VOCAB_PARAMS(INPUT_ROW)};

#define NUM_INPUTS (sizeof(inputs) / sizeof(inputs[0]))

/* One row per input a batch query takes (tests/unit/test_batchfast.c
 * checks the rows name exactly DECIDE_FIELDS), but a list. */
_Static_assert(NUM_INPUTS == (size_t)__builtin_popcountll(DECIDE_FIELDS & ~QUERY_LIST_FIELDS),
	       "batchfast: one row per DECIDE_FIELDS member");

/* The input whose name is the key at the cursor (at its opening quote),
 * stepping over the key and its closing quote; NULL for any other key.
 * Compared in place: a key needs no scan of its own. The length, then the
 * first two bytes, then the rest; each name is at least five bytes. */
static const struct input *input_at(struct cursor *c)
{
	const char *at = c->s + c->i + 1;
	size_t room = c->n - c->i - 1;

	for (size_t i = 0; i < NUM_INPUTS; i++) {
		const struct input *in = &inputs[i];

		if (in->len < room && at[in->len] == '"' && at[0] == in->name[0] &&
		    at[1] == in->name[1] && memcmp(at + 2, in->name + 2, in->len - 2) == 0) {
			c->i += in->len + 2;
			return in;
		}
	}
	return NULL;
}

/* One member's value, by the input's kind, into q. */
static bool read_value(struct cursor *c, const struct input *in, struct query *q)
{
	char *member = (char *)q + in->offset;

	switch (in->kind) {
	case STRING: {
		struct slice *s = (struct slice *)(void *)member;

		return plain_string(c, s) && s->len <= BATCHFAST_MAX_STRING;
	}
	case NUMBER: {
		struct query_u32 *u = (struct query_u32 *)(void *)member;

		/* a value past a row's narrower bounds is the cJSON path's to
		 * word; with no such row, no test */
		u->set = plain_u32(c, &u->v) && (!(QUERY_NARROW_FIELDS & QUERY_BIT(in->field)) ||
						 query_u32_within(in->field, u->v));
		return u->set;
	}
	case BOOLEAN:
		break;
	}
	return plain_bool(c, (bool *)(void *)member);
}

/* One query object, as query_from_json would read it. */
static bool read_query(struct cursor *c, struct query *q)
{
	query_mask seen = 0;

	memset(q, 0, sizeof(*q));
	if (!punct(c, '{')) {
		return false;
	}
	if (punct(c, '}')) {
		return true;
	}
	do {
		const struct input *in;

		skip_ws(c);
		if (c->i >= c->n || c->s[c->i] != '"') {
			return false;
		}
		in = input_at(c);
		if (in == NULL || !punct(c, ':') || (seen & QUERY_BIT(in->field))) {
			return false;
		}
		seen |= QUERY_BIT(in->field);
		if (!read_value(c, in, q)) {
			return false;
		}
	} while (punct(c, ','));
	return punct(c, '}');
}

static bool key_is(struct slice key, const char *word)
{
	return key.len == strlen(word) && memcmp(key.p, word, key.len) == 0;
}

/* The whole body checked, its queries read once: them (malloc'd, count
 * of them; NULL when the body has none), and the fields list (p NULL:
 * none). */
struct shape {
	struct query *queries;
	size_t count, cap;
	struct slice fields;
};

/* Room for one more query; false when out of memory (the cJSON path then
 * answers, or says why not). */
static bool room_for_one(struct shape *sh, size_t max_batch)
{
	struct query *grown;
	size_t cap;

	if (sh->count < sh->cap) {
		return true;
	}
	cap = sh->cap == 0 ? 64 : sh->cap * 2;
	cap = cap < max_batch ? cap : max_batch;
	grown = realloc(sh->queries, cap * sizeof(*grown));
	if (grown == NULL) {
		return false;
	}
	sh->queries = grown;
	sh->cap = cap;
	return true;
}

static bool read_queries(struct cursor *c, size_t max_batch, struct shape *sh)
{
	if (!punct(c, '[')) {
		return false;
	}
	do {
		if (sh->count >= max_batch || !room_for_one(sh, max_batch) ||
		    !read_query(c, &sh->queries[sh->count])) {
			return false;
		}
		sh->count++;
	} while (punct(c, ','));
	return punct(c, ']');
}

static bool read_shape(const char *text, size_t len, size_t max_batch, struct shape *sh)
{
	struct cursor c = {text, len, 0};
	bool have_queries = false;

	if (!punct(&c, '{')) {
		return false;
	}
	do {
		struct slice key;

		if (!plain_string(&c, &key) || !punct(&c, ':')) {
			return false;
		}
		if (key_is(key, "queries") && !have_queries) {
			have_queries = true;
			if (!read_queries(&c, max_batch, sh)) {
				return false;
			}
		} else if (key_is(key, "fields") && sh->fields.p == NULL) {
			if (!plain_string(&c, &sh->fields)) {
				return false;
			}
		} else {
			return false;
		}
	} while (punct(&c, ','));
	if (!punct(&c, '}')) {
		return false;
	}
	skip_ws(&c);
	return c.i == c.n && have_queries;
}

bool batchfast_answer(struct handler_call *c)
{
	struct shape sh = {NULL, 0, 0, {NULL, 0}};
	unsigned mask = FIELDS_ALL;
	size_t failures = 0;
	struct problem ignored;

	if (!read_shape(c->req->body, c->req->body_len, c->limits->max_batch, &sh) ||
	    (sh.fields.p != NULL && fields_parse(sh.fields, "fields", &mask, &ignored) != 0)) {
		free(sh.queries);
		return false;
	}
	/* from here on, the answer of the cJSON path (handler_splits.c write_batch) */
	answer_batch_begin(&c->w, sh.count, FIELDS_ANSWER_BYTES(mask));
	for (size_t i = 0; i < sh.count; i++) {
		struct decision d;
		struct problem p;
		int engine = 1;

		if (decide_run(c->ctx->catalog, &sh.queries[i], &d, &p) != 0 ||
		    (sh.queries[i].engine.p != NULL &&
		     (engine = engines_answer(c->ctx, &c->w, &sh.queries[i], &d, c->ctx->catalog,
					      mask != FIELDS_ALL, &p)) < 0)) {
			failures++;
			answer_batch_error(&c->w, &p);
			continue;
		}
		if (engine == 0) {
			continue; /* another engine's answer */
		}
		handler_count_decision(c, &d, c->ctx->catalog);
		answer_write(&c->w, &d, c->ctx->catalog, mask);
	}
	free(sh.queries);
	answer_batch_end(&c->w, failures, c->ctx->catalog);
	return true;
}
