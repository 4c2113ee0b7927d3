/* SPDX-License-Identifier: AGPL-3.0-only */
#include "events.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "jsonw.h"
#include "vocab.h"

/* snprintf that reports a cut as 0: a part of an event is no event. */
static size_t put(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

size_t events_preamble(char *out, size_t cap)
{
	return put(out, cap, "retry: %u\n\n", EVENTS_RETRY_MS);
}

size_t events_heartbeat(char *out, size_t cap)
{
	return put(out, cap, ": heartbeat\n\n");
}

#define REV_FMT "\"seq\":%llu,\"revision\":\"%s\",\"loaded_at\":%lld"
#define REV_ARGS(r) (unsigned long long)(r)->seq, (r)->revision, (long long)(r)->loaded_at

/* The OFREP message: no id (see the header), the digest as the etag. */
static size_t refetch(char *out, size_t cap, const struct events_revision *now)
{
	return put(out, cap,
		   "data: {\"type\":\"refetchEvaluation\",\"etag\":\"%s\",\"lastModified\":%lld}\n\n",
		   now->revision, (long long)now->loaded_at);
}

size_t events_hello(char *out, size_t cap, const char *boot, const struct events_revision *now)
{
	return put(out, cap, "id: %llu@%s\nevent: hello\ndata: {" REV_FMT "}\n\n",
		   (unsigned long long)now->seq, boot, REV_ARGS(now));
}

static void write_revision(struct jsonw *w, const struct events_revision *r)
{
	jsonw_kv_u64(w, "seq", r->seq);
	jsonw_kv_str(w, "revision", r->revision);
	jsonw_key(w, "loaded_at");
	jsonw_u64(w, r->loaded_at < 0 ? 0 : (uint64_t)r->loaded_at);
}

/* diff_cells' callback: the first `limit` cells listed, all counted. */
struct cell_list {
	struct jsonw *w;
	size_t limit, listed, changed;
};

static void list_cell(void *cls, const struct diff_cell *cell)
{
	struct cell_list *l = cls;

	if (l->listed < l->limit) {
		diff_write_cell(l->w, cell);
		l->listed++;
	}
	l->changed++;
}

/* The catalog event's text with `limit` cells at most, into a fresh `w`. */
static void render_change(struct jsonw *w, const char *boot, uint64_t id_seq, const char *name,
			  const struct events_revision *now, const struct events_revision *before,
			  const struct catalog *from, const struct catalog *to, size_t limit)
{
	struct decide_shape shape = DIFF_STREAM_SHAPE;
	struct cell_list l = {w, limit, 0, 0};
	size_t unchanged;

	buf_printf(&w->out,
		   "data: {\"type\":\"refetchEvaluation\",\"etag\":\"%s\",\"lastModified\":%lld}\n\n"
		   "id: %llu@%s\nevent: catalog\ndata: ",
		   now->revision, (long long)now->loaded_at, (unsigned long long)id_seq, boot);
	jsonw_object_begin(w);
	if (name != NULL) {
		jsonw_kv_str(w, VOCAB_M_CATALOG_NAME, name);
	}
	write_revision(w, now);
	jsonw_key(w, "previous");
	jsonw_object_begin(w);
	write_revision(w, before);
	jsonw_object_end(w);
	jsonw_key(w, "inputs");
	jsonw_object_begin(w);
	jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, shape.max_batch_size);
	jsonw_kv_u64(w, VOCAB_M_NUM_SEQS, shape.num_seqs);
	jsonw_kv_u64(w, VOCAB_M_MAX_ROWS, shape.max_rows);
	jsonw_object_end(w);
	jsonw_key(w, "cells");
	jsonw_array_begin(w);
	unchanged = diff_cells(from, to, shape, (struct slice){NULL, 0}, list_cell, &l);
	jsonw_array_end(w);
	jsonw_kv_u64(w, "changed", l.changed);
	jsonw_key(w, "truncated");
	jsonw_bool(w, l.listed < l.changed);
	jsonw_kv_u64(w, "unchanged", unchanged);
	jsonw_object_end(w);
	buf_add(&w->out, "\n\n", 2);
}

size_t events_change(char *out, size_t cap, const char *boot, const struct events_revision *now,
		     const struct events_revision *before, const struct catalog *from,
		     const struct catalog *to)
{
	return events_change_named(out, cap, boot, now->seq, NULL, now, before, from, to);
}

