/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * query — turns a query string or a JSON object into a typed struct query,
 * strictly: unknown, repeated or ill-typed parameters are problems, with a
 * "did you mean" for near-miss names. Each endpoint names the fields it
 * takes; the same names and rules hold for GET parameters, POST bodies and
 * OpenFeature evaluation contexts (which are lenient about types and
 * foreign keys where SDKs need it: query_from_context).
 *
 * A query string is split into pairs and percent-decoded here too
 * (application/x-www-form-urlencoded), so all of its parsing is in one
 * place; the router borrows the decoder for a {name} path segment.
 *
 * Slices in a struct query point into the caller's buffers (the raw query
 * string and its decoded scratch, or the cJSON tree): they live as long as
 * those do.
 * No allocation; thread-safe.
 */
#ifndef SPLITKD_QUERY_H
#define SPLITKD_QUERY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "problem.h"
#include "slice.h"
#include "vocab.h"

/* The parameters, one per row of VOCAB_PARAMS (vocab.h): QF_TARGET, ... */
#define QUERY_ENUM_ROW(e, name, kind, scope, bounds) QF_##e,
enum query_field { VOCAB_PARAMS(QUERY_ENUM_ROW) QF_COUNT };
#undef QUERY_ENUM_ROW

/* A set of fields, as a bit mask: QUERY_BIT(QF_TARGET) | ... */
typedef uint64_t query_mask;
#define QUERY_BIT(f) ((query_mask)1 << (f))

/* The field set is bounded by construction: a row past the mask's width
 * would shift past it, undefined behaviour and no error. */
_Static_assert(QF_COUNT <= sizeof(query_mask) * CHAR_BIT,
	       "vocab.h: more parameters than a QUERY_BIT mask holds");

struct query_u32 {
	bool set;
	uint32_t v;
};

/*
 * A LIST parameter as given, checked and not yet read: n elements (0:
 * absent), each within its row's bounds, in the query string's decimal
 * text ("1,2,3", `text`) or a JSON array (`json`, of the body or the
 * context it was read from). Read it with query_list_get, the one way in
 * (it points into the caller's buffers, as a slice does: it lives as long
 * as they do). Absent, it costs its size and nothing else.
 */
struct query_list {
	uint32_t n;
	struct slice text;
	const cJSON *json;
};

/* What each kind of parameter is read into: a slice (p NULL: absent), a
 * number and whether it was given, a flag, or a list. */
#define QUERY_TYPE_NAME struct slice
#define QUERY_TYPE_SPELLING struct slice
#define QUERY_TYPE_U32 struct query_u32
#define QUERY_TYPE_BOOL bool
#define QUERY_TYPE_LIST struct query_list

/* One member a parameter, named as the parameter (OFREP's flagConfigEtag
 * included), in the table's order. */
#define QUERY_MEMBER_ROW(e, name, kind, scope, bounds) QUERY_TYPE_##kind name;
struct query {
	VOCAB_PARAMS(QUERY_MEMBER_ROW)
};
#undef QUERY_MEMBER_ROW

/* Whether a member of kind k was given: a BOOL given as false reads as
 * absent, which is what it means. */
#define QUERY_GIVEN_NAME(m) ((m).p != NULL)
#define QUERY_GIVEN_SPELLING(m) ((m).p != NULL)
#define QUERY_GIVEN_U32(m) ((m).set)
#define QUERY_GIVEN_BOOL(m) (m)
#define QUERY_GIVEN_LIST(m) ((m).n > 0)

/* The value an absent parameter reads as, from its row's bounds:
 * QUERY_DEFAULT_MAX_BATCH_SIZE is 1 (0: none, or its reader decides). */
#define QUERY_DEFAULT_ROW(e, name, kind, scope, bounds) \
	QUERY_DEFAULT_##e = ENGINE_BOUND_DEFAULT(bounds),
enum query_default { VOCAB_PARAMS(QUERY_DEFAULT_ROW) };
#undef QUERY_DEFAULT_ROW

/* The parameters of one scope, as a bit mask: QUERY_SCOPE(DECIDE) is
 * every input of the seed's decision, QUERY_SCOPE(ENGINE) every input
 * only the other engines read. */
