/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * jsonin — strict JSON input on top of cJSON.
 *
 * cJSON is lenient where a network service must not be: it accepts raw
 * control characters in strings, truncates a string at "\u0000" (so
 * "auto\u0000x" would read as "auto"), does not check UTF-8, keeps
 * duplicate keys, and allows 1000 levels of nesting. jsonin_parse scans the
 * text first and refuses all of those, then parses with an explicit length
 * and requires the whole input to be consumed.
 *
 * Never calls cJSON_GetErrorPtr (a process-wide global); errors are written
 * into a caller buffer. Thread-safe as long as the cJSON hooks are not
 * changed while threads run.
 */
#ifndef SPLITKD_JSONIN_H
#define SPLITKD_JSONIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define JSONIN_MAX_DEPTH 32

/*
 * An arena for one parse: with jsonin_init's hooks installed, the nodes and
 * strings of a tree parsed by jsonin_parse_in come from a few large blocks
 * instead of one malloc each (a 1024-query batch is ~9000 allocations),
 * and the whole tree goes at once in jsonin_arena_cleanup. Never
 * cJSON_Delete a tree parsed into an arena. Without the hooks (tests,
 * fuzzers) the tree is malloc'd and jsonin_arena_cleanup deletes it: the
 * contract is the same either way.
 */
struct jsonin_block;

struct jsonin_arena {
	struct jsonin_block *blocks; /* newest first */
	cJSON *root;
};

/* Installs cJSON hooks that serve jsonin_parse_in from its arena and pass
 * every other allocation to malloc/free. Call once, before any thread that
 * uses cJSON starts (cJSON's hooks are process-wide). */
void jsonin_init(void);

/*
 * Parses text[0..len). Returns the tree (free with cJSON_Delete) or NULL
 * with a one-line reason in err (capacity err_cap) when the text is not
 * strict JSON, nests deeper than JSONIN_MAX_DEPTH, or memory ran out. The
 * reason says where when it can: "malformed JSON at offset 28 (line 2,
 * column 11)", the offset in bytes from 0, line and column (in
 * characters) from 1.
 */
cJSON *jsonin_parse(const char *text, size_t len, char *err, size_t err_cap);

/* jsonin_parse into an arena (initialised to {0}); the tree lives until
 * jsonin_arena_cleanup. Same failures as jsonin_parse. */
cJSON *jsonin_parse_in(struct jsonin_arena *arena, const char *text, size_t len, char *err,
		       size_t err_cap);
/* Frees the arena's tree and blocks; the arena can be reused. */
void jsonin_arena_cleanup(struct jsonin_arena *arena);

/* An integral JSON number from 1 to 4294967295 (132 and 132.0 are; 1e400,
 * 0, -1, 1.5 and "132" are not). */
bool jsonin_u32(const cJSON *item, uint32_t *out);
/* An integral JSON number from 0 to 2^53 - 1, the integers a JSON number
 * carries exactly (0, 7 and 7.0 are; NaN, 2^53, -1, 1.5 and "7" are not). */
bool jsonin_u53(const cJSON *item, uint64_t *out);

enum jsonin_keys { JSONIN_KEYS_OK, JSONIN_KEYS_UNKNOWN, JSONIN_KEYS_DUPLICATE };

/* Checks an object's member names against `allowed` (at most 64 names) in
 * one pass: an unknown name or a name seen twice stops it, with *bad set to
 * that name. Linear in the members, so a hostile object with a million
 * repeated keys costs a million steps, not a million squared. */
enum jsonin_keys jsonin_check_keys(const cJSON *object, const char *const *allowed,
				   size_t num_allowed, const char **bad);

/* A JSON type name for messages: "string", "number", "object", ... */
const char *jsonin_type_name(const cJSON *item);

#endif /* SPLITKD_JSONIN_H */