size_t events_change_named(char *out, size_t cap, const char *boot, uint64_t id_seq,
			   const char *name, const struct events_revision *now,
			   const struct events_revision *before, const struct catalog *from,
			   const struct catalog *to)
{
	struct jsonw w;
	size_t n = 0;

	if (cap > EVENTS_TEXT_MAX) {
		cap = EVENTS_TEXT_MAX;
	}
	/* every cell that fits, else none (names of 64 bytes, escaped, can
	 * make 16 cells too long): the counts and the flag still tell */
	for (size_t limit = EVENTS_CELLS_MAX;; limit = 0) {
		jsonw_init(&w, cap);
		render_change(&w, boot, id_seq, name, now, before, from, to, limit);
		if (!w.failed && w.len < cap) { /* room for the NUL, as put leaves */
			memcpy(out, w.buf, w.len);
			out[w.len] = '\0';
			n = w.len;
		}
		jsonw_cleanup(&w);
		if (n != 0 || limit == 0) {
			break;
		}
	}
	return n;
}

size_t events_reset(char *out, size_t cap, const char *boot, const struct events_revision *now,
		    const char *last_id)
{
	char shown[6 * 64 + 1]; /* 64 bytes at most, each escaped to 6 at worst (\u00XX) */
	size_t len = strnlen(last_id, 64), n = refetch(out, cap, now), m;

	if (n == 0) {
		return 0;
	}
	shown[jsonw_escape(shown, sizeof(shown) - 1, last_id, len)] = '\0';
	m = put(out + n, cap - n,
		"id: %llu@%s\nevent: reset\ndata: {" REV_FMT ",\"last_event_id\":\"%s\","
		"\"reason\":\"the changes since that id are not held here: fetch afresh\"}\n\n",
		(unsigned long long)now->seq, boot, REV_ARGS(now), shown);
	return m == 0 ? 0 : n + m;
}

size_t events_removed(char *out, size_t cap, const char *boot, uint64_t id_seq, const char *name,
		      const struct events_revision *last)
{
	/* a catalog's name needs no escaping (catalog_name_ok) */
	return put(out, cap,
		   "id: %llu@%s\nevent: removed\ndata: {\"" VOCAB_M_CATALOG_NAME "\":\"%s\","
		   REV_FMT ",\"reason\":\"catalog %s is no longer served (its file is gone)\"}\n\n",
		   (unsigned long long)id_seq, boot, name, REV_ARGS(last), name);
}

size_t events_all_hello(char *out, size_t cap, const char *boot, uint64_t seq,
			const struct events_named *cats, size_t n, const char *last_id)
{
	struct jsonw w;
	size_t len = 0;

	jsonw_init(&w, cap);
	buf_printf(&w.out, "id: %llu@%s\nevent: %s\ndata: ", (unsigned long long)seq, boot,
		   last_id != NULL ? "reset" : "hello");
	jsonw_object_begin(&w);
	jsonw_kv_u64(&w, "seq", seq);
	jsonw_key(&w, "catalogs");
	jsonw_array_begin(&w);
	for (size_t i = 0; i < n; i++) {
		jsonw_object_begin(&w);
		jsonw_kv_str(&w, VOCAB_M_CATALOG_NAME, cats[i].name);
		write_revision(&w, &cats[i].rev);
		jsonw_object_end(&w);
	}
	jsonw_array_end(&w);
	if (last_id != NULL) {
		char shown[65]; /* as sent, 64 bytes at most (escaped by the writer) */
		size_t len = strnlen(last_id, sizeof(shown) - 1);

		memcpy(shown, last_id, len);
		shown[len] = '\0';
		jsonw_kv_str(&w, "last_event_id", shown);
		jsonw_kv_str(&w, "reason",
			     "the changes since that id are not held here: fetch afresh");
	}
	jsonw_object_end(&w);
	buf_add(&w.out, "\n\n", 2);
	if (!w.failed && w.len < cap) {
		memcpy(out, w.buf, w.len);
		out[w.len] = '\0';
		len = w.len;
	}
	jsonw_cleanup(&w);
	return len;
}

int events_parse_id(const char *last_id, const char *boot, uint64_t *seq)
{
	uint64_t v = 0;
	size_t i = 0;

	if (last_id == NULL) {
		return -1;
	}
	/* no sign, no leading zero, no overflow: the form splitkd writes */
	for (; last_id[i] >= '0' && last_id[i] <= '9'; i++) {
		if (i == 19 || (i > 0 && v == 0)) {
			return -1;
		}
		v = v * 10 + (uint64_t)(last_id[i] - '0');
	}
	if (i == 0 || v == 0 || last_id[i] != '@' || strcmp(last_id + i + 1, boot) != 0) {
		return -1;
	}
	*seq = v;
	return 0;
}
