/* SPDX-License-Identifier: AGPL-3.0-only */
#include "choice.h"

#include <stddef.h>
#include <stdio.h>

#include "names.h"

/* Each CHOICE row's words (engine_inputs.h's ENGINE_CHOICES_<ENUM>). */
#define WORDS_U32(e)
#define WORDS_BOOL(e)
#define WORDS_CHOICE(e) static const char *const words_##e[] = {ENGINE_CHOICES_##e};
#define WORDS_ROW(a, e, name, kind, from, bounds, zero, about) WORDS_##kind(e)
ENGINE_INPUTS(WORDS_ROW, ~)

/* Each input's words and their count, by its index. */
struct words {
	const char *const *words;
	uint32_t count;
	uint32_t dflt;
};

#define TABLE_U32(e, bounds)
#define TABLE_BOOL(e, bounds)
#define TABLE_CHOICE(e, bounds)                                                     \
	[ENGINE_INDEX_##e] = {words_##e, sizeof(words_##e) / sizeof(words_##e[0]), \
			      ENGINE_BOUND_DEFAULT(bounds)},
#define TABLE_ROW(a, e, name, kind, from, bounds, zero, about) TABLE_##kind(e, bounds)
static const struct words table[ENGINE_INPUTS_COUNT] = {ENGINE_INPUTS(TABLE_ROW, ~)};

const char *const *choice_words(unsigned input)
{
	return input < ENGINE_INPUTS_COUNT ? table[input].words : NULL;
}

const char *choice_word(unsigned input, uint32_t index)
{
	if (input >= ENGINE_INPUTS_COUNT || index >= table[input].count) {
		return "";
	}
	return table[input].words[index];
}

/* The input's name, for the problem. */
#define NAME_ROW(a, e, name, kind, from, bounds, zero, about) [ENGINE_INDEX_##e] = #name,
static const char *const names[ENGINE_INPUTS_COUNT] = {ENGINE_INPUTS(NAME_ROW, ~)};

int choice_index(const struct slice *v, unsigned input, uint32_t *out, struct problem *p)
{
	const struct words *w = &table[input];
	struct names_near near;
	char list[256];
	size_t len = 0;

	*out = w->dflt;
	if (v->p == NULL) {
		return 0;
	}
	for (uint32_t i = 0; i < w->count; i++) {
		if (names_equal(v->p, v->len, w->words[i])) {
			*out = i;
			return 0;
		}
	}
	names_near_init(&near, v->p, v->len, NAMES_SAME);
	list[0] = '\0';
	for (uint32_t i = 0; i < w->count && len < sizeof(list); i++) {
		names_near_offer(&near, w->words[i]);
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i == 0 ? "" : i + 1 == w->count ? " or " : ", ", w->words[i]);
	}
	if (near.best != NULL) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, names[input], near.best,
				   "%s is one of %s; did you mean \"%s\"?", names[input], list,
				   near.best);
	}
	return problem_set(p, PROBLEM_INVALID_PARAMETER, names[input], NULL, "%s is one of %s",
			   names[input], list);
}

#define CHECK_U32(e, name)
#define CHECK_BOOL(e, name)
#define CHECK_CHOICE(e, name)                                              \
	if (choice_index(&q->name, ENGINE_INDEX_##e, &index, p) != 0) {    \
		return -1;                                                 \
	}
#define CHECK_ROW(a, e, name, kind, from, bounds, zero, about) CHECK_##kind(e, name)

int choice_check_query(const struct query *q, struct problem *p)
{
	uint32_t index = 0;

	ENGINE_INPUTS(CHECK_ROW, ~)
	(void)index;
	return 0;
}