#define QUERY_SCOPE_IF_DECIDE_DECIDE(e) | QUERY_BIT(QF_##e)
#define QUERY_SCOPE_IF_DECIDE_ENGINE(e)
#define QUERY_SCOPE_IF_DECIDE_OTHER(e)
#define QUERY_SCOPE_IF_ENGINE_DECIDE(e)
#define QUERY_SCOPE_IF_ENGINE_ENGINE(e) | QUERY_BIT(QF_##e)
#define QUERY_SCOPE_IF_ENGINE_OTHER(e)
#define QUERY_SCOPE_IF_OTHER_DECIDE(e)
#define QUERY_SCOPE_IF_OTHER_ENGINE(e)
#define QUERY_SCOPE_IF_OTHER_OTHER(e) | QUERY_BIT(QF_##e)
#define QUERY_SCOPE_ROW_DECIDE(e, name, kind, scope, bounds) QUERY_SCOPE_IF_DECIDE_##scope(e)
#define QUERY_SCOPE_ROW_ENGINE(e, name, kind, scope, bounds) QUERY_SCOPE_IF_ENGINE_##scope(e)
#define QUERY_SCOPE_ROW_OTHER(e, name, kind, scope, bounds) QUERY_SCOPE_IF_OTHER_##scope(e)
#define QUERY_SCOPE(scope) (0u VOCAB_PARAMS(QUERY_SCOPE_ROW_##scope))

/* A parameter's name ("seq_len"); NULL past the end. */
const char *query_field_name(enum query_field f);

/* The LIST rows, and the U32 rows whose bounds are narrower than the
 * decimal rule's 1 to 4294967295, as constant masks: a reader checks
 * them only where the mask says, so a check no row needs compiles to
 * nothing (the batch's fast reader declines both; query.c words them). */
