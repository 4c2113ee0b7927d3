/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the state directory's reader (statefile.h,
 * history.h): what splitkd reads back from --state-dir at start. The
 * input's first line is a file name, the rest its bytes: a revision file
 * is taken only when it is a catalog whose digest its name says, and its
 * canonical form is taken again under the same name; every other line of
 * the rest is read as a history line, and a line taken writes back to a
 * line that reads to the same entry; the rest as streams.json, whose seqs
 * taken rise and write back to the same file. No crash, no leak, every refusal
 * says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "catalog.h"
#include "history.h"
#include "jsonw.h"
#include "statefile.h"

static void check_revision(const char *name, const char *data, size_t len)
{
	char err[640] = "", digest[CATALOG_DIGEST_LEN + 1], again_name[STATEFILE_NAME_LEN + 1];
	struct catalog *cat = statefile_read(name, data, len, err, sizeof(err)), *again;
	struct jsonw w;

	if (cat == NULL) {
		CHECK(err[0] != '\0');
		return;
	}
	CHECK(statefile_digest_of(name, digest));
	CHECK(strcmp(cat->digest, digest) == 0);
	CHECK(statefile_name(cat->digest, again_name, sizeof(again_name)) == 0);
	CHECK(strcmp(again_name, name) == 0);
	jsonw_init(&w, 0);
	catalog_write(&w, cat, false);
	CHECK(!w.failed);
	again = statefile_read(name, w.buf, w.len, err, sizeof(err));
	CHECK(again != NULL);
	jsonw_cleanup(&w);
	catalog_free(again);
	catalog_free(cat);
}

static void check_history_line(const char *line, size_t len)
{
	struct history_entry e, back;
	char err[128] = "", out[HISTORY_LINE_MAX];
	size_t n;

	if (history_parse_line(line, len, &e, err, sizeof(err)) != 0) {
		CHECK(err[0] != '\0');
		return;
	}
	n = history_line(&e, out, sizeof(out));
	if (n == 0) {
		return; /* an entry longer than a line splitkd writes: read, never rewritten */
	}
	CHECK(out[n - 1] == '\n');
	CHECK(history_parse_line(out, n - 1, &back, err, sizeof(err)) == 0);
	CHECK(back.seq == e.seq && back.at_ms == e.at_ms && back.trigger == e.trigger);
	CHECK(back.ok == e.ok && back.changed == e.changed && back.changed_cells == e.changed_cells);
	CHECK(strcmp(back.catalog, e.catalog) == 0 && strcmp(back.error, e.error) == 0);
	CHECK(strcmp(back.from, e.from) == 0 && strcmp(back.to, e.to) == 0);
}

static void check_streams(const char *data, size_t len)
{
	struct statefile_seq seqs[8], back[8];
	char boot[EVENTS_BOOT_LEN + 1], boot_back[EVENTS_BOOT_LEN + 1], err[160] = "";
	size_t n = 0, m = 0;
	struct jsonw w;

	if (statefile_read_streams(data, len, boot, seqs, 8, &n, err, sizeof(err)) != 0) {
		CHECK(err[0] != '\0' && n == 0);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		CHECK(seqs[i].seq > seqs[i - 1].seq);
	}
	jsonw_init(&w, 0);
	statefile_write_streams(&w, boot, seqs, n);
	CHECK(!w.failed);
	CHECK(statefile_read_streams(w.buf, w.len, boot_back, back, 8, &m, err, sizeof(err)) == 0);
	CHECK(m == n && strcmp(boot, boot_back) == 0);
	for (size_t i = 0; i < m; i++) {
		CHECK(back[i].seq == seqs[i].seq && strcmp(back[i].revision, seqs[i].revision) == 0);
	}
	jsonw_cleanup(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	size_t name_len = nl != NULL ? (size_t)(nl - text) : size;
	size_t rest = nl != NULL ? size - name_len - 1 : 0;
	char name[64];

	if (name_len >= sizeof(name) || memchr(text, '\0', name_len) != NULL) {
		return 0;
	}
	memcpy(name, text, name_len);
	name[name_len] = '\0';
	if (nl == NULL) {
		return 0;
	}
	check_revision(name, nl + 1, rest);
	check_streams(nl + 1, rest);
	for (size_t start = 0, i = 0; i <= rest; i++) {
		if (i == rest || nl[1 + i] == '\n') {
			check_history_line(nl + 1 + start, i - start);
			start = i + 1;
		}
	}
	return 0;
}
