/* SPDX-License-Identifier: AGPL-3.0-only */
#include "names.h"

#include <string.h>

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

bool names_equal(const char *s, size_t len, const char *word)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (word[i] == '\0' || lower((unsigned char)s[i]) != lower((unsigned char)word[i])) {
			return false;
		}
	}
	return word[i] == '\0';
}

static bool is_separator(char c)
{
	return c == '_' || c == '-';
}

bool names_equal_folded(const char *s, size_t len, const char *word)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < len && is_separator(s[i])) {
			i++;
		}
		while (word[j] != '\0' && is_separator(word[j])) {
			j++;
		}
		if (i == len || word[j] == '\0') {
			return i == len && word[j] == '\0';
		}
		if (lower((unsigned char)s[i]) != lower((unsigned char)word[j])) {
			return false;
		}
		i++;
		j++;
	}
}

unsigned names_distance(const char *a, size_t alen, const char *b, size_t blen, unsigned cap)
{
	unsigned row[65];

	if (alen > 64 || blen > 64) {
		return cap;
	}
	for (size_t j = 0; j <= blen; j++) {
		row[j] = (unsigned)j;
	}
	for (size_t i = 1; i <= alen; i++) {
		unsigned diag = row[0], best;

		row[0] = (unsigned)i;
		best = row[0];
		for (size_t j = 1; j <= blen; j++) {
			unsigned up = row[j];
			unsigned cost = lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 1]) ? 0 : 1;
			unsigned v = diag + cost;

			if (up + 1 < v) {
				v = up + 1;
			}
			if (row[j - 1] + 1 < v) {
				v = row[j - 1] + 1;
			}
			row[j] = v;
			diag = up;
			if (v < best) {
				best = v;
			}
		}
		if (best >= cap) {
			return cap; /* every path is already too far */
		}
	}
	return row[blen] < cap ? row[blen] : cap;
}

bool names_is_near(const char *typed, size_t typed_len, const char *candidate)
{
	size_t clen = strlen(candidate);
	size_t longer = typed_len > clen ? typed_len : clen;
	unsigned limit = (unsigned)((longer + 2) / 3);
	unsigned d;

	if (limit > 2) {
		limit = 2;
	}
	d = names_distance(typed, typed_len, candidate, clen, limit + 1);
	return d > 0 && d <= limit;
}

void names_near_init(struct names_near *n, const char *typed, size_t typed_len, unsigned flags)
{
	n->typed = typed;
	n->typed_len = typed_len;
	n->flags = flags;
	n->best = NULL;
	n->best_distance = 0;
}

void names_near_offer(struct names_near *n, const char *candidate)
{
	size_t clen = strlen(candidate);
	unsigned d;

	if (((n->flags & NAMES_SAME) && names_equal(n->typed, n->typed_len, candidate)) ||
	    ((n->flags & NAMES_FOLDED) && names_equal_folded(n->typed, n->typed_len, candidate))) {
		d = 0;
	} else if (names_is_near(n->typed, n->typed_len, candidate)) {
		d = names_distance(n->typed, n->typed_len, candidate, clen, 3);
	} else if ((n->flags & NAMES_PREFIX) && n->typed_len >= 4 && clen > n->typed_len &&
		   (candidate[n->typed_len] == '_' || candidate[n->typed_len] == '-') &&
		   names_distance(n->typed, n->typed_len, candidate, n->typed_len, 1) == 0) {
		d = 3; /* after any edit-distance match, which is at most 2 */
	} else {
		return;
	}
	if (n->best == NULL || d < n->best_distance) {
		n->best = candidate;
		n->best_distance = d;
	}
}

const char *names_nearest(const char *typed, size_t typed_len, const char *const *candidates,
			  size_t count)
{
	struct names_near n;

	names_near_init(&n, typed, typed_len, 0);
	for (size_t i = 0; i < count; i++) {
		names_near_offer(&n, candidates[i]);
	}
	return n.best;
}
