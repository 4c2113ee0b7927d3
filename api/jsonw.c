/* SPDX-License-Identifier: AGPL-3.0-only */
#include "jsonw.h"

#include <string.h>

#include "decimal.h"
#include "jsonscan.h"
#include "splitk.h"

void jsonw_init(struct jsonw *w, size_t hint)
{
	memset(w, 0, sizeof(*w));
	buf_init(&w->out, hint ? hint : 512);
	w->first[0] = true;
	buf_terminate(&w->out);
}

void jsonw_cleanup(struct jsonw *w)
{
	buf_free(&w->out);
}

char *jsonw_take(struct jsonw *w, size_t *len)
{
	return buf_take(&w->out, len);
}

/* Room for n more bytes and the NUL jsonw_terminate may add, or NULL once
 * the writer has failed. Callers write straight into it: bytes assembled
 * in a stack chunk and then copied stalled on store forwarding (keys were
 * 7% of the cycles under load). */
static inline char *reserve(struct jsonw *w, size_t n)
{
	return buf_room(&w->out, n + 1);
}

void jsonw_reserve(struct jsonw *w, size_t n)
{
	if (w->failed || n + 1 <= w->cap - w->len) {
		return;
	}
	if (n > SIZE_MAX - w->len - 1) {
		w->failed = true;
		return;
	}
	(void)buf_grow_to(&w->out, w->len + n + 1);
}

static inline void put(struct jsonw *w, const char *s, size_t n)
{
	char *out = reserve(w, n);

	if (out != NULL) {
		memcpy(out, s, n);
		w->len += n;
	}
}

static void put_char(struct jsonw *w, char c)
{
	put(w, &c, 1);
}

/* Before every key, and every value that is not a key's: the comma. */
static void separate(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->first[w->depth]) {
		w->first[w->depth] = false;
	} else {
		put_char(w, ',');
	}
}

static void open_container(struct jsonw *w, char c)
{
	separate(w);
	put_char(w, c);
	if (w->depth + 1 >= JSONW_MAX_DEPTH) {
		w->failed = true;
		return;
	}
	w->depth++;
	w->first[w->depth] = true;
}

static void close_container(struct jsonw *w, char c)
{
	if (w->depth > 0) {
		w->depth--;
	}
	put_char(w, c);
}

void jsonw_object_begin(struct jsonw *w)
{
	open_container(w, '{');
}

void jsonw_object_end(struct jsonw *w)
{
	close_container(w, '}');
}

void jsonw_array_begin(struct jsonw *w)
{
	open_container(w, '[');
}

void jsonw_array_end(struct jsonw *w)
{
	close_container(w, ']');
}

/* The bytes to write for the unit at the start of s[0..len) that is not
 * plain (jsonscan_plain_run is 0 there): one UTF-8 sequence, or one byte
 * to escape or replace. The one set of escaping rules, for the growing
 * writer and the fixed buffer alike. */
struct escaped {
	const char *out; /* into the input, a static string, or esc */
	size_t out_len;
	size_t used; /* input bytes taken */
	char esc[6];
};

static void escape_unit(const char *s, size_t len, struct escaped *e)
{
	static const char hex[] = "0123456789abcdef";
	static const char shortened[] = "\"\\\n\r\t", short_names[] = "\"\\nrt";
	unsigned char c = (unsigned char)s[0];
	const char *at;
	size_t n = 2;

	e->out = s;
	e->out_len = e->used = 1;
	if (c >= 0x80) {
		/* one whole UTF-8 scalar, or U+FFFD for a bad byte */
		while (n <= 4 && n <= len && !splitk_utf8_valid(s, n)) {
			n++;
		}
		if (n > 4 || n > len) {
			e->out = "\xef\xbf\xbd";
			e->out_len = 3;
		} else {
			e->out_len = e->used = n;
		}
		return;
	}
	/* the five with a short escape, then \u00XX for other controls */
	at = memchr(shortened, c, sizeof(shortened) - 1);
	e->out = e->esc;
	e->esc[0] = '\\';
	if (at != NULL) {
		e->esc[1] = short_names[at - shortened];
		e->out_len = 2;
		return;
	}
	memcpy(e->esc + 1, "u00", 3);
	e->esc[4] = hex[c >> 4];
	e->esc[5] = hex[c & 0xF];
	e->out_len = 6;
}

