/* SPDX-License-Identifier: AGPL-3.0-only */
#include "fragment.h"

#include <stdint.h>
#include <string.h>

#include "decimal.h"
#include "fields.h"
#include "jsonscan.h"
#include "jsonw.h"
#include "splitk.h"

/* Appends a string literal: its length is a constant, so the copy is a
 * few moves. */
#define LIT(p, s)                                   \
	do {                                        \
		memcpy((p), (s), sizeof(s) - 1);    \
		(p) += sizeof(s) - 1;               \
	} while (0)

/* The escaped form of a byte is at most 6 bytes ("\u00XX"; a bad byte's
 * U+FFFD is 3), plus the two quotes. */
static size_t string_bound(size_t len)
{
	return 6 * len + 2;
}

static char *put_string(char *p, const char *s, size_t len)
{
	*p++ = '"';
	if (jsonscan_plain_run(s, len, true) == len) {
		memcpy(p, s, len);
		p += len;
	} else {
		p += jsonw_escape(p, string_bound(len), s, len);
	}
	*p++ = '"';
	return p;
}

/* A string known to need no escaping, copied whole without a scan. */
static char *put_plain(char *p, const char *s, size_t len)
{
	*p++ = '"';
	memcpy(p, s, len);
	p += len;
	*p++ = '"';
	return p;
}

static char *put_string_or_null(char *p, const char *s, size_t len)
{
	if (s == NULL) {
		LIT(p, "null");
		return p;
	}
	return put_string(p, s, len);
}

/* A catalog name, or null: plain by catalog_load's rule (catalog.h). */
static char *put_name_or_null(char *p, const struct catalog_names *n)
{
	if (n == NULL) {
		LIT(p, "null");
		return p;
	}
	return put_plain(p, n->name, n->name_len);
}

/* A warning's length, from its writer when it said (decide.h). */
static size_t warning_len(const struct decision *d, size_t i)
{
	return d->warning_lens[i] != 0 ? d->warning_lens[i] : strlen(d->warnings[i]);
}

static char *put_label(char *p, struct splitk_policy pol)
{
	char label[SPLITK_LABEL_MAX];
	size_t n = splitk_label(pol, label);

	*p++ = '"';
	memcpy(p, label, n);
	p += n;
	*p++ = '"';
	return p;
}


size_t fragment_bound(const struct decision *d, const struct catalog *cat)
{
	/* keys, punctuation, labels and numbers: well under 512 bytes */
	size_t n = 512 + DECIMAL_U128_MAX;

	/* a catalog name and a plain warning are copied whole (put_plain) */
	if (d->target != NULL) {
		n += d->target->names.name_len + 2;
	}
	if (d->model != NULL) {
		n += d->model->names.name_len + 2;
	}
	if (d->override.p != NULL) {
		n += string_bound(d->override.len);
	}
	for (size_t i = 0; i < d->num_warnings; i++) {
		size_t len = warning_len(d, i);

		n += (d->warning_plain[i] ? len + 2 : string_bound(len)) + 1;
	}
	/* "fnv1a64:" and hex, and a catalog's name (catalog_name_ok): plain */
	return n + CATALOG_DIGEST_LEN + 2 + cat->name_len + 2;
}

/* A member is written when its bit is in mask: `,"key":value` each (the
 * first comma becomes the object's brace). Every writer below is always
 * inlined, so the whole answer (a constant mask, fragment_write's first
 * branch) is the straight run of literals it was (fragment_write_all),
 * with every test folded away; each takes the members of one part of the
 * answer, in the answer's order, and returns where the next one starts. */
#define HAS(m) ((mask & FIELDS_BIT(m)) != 0)

/* `,"source":"override"` or `..."declared"`, then `tail`, one literal. */
#define PUT_SOURCE(p, d, tail)                                                  \
	do {                                                                    \
		if ((d)->res.resolved.from_override) {                          \
			LIT(p, VOCAB_NEXT_KEY(SOURCE) "\"override\"" tail);     \
		} else {                                                        \
			LIT(p, VOCAB_NEXT_KEY(SOURCE) "\"declared\"" tail);     \
		}                                                               \
	} while (0)

/* The inputs' echo, first the target and the model as the catalog names
 * them and what the decision read of each. */
static inline __attribute__((always_inline)) char *
put_entries(char *p, const struct decision *d, unsigned mask)
{
	/* catalog names cannot hold a NUL (jsonin refuses \u0000), so
	 * name_len is the strlen a writer call would take */
	if (HAS(FM_TARGET)) {
		LIT(p, "{" VOCAB_KEY(TARGET)); /* the first member when it is asked for */
		p = put_name_or_null(p, d->target ? &d->target->names : NULL);
	}
	if (HAS(FM_SM_COUNT)) {
		LIT(p, VOCAB_NEXT_KEY(SM_COUNT));
		p = decimal_put_u64(p, d->sm_count);
	}
	if (HAS(FM_DECLARED)) {
		LIT(p, VOCAB_NEXT_KEY(DECLARED));
		p = put_label(p, d->res.declared);
	}
	if (HAS(FM_MODEL)) {
		LIT(p, VOCAB_NEXT_KEY(MODEL));
		p = put_name_or_null(p, d->model ? &d->model->names : NULL);
	}
	if (HAS(FM_NUM_Q_HEADS)) {
		LIT(p, VOCAB_NEXT_KEY(NUM_Q_HEADS));
		p = decimal_put_u64(p, d->num_q_heads);
	}
	if (HAS(FM_HEAD_DIM)) {
		LIT(p, VOCAB_NEXT_KEY(HEAD_DIM));
		if (d->head_dim == 0) {
			LIT(p, "null");
		} else {
			p = decimal_put_u64(p, d->head_dim);
		}
	}
	return p;
}

