/* SPDX-License-Identifier: AGPL-3.0-only */
#include "text.h"

#include <string.h>

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

long text_percent_decode(const char *in, size_t len, char *out)
{
	return decode(in, len, out, false);
}

enum text_query_status text_query_parse(const char *query, size_t len, char *scratch,
					struct text_param params[TEXT_MAX_PARAMS],
					size_t *num_params, size_t *bad_index)
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
		if (*num_params == TEXT_MAX_PARAMS) {
			return TEXT_QUERY_TOO_MANY;
		}
		k = decode(pair, key_len, scratch + used, true);
		if (k < 0) {
			*bad_index = *num_params;
			return TEXT_QUERY_BAD_ESCAPE;
		}
		params[*num_params].key = (struct text_slice){scratch + used, (size_t)k};
		used += (size_t)k;
		v = 0;
		if (eq != NULL) {
			v = decode(eq + 1, pair_len - key_len - 1, scratch + used, true);
			if (v < 0) {
				*bad_index = *num_params;
				return TEXT_QUERY_BAD_ESCAPE;
			}
		}
		params[*num_params].value = (struct text_slice){scratch + used, (size_t)v};
		used += (size_t)v;
		(*num_params)++;
	}
	return TEXT_QUERY_OK;
}

/* SWAR ("SIMD within a register") byte tests on eight bytes at once, from
 * the classic bit hacks: a lane's high bit is set when that byte is zero,
 * or less than n. Exact for every lane below the first hit, which is all
 * text_plain_run needs. */
#define ONES 0x0101010101010101u
#define HIGHS 0x8080808080808080u

static uint64_t zero_lanes(uint64_t x)
{
	return (x - ONES) & ~x & HIGHS;
}

static uint64_t less_lanes(uint64_t x, unsigned char n)
{
	return (x - ONES * n) & ~x & HIGHS;
}

size_t text_plain_run(const char *s, size_t len, bool ascii_only)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t x, hit;

		memcpy(&x, s + i, 8);
		hit = less_lanes(x, 0x20) | zero_lanes(x ^ (ONES * '"')) |
		      zero_lanes(x ^ (ONES * '\\')) | (ascii_only ? (x & HIGHS) : 0);
		if (hit != 0) {
			break; /* the byte-wise loop below finds which lane */
		}
	}
	for (; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '\\' || (ascii_only && c >= 0x80)) {
			break;
		}
	}
	return i;
}

bool text_parse_u32(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10 || s[0] < '1' || s[0] > '9') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
		v = v * 10u + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

bool text_ieq(const char *s, size_t len, const char *word)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (word[i] == '\0' || lower((unsigned char)s[i]) != lower((unsigned char)word[i])) {
			return false;
		}
	}
	return word[i] == '\0';
}

unsigned text_distance(const char *a, size_t alen, const char *b, size_t blen, unsigned cap)
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

bool text_is_near(const char *typed, size_t typed_len, const char *candidate)
{
	size_t clen = strlen(candidate);
	size_t longer = typed_len > clen ? typed_len : clen;
	unsigned limit = (unsigned)((longer + 2) / 3);
	unsigned d;

	if (limit > 2) {
		limit = 2;
	}
	d = text_distance(typed, typed_len, candidate, clen, limit + 1);
	return d > 0 && d <= limit;
}

char *text_quote(const char *s, size_t len, char *out, size_t cap)
{
	size_t n = len;

	if (len + 1 > cap) {
		n = cap > 4 ? cap - 4 : 0;
		/* step back to a scalar boundary: never cut inside a sequence */
		while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u) {
			n--;
		}
		memcpy(out, s, n);
		memcpy(out + n, "...", cap - n > 3 ? 4 : 1);
		out[cap - 1] = '\0';
		return out;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}
