/* SPDX-License-Identifier: AGPL-3.0-only */
#include "warning.h"

#include <stdio.h>
#include <string.h>

#include "names.h"
#include "quote.h"

void warning_unparsed(char *out, size_t cap, const char *what, struct slice spelling,
		      const char *so, const char *near)
{
	char quoted[QUOTE_MAX];

	quote_excerpt(spelling.p, spelling.len, quoted, sizeof(quoted));
	snprintf(out, cap, "%s \"%s\" does not parse, so %s, as the engine does%s%s%s", what, quoted,
		 so, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
}

const char *warning_suggest_spelling(struct slice spelling)
{
	static const char *const words[] = {"legacy", "auto", "off", "false"};

	return names_nearest(spelling.p, spelling.len, words, sizeof(words) / sizeof(words[0]));
}

void warning_clamped(char *out, size_t cap, uint32_t requested, uint32_t clamped)
{
	snprintf(out, cap, "override %u is clamped to %u (MAX_DECODE_SPLITS)", requested, clamped);
}

void warning_rows_below_batch(char *out, size_t cap, uint32_t max_rows, uint32_t max_batch_size)
{
	snprintf(out, cap,
		 "max_rows (%u) is below max_batch_size (%u): the workspace must cover the "
		 "widest batch the decode-metadata layout accepts",
		 max_rows, max_batch_size);
}

void warning_seqs_above_rows(char *out, size_t cap, uint32_t num_seqs, uint32_t max_rows)
{
	snprintf(out, cap,
		 "num_seqs (%u) is above max_rows (%u): a batch that wide would write past "
		 "the workspace",
		 num_seqs, max_rows);
}

void warning_slots_saturated(char *out, size_t cap)
{
	snprintf(out, cap, "workspace_slots saturated at 4294967295 (the seed's u32 arithmetic): the "
			   "true need is larger");
}

/* Appends s[0..len) to out[*n..cap - 1), cut as snprintf cuts. */
static void append(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	size_t room = cap - 1 - *n;
	size_t take = len < room ? len : room;

	memcpy(out + *n, s, take);
	*n += take;
}

/* Every catalog model without a head_dim earns this on every answer, so it
 * is put together from its pieces, not through snprintf (a thirtieth of a
 * GET's instructions). */
size_t warning_no_bytes(char *out, size_t cap, const char *model, size_t model_len)
{
	static const char head[] = "workspace_bytes is null: head_dim is not known";
	static const char tail[] = "; pass head_dim";
	size_t n = 0;

	if (cap == 0) {
		return 0;
	}
	append(out, cap, &n, head, sizeof(head) - 1);
	if (model != NULL) {
		append(out, cap, &n, " for ", 5);
		append(out, cap, &n, model, model_len);
	}
	append(out, cap, &n, tail, sizeof(tail) - 1);
	out[n] = '\0';
	return n;
}
