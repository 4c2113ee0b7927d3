/* SPDX-License-Identifier: AGPL-3.0-only */
#include "answer.h"

#include <string.h>

#include "explain.h"
#include "fields.h"
#include "fragment.h"
#include "vocab.h"

/* An answer with a tail: the fragment's members, then, behind a comma in
 * place of the fragment's closing brace, each sequence's count of a mixed
 * batch (seq_lens: the seed's count is the same for every sequence, its
 * point) where it is asked for, and explain's object (written
 * first to know its length). Never inlined: its frame would cost every
 * answer without them a heavier prologue. */
static __attribute__((noinline)) void write_with_tail(struct jsonw *w, const struct decision *d,
						      const struct catalog *cat, unsigned mask)
{
	struct jsonw x;
	char *at;
	size_t n;

	jsonw_init(&x, 2048);
	jsonw_object_begin(&x);
	if (d->by_seq_n > 0 && (mask & FIELDS_BIT(FM_NUM_SPLITS_BY_SEQ))) {
		jsonw_key(&x, VOCAB_M_NUM_SPLITS_BY_SEQ);
		jsonw_array_begin(&x);
		for (uint32_t i = 0; i < d->by_seq_n; i++) {
			jsonw_u64(&x, d->num_splits);
		}
		jsonw_array_end(&x);
	}
	if (d->explain && (mask & FIELDS_BIT(FM_EXPLAIN))) {
		explain_write(&x, d);
	}
	jsonw_object_end(&x);
	at = x.failed ? NULL : jsonw_raw_room(w, fragment_bound(d, cat) + x.len);
	if (at != NULL) {
		n = fragment_write(at, d, cat, mask) - 1; /* less its closing brace */
		if (x.len > 2) {
			if (n > 1) {
				at[n++] = ',';
			}
			memcpy(at + n, x.buf + 1, x.len - 1); /* {...} less its '{' */
			n += x.len - 1;
		} else {
			at[n++] = '}';
		}
		jsonw_raw_done(w, n);
	}
	w->failed = w->failed || x.failed;
	jsonw_cleanup(&x);
}

/* Some members, a mixed batch's or explain: out of line, so that the
 * whole answer's path below carries no mask through its calls. */
static __attribute__((noinline)) void write_masked(struct jsonw *w, const struct decision *d,
						   const struct catalog *cat, unsigned mask)
{
	char *at;

	if ((d->explain && (mask & FIELDS_BIT(FM_EXPLAIN))) || d->by_seq_n > 0) {
		write_with_tail(w, d, cat, mask);
		return;
	}
	at = jsonw_raw_room(w, fragment_bound(d, cat));
	if (at != NULL) {
		jsonw_raw_done(w, fragment_write(at, d, cat, mask));
	}
}

void answer_write(struct jsonw *w, const struct decision *d, const struct catalog *cat,
		  unsigned mask)
{
	char *at;

	if (mask != FIELDS_ALL || d->explain || d->by_seq_n > 0) {
		write_masked(w, d, cat, mask);
		return;
	}
	/* the whole answer, the hot path (GET, the batch), written in place */
	at = jsonw_raw_room(w, fragment_bound(d, cat));
	if (at != NULL) {
		jsonw_raw_done(w, fragment_write_all(at, d, cat));
	}
}

void answer_batch_begin(struct jsonw *w, size_t count, size_t each_bytes)
{
	/* size the buffer once, not by doubling */
	jsonw_reserve(w, count * each_bytes);
	jsonw_object_begin(w);
	jsonw_kv_u64(w, "count", count);
	jsonw_key(w, "results");
	jsonw_array_begin(w);
}

void answer_batch_error(struct jsonw *w, const struct problem *p)
{
	jsonw_object_begin(w);
	jsonw_key(w, "error");
	problem_write(w, p);
	jsonw_object_end(w);
}

void answer_batch_end(struct jsonw *w, size_t failures, const struct catalog *cat)
{
	jsonw_array_end(w);
	jsonw_kv_u64(w, "failures", failures);
	jsonw_kv_str(w, "catalog", cat->digest);
	jsonw_object_end(w);
}
