/* SPDX-License-Identifier: AGPL-3.0-only */
#include "channel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"

struct channel_text *channel_text_new(const char *bytes, size_t len)
{
	struct channel_text *t = malloc(sizeof(*t) + len);

	if (t != NULL) {
		t->refs = 1;
		t->len = len;
		memcpy(t->bytes, bytes, len);
	}
	return t;
}

struct channel_text *channel_text_ref(struct channel_text *t)
{
	if (t != NULL) {
		t->refs++;
	}
	return t;
}

void channel_text_unref(struct channel_text *t)
{
	if (t != NULL && --t->refs == 0) {
		free(t);
	}
}

struct channel *channel_new(const char *name, const char *digest, unsigned depth,
			    int64_t loaded_at, const char *boot)
{
	struct channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		return NULL;
	}
	ch->depth = depth > 0 ? depth : 1;
	/* pointers only: a change's text is allocated at its size */
	ch->history = calloc(ch->depth, sizeof(*ch->history));
	if (ch->history == NULL) {
		free(ch);
		return NULL;
	}
	snprintf(ch->name, sizeof(ch->name), "%s", name);
	ch->all = strcmp(name, EVENTS_ALL) == 0;
	ch->seq = 1;
	/* all's: the revision its last event named (a digest, for the state
	 * directory's file) */
	snprintf(ch->revision, sizeof(ch->revision), "%s", digest);
	ch->loaded_at = loaded_at;
	snprintf(ch->boot, sizeof(ch->boot), "%s", boot);
	return ch;
}

void channel_free(struct channel *ch)
{
	if (ch == NULL) {
		return;
	}
	for (unsigned j = 0; j < ch->depth; j++) {
		channel_text_unref(ch->history[j]);
	}
	free(ch->history);
	free(ch);
}

void channel_derive_boot(struct channel *ch, const char *boot)
{
	uint64_t x = fnv_add(FNV_OFFSET, boot, strlen(boot));

	x = fnv_add(x, "/", 1);
	x = fnv_add(x, ch->name, strlen(ch->name));
	snprintf(ch->boot, sizeof(ch->boot), "%08x", (unsigned)(x ^ x >> 32));
}

struct events_revision channel_current(const struct channel *ch)
{
	return (struct events_revision){ch->seq, ch->revision, ch->loaded_at};
}

void channel_tell(struct channel *ch, uint64_t seq, struct channel_text *t)
{
	struct channel_text **slot = &ch->history[seq % ch->depth];

	channel_text_unref(*slot);
	*slot = t;
	ch->seq = seq;
}

struct channel_text *channel_after(const struct channel *ch, uint64_t told)
{
	return ch->seq - told <= ch->depth ? ch->history[(told + 1) % ch->depth] : NULL;
}

bool channel_reaches(const struct channel *ch, uint64_t seen)
{
	return seen <= ch->seq && ch->seq - seen <= ch->depth && seen >= ch->floor;
}

void channel_reopen(struct channel *ch, const char *digest, int64_t loaded_at)
{
	ch->removed = false;
	channel_tell(ch, ch->seq + 1, NULL);
	ch->floor = ch->seq;
	snprintf(ch->revision, sizeof(ch->revision), "%s", digest);
	ch->loaded_at = loaded_at;
}

struct channel_text *channel_change_text(const struct channel *ch,
					 const struct events_revision *now,
					 const struct events_revision *was,
					 const struct catalog *from, const struct catalog *to)
{
	char text[EVENTS_TEXT_MAX];
	size_t len = events_change(text, sizeof(text), ch->boot, now, was, from, to);

	return channel_text_new(text, len);
}

int channel_resume(struct channel *ch, uint64_t first_seq, const struct catalog *const *cats,
		   size_t n)
{
	if (first_seq == 0) {
		return -1;
	}
	if (ch->all) {
		/* what it numbered before is not held: one more, and a reset */
		ch->seq = ch->floor = first_seq + 1;
		return 0;
	}
	if (n == 0 || strcmp(cats[n - 1]->digest, ch->revision) != 0) {
		return -1;
	}
	/* the oldest changes first, so the newest depth of them stay */
	for (size_t i = 1; i < n; i++) {
		struct events_revision was = {first_seq + i - 1, cats[i - 1]->digest, ch->loaded_at};
		struct events_revision now = {first_seq + i, cats[i]->digest, ch->loaded_at};

		channel_tell(ch, now.seq, channel_change_text(ch, &now, &was, cats[i - 1], cats[i]));
	}
	ch->seq = first_seq + n - 1;
	ch->floor = first_seq; /* before it, the changes are not held: a reset */
	return 0;
}