static void put_escaped(struct jsonw *w, const char *s, size_t len)
{
	size_t i = 0;

	put_char(w, '"');
	while (i < len) {
		struct escaped e;
		size_t run = jsonscan_plain_run(s + i, len - i, true);

		put(w, s + i, run); /* plain bytes, copied as they are */
		i += run;
		if (i == len) {
			break;
		}
		escape_unit(s + i, len - i, &e);
		put(w, e.out, e.out_len);
		i += e.used;
	}
	put_char(w, '"');
}

size_t jsonw_escape(char *out, size_t cap, const char *s, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len && n < cap) {
		struct escaped e;
		size_t run = jsonscan_plain_run(s + i, len - i, true);

		/* a plain run is ASCII: it may be cut anywhere */
		run = run < cap - n ? run : cap - n;
		memcpy(out + n, s + i, run);
		n += run;
		i += run;
		if (i == len || n == cap) {
			break;
		}
		escape_unit(s + i, len - i, &e);
		if (e.out_len > cap - n) {
			break; /* never half a sequence or half an escape */
		}
		memcpy(out + n, e.out, e.out_len);
		n += e.out_len;
		i += e.used;
	}
	return n;
}

void jsonw_keyn(struct jsonw *w, const char *key, size_t n)
{
	size_t at = 0;
	bool comma = !w->after_key && !w->first[w->depth];
	char *out = reserve(w, n + 4);

	if (out == NULL) {
		return;
	}
	/* keys are names in our own code, never input: no escaping to do */
	if (w->after_key) {
		w->after_key = false;
	}
	w->first[w->depth] = false;
	if (comma) {
		out[at++] = ',';
	}
	out[at++] = '"';
	memcpy(out + at, key, n);
	at += n;
	out[at++] = '"';
	out[at++] = ':';
	w->len += at;
	w->after_key = true;
}

void jsonw_terminate(struct jsonw *w)
{
	/* put() always leaves room for one more byte */
	buf_terminate(&w->out);
}

void jsonw_strn(struct jsonw *w, const char *s, size_t len)
{
	separate(w);
	put_escaped(w, s, len);
}

void jsonw_str(struct jsonw *w, const char *s)
{
	jsonw_strn(w, s, strlen(s));
}

void jsonw_u64(struct jsonw *w, uint64_t v)
{
	char digits[20], *out;
	size_t n = 0;

	separate(w);
	/* one pass of divisions into a small buffer, then one copy: the
	 * numbers here are short (a count, an SM count), so this is cheaper
	 * than counting the digits first */
	do {
		digits[sizeof(digits) - ++n] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v != 0);
	out = reserve(w, n);
	if (out == NULL) {
		return;
	}
	memcpy(out, digits + sizeof(digits) - n, n);
	w->len += n;
}

void jsonw_u128(struct jsonw *w, uint64_t hi, uint64_t lo)
{
	char d[DECIMAL_U128_MAX];
	size_t n;

	if (hi == 0) {
		jsonw_u64(w, lo);
		return;
	}
	n = decimal_format_u128(hi, lo, d);
	separate(w);
	put(w, d, n);
}

void jsonw_milli(struct jsonw *w, uint64_t v)
{
	char frac[4] = {'.', (char)('0' + v / 100u % 10u), (char)('0' + v / 10u % 10u),
			(char)('0' + v % 10u)};

	jsonw_u64(w, v / 1000u); /* the whole part, and the comma before it */
	put(w, frac, 4);
}

void jsonw_bool(struct jsonw *w, bool v)
{
	separate(w);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

void jsonw_null(struct jsonw *w)
{
	separate(w);
	put(w, "null", 4);
}

void jsonw_raw(struct jsonw *w, const char *json, size_t len)
{
	separate(w);
	put(w, json, len);
}

char *jsonw_raw_room(struct jsonw *w, size_t max)
{
	separate(w);
	return reserve(w, max);
}

void jsonw_raw_done(struct jsonw *w, size_t len)
{
	w->len += len;
}

void jsonw_strs(struct jsonw *w, const char *const *s, size_t n)
{
	jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		jsonw_str(w, s[i]);
	}
	jsonw_array_end(w);
}

void jsonw_str_or_null(struct jsonw *w, const char *s)
{
	if (s == NULL) {
		jsonw_null(w);
	} else {
		jsonw_str(w, s);
	}
}

void jsonw_u64_or_null(struct jsonw *w, uint64_t v)
{
	if (v == 0) {
		jsonw_null(w);
	} else {
		jsonw_u64(w, v);
	}
}