/* The request's shape, and the override it was read with. */
static inline __attribute__((always_inline)) char *
put_shape(char *p, const struct decision *d, unsigned mask)
{
	if (HAS(FM_MAX_BATCH_SIZE)) {
		LIT(p, VOCAB_NEXT_KEY(MAX_BATCH_SIZE));
		p = decimal_put_u64(p, d->shape.max_batch_size);
	}
	if (HAS(FM_NUM_SEQS)) {
		LIT(p, VOCAB_NEXT_KEY(NUM_SEQS));
		p = decimal_put_u64(p, d->shape.num_seqs);
	}
	if (HAS(FM_MAX_ROWS)) {
		LIT(p, VOCAB_NEXT_KEY(MAX_ROWS));
		p = decimal_put_u64(p, d->shape.max_rows);
	}
	if (HAS(FM_OVERRIDE)) {
		LIT(p, VOCAB_NEXT_KEY(OVERRIDE));
		p = put_string_or_null(p, d->override.p, d->override.len);
	}
	return p;
}

/* The decision: the policy resolved, where it came from and its splits. */
static inline __attribute__((always_inline)) char *
put_policy(char *p, const struct decision *d, unsigned mask)
{
	if (HAS(FM_POLICY)) {
		LIT(p, VOCAB_NEXT_KEY(POLICY));
		p = put_label(p, d->res.resolved.policy);
	}
	if (HAS(FM_SOURCE) && HAS(FM_NUM_SPLITS)) {
		/* one literal for both keys, the whole answer's way */
		PUT_SOURCE(p, d, VOCAB_NEXT_KEY(NUM_SPLITS));
		p = decimal_put_u64(p, d->num_splits);
	} else if (HAS(FM_SOURCE)) {
		PUT_SOURCE(p, d, "");
	} else if (HAS(FM_NUM_SPLITS)) {
		LIT(p, VOCAB_NEXT_KEY(NUM_SPLITS));
		p = decimal_put_u64(p, d->num_splits);
	}
	return p;
}

/* What the splits take: the slots, and the bytes when the dtype is known. */
static inline __attribute__((always_inline)) char *
put_workspace(char *p, const struct decision *d, unsigned mask)
{
	if (HAS(FM_WORKSPACE_SLOTS)) {
		LIT(p, VOCAB_NEXT_KEY(WORKSPACE_SLOTS));
		p = decimal_put_u64(p, d->workspace_slots);
	}
	if (HAS(FM_WORKSPACE_BYTES)) {
		LIT(p, VOCAB_NEXT_KEY(WORKSPACE_BYTES));
		if (!d->workspace_bytes.known) {
			LIT(p, "null");
		} else if (d->workspace_bytes.hi == 0) {
			p = decimal_put_u64(p, d->workspace_bytes.lo);
		} else {
			p += decimal_format_u128(d->workspace_bytes.hi, d->workspace_bytes.lo, p);
		}
	}
	return p;
}

/* The warnings, and the catalog that answered: its digest and its name. */
static inline __attribute__((always_inline)) char *
put_tail(char *p, const struct decision *d, const struct catalog *cat, unsigned mask)
{
	if (HAS(FM_WARNINGS)) {
		LIT(p, VOCAB_NEXT_KEY(WARNINGS) "[");
		for (size_t i = 0; i < d->num_warnings; i++) {
			if (i > 0) {
				*p++ = ',';
			}
			if (d->warning_plain[i]) {
				p = put_plain(p, d->warnings[i], warning_len(d, i));
			} else {
				p = put_string(p, d->warnings[i], warning_len(d, i));
			}
		}
		*p++ = ']';
	}
	if (HAS(FM_CATALOG)) {
		/* the digest is ours ("fnv1a64:" and hex digits): nothing to escape */
		LIT(p, VOCAB_NEXT_KEY(CATALOG) "\"");
		/* every digest is CATALOG_DIGEST_LEN bytes (catalog_digest_ok) */
		memcpy(p, cat->digest, CATALOG_DIGEST_LEN);
		p += CATALOG_DIGEST_LEN;
		*p++ = '"';
	}
	if (HAS(FM_CATALOG_NAME)) {
		/* a catalog's name is plain (catalog_name_ok): nothing to escape */
		LIT(p, VOCAB_NEXT_KEY(CATALOG_NAME) "\"");
		memcpy(p, cat->name, cat->name_len);
		p += cat->name_len;
		*p++ = '"';
	}
	return p;
}

/* The object: its parts in the answer's order, then its braces (the
 * target writes its own `{`; without it the first comma becomes one). */
static inline __attribute__((always_inline)) size_t
write_members(char *out, const struct decision *d, const struct catalog *cat, unsigned mask)
{
	char *p = out;

	p = put_entries(p, d, mask);
	p = put_shape(p, d, mask);
	p = put_policy(p, d, mask);
	p = put_workspace(p, d, mask);
	p = put_tail(p, d, cat, mask);
	if (!HAS(FM_TARGET)) {
		if (p == out) {
			*p++ = '{'; /* no member */
		} else {
			out[0] = '{'; /* the first member's comma */
		}
	}
	*p++ = '}';
	return (size_t)(p - out);
}

size_t fragment_write(char *out, const struct decision *d, const struct catalog *cat,
		      unsigned mask)
{
	return write_members(out, d, cat, mask);
}

size_t fragment_write_all(char *out, const struct decision *d, const struct catalog *cat)
{
	return write_members(out, d, cat, FIELDS_ALL);
}
