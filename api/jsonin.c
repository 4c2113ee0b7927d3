/* SPDX-License-Identifier: AGPL-3.0-only */
#include "jsonin.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitk.h"

/* Where byte `off` of text is, for a message: "offset 17 (line 2,
 * column 5)". Lines are counted by '\n' from 1; the column counts
 * characters (not UTF-8 continuation bytes) from 1. */
static void locate(const char *text, size_t off, char *out, size_t cap)
{
	size_t line = 1, column = 1;

	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			column = 1;
		} else if (((unsigned char)text[i] & 0xC0u) != 0x80u) {
			column++;
		}
	}
	snprintf(out, cap, "offset %zu (line %zu, column %zu)", off, line, column);
}

/* "<what> at <where>" into err. */
static void fail_at(char *err, size_t err_cap, const char *what, const char *text, size_t off)
{
	char where[80];

	locate(text, off, where, sizeof(where));
	snprintf(err, err_cap, "%s at %s", what, where);
}

/* One pass over the text, outside cJSON: what it would let through. */
/* The bytes the scan must look at: outside a string (OUT), NUL and the
 * brackets; inside one (IN), NUL and the other controls, the quote and the
 * backslash. Everything else is skipped with one table look-up a byte (this
 * scan was a tenth of a batch request's instructions). */
enum { OUT = 1, IN = 2 };

#define CONTROLS(x) [x] = IN, [x + 1] = IN, [x + 2] = IN, [x + 3] = IN
static const unsigned char byte_class[256] = {
	[0x00] = IN | OUT, [0x01] = IN, [0x02] = IN, [0x03] = IN,
	CONTROLS(0x04), CONTROLS(0x08), CONTROLS(0x0C), CONTROLS(0x10),
	CONTROLS(0x14), CONTROLS(0x18), CONTROLS(0x1C),
	['"'] = IN | OUT, ['\\'] = IN, ['['] = OUT, ['{'] = OUT, [']'] = OUT, ['}'] = OUT,
};
#undef CONTROLS

/* At text[*i], a backslash in a string: refuses \u0000, else steps over
 * the escaped character (which cannot end the string). */
static bool escape_ok(const char *text, size_t len, size_t *i, char *err, size_t err_cap)
{
	if (*i + 1 >= len) {
		return true; /* cJSON refuses the unfinished string */
	}
	if (text[*i + 1] == 'u' && *i + 5 < len && memcmp(text + *i + 2, "0000", 4) == 0) {
		fail_at(err, err_cap, "\\u0000 in a string", text, *i);
		return false;
	}
	(*i)++;
	return true;
}

static bool prescan(const char *text, size_t len, char *err, size_t err_cap)
{
	const unsigned char *u = (const unsigned char *)text;
	bool in_string = false;
	int depth = 0;

	if (!splitk_utf8_valid(text, len)) {
		snprintf(err, err_cap, "the body is not valid UTF-8");
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char look = in_string ? IN : OUT, c;

		while (i < len && (byte_class[u[i]] & look) == 0) {
			i++;
		}
		if (i == len) {
			break;
		}
		c = u[i];
		if (c == '\0') {
			fail_at(err, err_cap, "NUL byte", text, i);
			return false;
		}
		if (in_string) {
			if (c < 0x20) {
				fail_at(err, err_cap, "unescaped control character in a string", text, i);
				return false;
			}
			if (c == '\\' && !escape_ok(text, len, &i, err, err_cap)) {
				return false;
			}
			in_string = c != '"';
		} else if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > JSONIN_MAX_DEPTH) {
				char what[48];

				snprintf(what, sizeof(what), "nesting deeper than %d levels", JSONIN_MAX_DEPTH);
				fail_at(err, err_cap, what, text, i);
				return false;
			}
		} else {
			depth--;
		}
	}
	return true;
}

#define BLOCK_BYTES (64u * 1024u)

struct jsonin_block {
	struct jsonin_block *next;
	size_t used, cap;
	alignas(max_align_t) char data[];
};

/* The arena the calling thread is parsing into, if any. Thread-local
 * because cJSON's hooks take no context pointer; set only for the length
 * of one cJSON_ParseWithLengthOpts call in jsonin_parse_in. */
static _Thread_local struct jsonin_arena *parsing_into;

static void *arena_malloc(size_t n)
{
	struct jsonin_arena *a = parsing_into;
	struct jsonin_block *b;
	size_t need = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);

	if (a == NULL) {
		return malloc(n);
	}
	b = a->blocks;
	if (b == NULL || b->cap - b->used < need) {
		size_t cap = need > BLOCK_BYTES ? need : BLOCK_BYTES;

		b = malloc(sizeof(*b) + cap);
		if (b == NULL) {
			return NULL;
		}
		b->used = 0;
		b->cap = cap;
		b->next = a->blocks;
		a->blocks = b;
	}
	b->used += need;
	return b->data + b->used - need;
}