#define QUERY_IS_LIST_LIST 1
#define QUERY_IS_LIST_U32 0
#define QUERY_IS_LIST_NAME 0
#define QUERY_IS_LIST_SPELLING 0
#define QUERY_IS_LIST_BOOL 0
#define QUERY_LIST_ROW(e, name, kind, scope, bounds) \
	| (QUERY_IS_LIST_##kind ? QUERY_BIT(QF_##e) : 0u)
#define QUERY_LIST_FIELDS (0u VOCAB_PARAMS(QUERY_LIST_ROW))
#define QUERY_NARROW_ROW(e, name, kind, scope, bounds)                                    \
	| (!QUERY_IS_LIST_##kind && (ENGINE_BOUND_MIN(bounds) > 1 ||                      \
				    (ENGINE_BOUND_MAX(bounds) > 0 &&                      \
				     ENGINE_BOUND_MAX(bounds) < UINT32_MAX))              \
		   ? QUERY_BIT(QF_##e)                                                   \
		   : 0u)
#define QUERY_NARROW_FIELDS (0u VOCAB_PARAMS(QUERY_NARROW_ROW))

/* Whether v is within field f's bounds (a U32 row's). */
bool query_u32_within(enum query_field f, uint32_t v);

/*
 * Reads list l's elements into out (room for cap), in order: returns how
 * many it wrote, the smaller of l->n and cap. Cannot fail: the parser
 * checked every element (each within its row's bounds, at most its
 * length of them).
 */
size_t query_list_get(const struct query_list *l, uint32_t *out, size_t cap);

/*
 * Checks a LIST's value against bounds min..max (each element) and at
 * most max_len elements (at least one), and fills *l: from the query
 * string's text ("1,2,3": plain decimals, no sign, no spaces, no empty
 * element), or from a JSON array of integral numbers. Returns true, or
 * false with *l untouched. The parsers call them for a LIST row;
 * test_query calls them with bounds of its own.
 */
bool query_list_text(struct slice text, uint32_t min, uint32_t max, uint32_t max_len,
		     struct query_list *l);
bool query_list_json(const cJSON *array, uint32_t min, uint32_t max, uint32_t max_len,
		     struct query_list *l);

/* The most bytes of a string value, a query string's or a JSON body's:
 * longer is 400 invalid-parameter (the contract's maxLength says it).
 * Names are at most 64 bytes, and an environment value longer than this
 * is not a spelling anyone means. */
#define QUERY_MAX_VALUE 256

/* Most pairs a query string may hold. */
#define QUERY_MAX_PARAMS 32

struct query_param {
	struct slice key, value;
};

enum query_split_status {
	QUERY_SPLIT_OK,
	QUERY_SPLIT_TOO_MANY,   /* more than QUERY_MAX_PARAMS pairs */
	QUERY_SPLIT_BAD_ESCAPE, /* '%' not followed by two hex digits */
};

/*
 * Splits a raw query string (the bytes after '?', not decoded) into
 * key/value pairs, decoding each with application/x-www-form-urlencoded
 * rules ('+' is a space, %XX a byte) into `scratch`, which must hold at
 * least `len` bytes. Empty pairs ("a=1&&b=2") are skipped; a pair without
 * '=' has an empty value. On QUERY_SPLIT_BAD_ESCAPE, *bad_index is the pair
 * at fault. A key or value with nothing to decode (no '%', no '+') points
 * into `query` itself, any other into scratch: the slices live as long as
 * both do.
 */
enum query_split_status query_split(const char *query, size_t len, char *scratch,
				    struct query_param params[QUERY_MAX_PARAMS], size_t *num_params,
				    size_t *bad_index);

/* Decodes a percent-encoded path segment (no '+' rule) into out, which
 * holds at least len bytes. Returns the decoded length, or -1 on a bad
 * escape. */
long query_percent_decode(const char *in, size_t len, char *out);

/* Splits, decodes and reads a raw query string (len bytes; `raw` may be
 * NULL when len is 0) for an endpoint that takes the fields in `allowed`.
 * `scratch` holds at least len bytes; q's slices point into it or raw.
 * Returns 0, or -1 with the problem filled in. */
int query_parse(const char *raw, size_t len, char *scratch, query_mask allowed, struct query *q,
		struct problem *p);

/* Fills q from decoded parameters; only fields in `allowed` are accepted.
 * Returns 0, or -1 with the problem filled in. */
int query_from_params(const struct query_param *params, size_t n, query_mask allowed,
		      struct query *q, struct problem *p);

/* Fills q from a JSON object's members, by the same names. Strings must be
 * JSON strings, numbers integral JSON numbers, explain a boolean. */
int query_from_json(const cJSON *object, query_mask allowed, struct query *q, struct problem *p);

/* Room for a spelling a context gives as an integer, in decimal: up to
 * 2^53 - 1 (16 digits) and a NUL. */
#define QUERY_DIGITS 24
/* Ignored near-miss keys of a context that get a warning: the first ones. */
#define QUERY_MAX_NEAR 4

/*
 * An OpenFeature evaluation context read into a query, and what reading it
 * leaves beside: the decimal text of spellings given as integers (q's
 * slices may point into `digits`, so use q in place, never a copy that
 * outlives this struct) and the warnings for ignored near-miss keys.
 */
struct query_context {
	struct query q;
	char digits[QF_COUNT][QUERY_DIGITS];
	size_t num_warnings;
	char warnings[QUERY_MAX_NEAR][192];
};

/*
 * Reads an evaluation context (OFREP): a JSON object, or NULL or JSON null
 * for an empty one, for the fields in `allowed`. The names and value rules
 * of query_from_json, made lenient where OpenFeature contexts need it:
 *  - a number may also be a JSON string, under the query string's decimal
 *    rule and words ("16"); a spelling may be a JSON integer from 0 to
 *    2^53 - 1, written back in decimal;
 *  - null is absent (how a context layer unsets a key); a field given
 *    twice is still a repeated-parameter problem;
 *  - targetingKey, and any key that is no field, are ignored: a context
 *    carries keys meant for other providers and hooks;
 *  - but a key equal to a field save for ASCII case, '_' and '-'
 *    ("maxBatchSize") is an unknown-parameter problem suggesting the field,
 *    and one within two edits of a field ("max_bach_size") is ignored with
 *    a warning (the first QUERY_MAX_NEAR of them);
 *  - explain (when not allowed) is refused: its answer is no flag value.
 * Returns 0, or -1 with the problem filled in.
 */
int query_from_context(const cJSON *context, query_mask allowed, struct query_context *c,
		       struct problem *p);

#endif /* SPLITKD_QUERY_H */
