/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * A change stream's channel (server/channel.c) through its own API, no
 * hub and no socket: a text shared by reference and outliving its slot,
 * the ring's reach (which client is replayed, which gets a reset) over a
 * sweep of depths, a channel back after removal, a derived boot against
 * FNV-1a written out here, and a state directory's numbering taken up.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "channel.h"

/* A catalog whose one target has `sm` SMs: each value another digest. */
static struct catalog *catalog_of(int sm)
{
	char json[512], err[256];
	int n = snprintf(json, sizeof(json),
			 "{\"targets\":[{\"name\":\"t\",\"sm_count\":%d,\"attn_decode_splitk\":\"auto\"}],"
			 "\"models\":[{\"name\":\"m\",\"num_q_heads\":24}]}",
			 sm);
	struct catalog *c = catalog_load(json, (size_t)n, err, sizeof(err));

	cr_assert_not_null(c, "%s", err);
	return c;
}

/* A text that names its seq, as an event would. */
static struct channel_text *text_of(uint64_t seq)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "event %llu", (unsigned long long)seq);

	return channel_text_new(b, (size_t)n);
}

static bool text_is(const struct channel_text *t, uint64_t seq)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "event %llu", (unsigned long long)seq);

	return t != NULL && t->len == (size_t)n && memcmp(t->bytes, b, t->len) == 0;
}

Test(channel, a_text_is_copied_and_counted)
{
	char src[] = "id: 1@x\n\n";
	struct channel_text *t = channel_text_new(src, sizeof(src) - 1);

	cr_assert_not_null(t);
	src[0] = 'X';
	cr_assert_eq(t->len, sizeof(src) - 1);
	cr_assert_eq(memcmp(t->bytes, "id: 1@x\n\n", t->len), 0, "a copy, not the caller's bytes");
	cr_assert_eq(t->refs, 1u);
	cr_assert_eq(channel_text_ref(t), t);
	cr_assert_eq(t->refs, 2u);
	channel_text_unref(t);
	cr_assert_eq(t->refs, 1u);
	channel_text_unref(t);
	cr_assert_null(channel_text_ref(NULL));
	channel_text_unref(NULL);
}

Test(channel, a_new_channel_stands_at_one)
{
	struct channel *ch = channel_new("default", "fnv1a64:0123456789abcdef", 0, 1700000000,
					 "0000beef");
	struct channel *all = channel_new(EVENTS_ALL, "fnv1a64:0123456789abcdef", 4, 1, "0000beef");
	struct events_revision cur;

	cr_assert_not_null(ch);
	cr_assert_not_null(all);
	cr_assert_eq(ch->seq, 1u);
	cr_assert_eq(ch->floor, 0u);
	cr_assert_eq(ch->depth, 1u, "a depth of 0 holds one");
	cr_assert(!ch->all);
	cr_assert(all->all);
	cr_assert_str_eq(ch->boot, "0000beef");
	cur = channel_current(ch);
	cr_assert_eq(cur.seq, 1u);
	cr_assert_str_eq(cur.revision, "fnv1a64:0123456789abcdef");
	cr_assert_eq(cur.loaded_at, 1700000000);
	cr_assert_null(channel_after(ch, 0), "nothing is held before the first event");
	channel_free(ch);
	channel_free(all);
	channel_free(NULL);
}

/* For every depth and every client position: the event after it comes
 * from the ring exactly when it is at most depth behind, and is the
 * right one; past that, a reset (NULL). */
Test(channel, the_ring_reaches_depth_events_back)
{
	for (unsigned depth = 1; depth <= 6; depth++) {
		struct channel *ch = channel_new("c", "fnv1a64:0000000000000001", depth, 0, "00000001");

		cr_assert_not_null(ch);
		for (uint64_t seq = 2; seq <= 20; seq++) {
			channel_tell(ch, seq, text_of(seq));
			cr_assert_eq(ch->seq, seq);
			for (uint64_t told = 1; told < seq; told++) {
				struct channel_text *t = channel_after(ch, told);

				if (seq - told <= depth) {
					cr_assert(text_is(t, told + 1), "depth %u seq %llu told %llu", depth,
						  (unsigned long long)seq, (unsigned long long)told);
					cr_assert(channel_reaches(ch, told));
				} else {
					cr_assert_null(t, "depth %u seq %llu told %llu: out of reach", depth,
						       (unsigned long long)seq, (unsigned long long)told);
					cr_assert(!channel_reaches(ch, told));
				}
			}
			cr_assert(channel_reaches(ch, seq), "a client up to date is replayed nothing");
			cr_assert(!channel_reaches(ch, seq + 1), "an id from the future is a reset");
		}
		channel_free(ch);
	}
}

Test(channel, a_text_outlives_its_slot)
{
	struct channel *ch = channel_new("c", "fnv1a64:0000000000000001", 2, 0, "00000001");
	struct channel_text *kept;

	channel_tell(ch, 2, text_of(2));
	kept = channel_text_ref(channel_after(ch, 1)); /* a stream sending it */
	cr_assert_eq(kept->refs, 2u);
	channel_tell(ch, 3, text_of(3));
	channel_tell(ch, 4, text_of(4)); /* takes seq 2's slot */
	cr_assert_eq(kept->refs, 1u, "the ring let go; the stream's reference stays");
	cr_assert(text_is(kept, 2));
	cr_assert_null(channel_after(ch, 1));
	channel_text_unref(kept);
	channel_free(ch);
}