static void arena_free(void *p)
{
	/* while parsing into an arena, cJSON only frees what it just took
	 * from it (a failed parse deletes its partial tree): the arena's
	 * cleanup returns that memory */
	if (parsing_into == NULL) {
		free(p);
	}
}

void jsonin_init(void)
{
	cJSON_Hooks hooks = {arena_malloc, arena_free};

	cJSON_InitHooks(&hooks);
}

cJSON *jsonin_parse_in(struct jsonin_arena *arena, const char *text, size_t len, char *err,
		       size_t err_cap)
{
	parsing_into = arena;
	arena->root = jsonin_parse(text, len, err, err_cap);
	parsing_into = NULL;
	return arena->root;
}

void jsonin_arena_cleanup(struct jsonin_arena *arena)
{
	if (arena->blocks == NULL) {
		cJSON_Delete(arena->root); /* no hooks: the tree was malloc'd */
	}
	while (arena->blocks != NULL) {
		struct jsonin_block *next = arena->blocks->next;

		free(arena->blocks);
		arena->blocks = next;
	}
	arena->root = NULL;
}

static bool white(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first comma outside a string followed (past white space) by '}' or
 * ']', or len when there is none. Only called once a parse has failed. */
static size_t stray_comma(const char *text, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (text[i] == '\\') {
				i++;
			} else if (text[i] == '"') {
				in_string = false;
			}
		} else if (text[i] == '"') {
			in_string = true;
		} else if (text[i] == ',') {
			size_t j = i + 1;

			while (j < len && white(text[j])) {
				j++;
			}
			if (j < len && (text[j] == '}' || text[j] == ']')) {
				return i;
			}
		}
	}
	return len;
}

cJSON *jsonin_parse(const char *text, size_t len, char *err, size_t err_cap)
{
	const char *end = NULL;
	cJSON *root;

	if (len == 0) {
		snprintf(err, err_cap, "the body is empty");
		return NULL;
	}
	if (!prescan(text, len, err, err_cap)) {
		return NULL;
	}
	/* On failure cJSON reports where it stopped through `end` (as well
	 * as in its global error pointer, which is never read here). */
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (root == NULL) {
		size_t off = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		size_t comma = stray_comma(text, len);

		/* after a stray comma cJSON stops at the bracket ("1,}": one
		 * column past it), or past it; the mistake a person looks
		 * for is the comma, so name it */
		if (comma < len && comma <= off) {
			fail_at(err, err_cap, "malformed JSON: a comma with nothing after it", text, comma);
		} else {
			fail_at(err, err_cap, "malformed JSON", text, off);
		}
		return NULL;
	}
	while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) {
		end++;
	}
	if (end != text + len) {
		fail_at(err, err_cap, "trailing data after the JSON value", text, (size_t)(end - text));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* An integral JSON number from lo to hi (0 <= lo, hi <= 2^53 - 1), or
 * false with *out untouched. */
static bool integer_in(const cJSON *item, double lo, double hi, uint64_t *out)
{
	double d;

	if (!cJSON_IsNumber(item)) {
		return false;
	}
	d = item->valuedouble;
	/* NaN fails every comparison, infinities fail the range; within it
	 * the cast is exact, so the integral test is too */
	if (!(d >= lo && d <= hi) || d != (double)(uint64_t)d) {
		return false;
	}
	*out = (uint64_t)d;
	return true;
}

bool jsonin_u32(const cJSON *item, uint32_t *out)
{
	uint64_t v;

	if (!integer_in(item, 1.0, 4294967295.0, &v)) {
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

bool jsonin_u53(const cJSON *item, uint64_t *out)
{
	return integer_in(item, 0.0, 9007199254740991.0, out);
}

enum jsonin_keys jsonin_check_keys(const cJSON *object, const char *const *allowed,
				   size_t num_allowed, const char **bad)
{
	uint64_t seen = 0;

	for (const cJSON *m = object->child; m != NULL; m = m->next) {
		size_t i = 0;

		while (i < num_allowed && i < 64 && strcmp(m->string, allowed[i]) != 0) {
			i++;
		}
		*bad = m->string;
		if (i == num_allowed || i == 64) {
			return JSONIN_KEYS_UNKNOWN;
		}
		if (seen & ((uint64_t)1 << i)) {
			return JSONIN_KEYS_DUPLICATE;
		}
		seen |= (uint64_t)1 << i;
	}
	*bad = NULL;
	return JSONIN_KEYS_OK;
}

const char *jsonin_type_name(const cJSON *item)
{
	if (cJSON_IsString(item)) {
		return "string";
	}
	if (cJSON_IsNumber(item)) {
		return "number";
	}
	if (cJSON_IsBool(item)) {
		return "boolean";
	}
	if (cJSON_IsNull(item)) {
		return "null";
	}
	if (cJSON_IsArray(item)) {
		return "array";
	}
	return "object";
}