Test(channel, back_after_removal_is_a_reset)
{
	struct channel *ch = channel_new("c", "fnv1a64:0000000000000001", 4, 0, "00000001");

	channel_tell(ch, 2, text_of(2));
	channel_tell(ch, 3, text_of(3));
	ch->removed = true;
	channel_reopen(ch, "fnv1a64:0000000000000002", 42);
	cr_assert(!ch->removed);
	cr_assert_eq(ch->seq, 4u);
	cr_assert_eq(ch->floor, 4u);
	cr_assert_str_eq(ch->revision, "fnv1a64:0000000000000002");
	cr_assert_eq(ch->loaded_at, 42);
	cr_assert_null(channel_after(ch, 3), "the gap is not held");
	cr_assert(!channel_reaches(ch, 3), "what was heard before is out of reach");
	cr_assert(!channel_reaches(ch, 2));
	cr_assert(channel_reaches(ch, 4));
	channel_free(ch);
}

/* The boot written out byte by byte, FNV-1a's definition. */
static void boot_of(const char *hub, const char *name, char out[EVENTS_BOOT_LEN + 1])
{
	char both[128];
	uint64_t x = 0xcbf29ce484222325u;

	snprintf(both, sizeof(both), "%s/%s", hub, name);
	for (const char *p = both; *p != '\0'; p++) {
		x = (x ^ (unsigned char)*p) * 0x100000001b3u;
	}
	snprintf(out, EVENTS_BOOT_LEN + 1, "%08x", (unsigned)(x ^ x >> 32));
}

Test(channel, a_derived_boot_is_the_hubs_and_the_name_hashed)
{
	static const char *const names[] = {"default", "a", "b", "prod-eu", EVENTS_ALL};
	const char *hubs[] = {"00000000", "1234abcd"};
	char want[EVENTS_BOOT_LEN + 1], seen[5][EVENTS_BOOT_LEN + 1];

	for (size_t h = 0; h < 2; h++) {
		for (size_t i = 0; i < 5; i++) {
			struct channel *ch = channel_new(names[i], "fnv1a64:0000000000000001", 1, 0,
							 hubs[h]);

			channel_derive_boot(ch, hubs[h]);
			boot_of(hubs[h], names[i], want);
			cr_assert_str_eq(ch->boot, want, "%s/%s", hubs[h], names[i]);
			cr_assert_str_neq(ch->boot, hubs[h]);
			for (size_t j = 0; j < i; j++) {
				cr_assert_str_neq(ch->boot, seen[j], "%s and %s", names[i], names[j]);
			}
			memcpy(seen[i], ch->boot, sizeof(seen[i]));
			channel_free(ch);
		}
	}
}

Test(channel, a_kept_numbering_is_taken_up)
{
	struct catalog *cats[4];
	const struct catalog *const *held = (const struct catalog *const *)cats;
	struct channel *ch, *all;
	char want[64], text[EVENTS_TEXT_MAX + 1];

	for (int i = 0; i < 4; i++) {
		cats[i] = catalog_of(20 + 4 * i);
	}
	ch = channel_new("default", cats[3]->digest, 2, 0, "0000cafe");
	cr_assert_eq(channel_resume(ch, 0, held, 4), -1, "first_seq 0: nothing");
	cr_assert_eq(channel_resume(ch, 10, held, 3), -1, "the last is not the channel's");
	cr_assert_eq(ch->seq, 1u, "a refusal changes nothing");
	cr_assert_eq(channel_resume(ch, 10, held, 4), 0);
	cr_assert_eq(ch->seq, 13u);
	cr_assert_eq(ch->floor, 10u);
	cr_assert_null(channel_after(ch, 10), "depth 2: change 11 fell out");
	for (uint64_t told = 11; told < 13; told++) {
		struct channel_text *t = channel_after(ch, told);

		snprintf(want, sizeof(want), "id: %llu@0000cafe\nevent: catalog\n",
			 (unsigned long long)told + 1);
		cr_assert_not_null(t);
		cr_assert_lt(t->len, sizeof(text));
		memcpy(text, t->bytes, t->len);
		text[t->len] = '\0';
		cr_assert_not_null(strstr(text, want), "its id, under the channel's boot: %s", text);
		cr_assert_not_null(strstr(text, cats[told - 9]->digest), "names the revision: %s", text);
	}
	cr_assert(!channel_reaches(ch, 9), "before the floor: a reset");

	all = channel_new(EVENTS_ALL, cats[0]->digest, 2, 0, "0000cafe");
	cr_assert_eq(channel_resume(all, 7, NULL, 0), 0);
	cr_assert_eq(all->seq, 8u);
	cr_assert_eq(all->floor, 8u);
	cr_assert(!channel_reaches(all, 7), "what every catalog's stream numbered is not held");
	channel_free(ch);
	channel_free(all);
	for (int i = 0; i < 4; i++) {
		catalog_free(cats[i]);
	}
}
