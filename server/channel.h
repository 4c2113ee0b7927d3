/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * channel — one change stream's numbering and its history ring: a
 * catalog's (catalog=NAME) or every catalog's (catalog=*, EVENTS_ALL),
 * its seq, the revision its last event named, and its last `depth`
 * events, each kept as the text every stream sends (struct channel_text).
 * The streams themselves, their heartbeats, their sockets and
 * libmicrohttpd are stream.c's, the one user; what an event says is
 * api/events.c's.
 *
 * A text is rendered once and shared: the ring holds one reference, each
 * stream sending it holds one more, never a copy, so a change told to
 * 10,000 streams costs one allocation, and a text a slow stream still
 * sends outlives its place in the ring.
 *
 * An id is "<seq>@<boot>": the boot is the hub's for the default
 * catalog's channel, and for any other one derived from the hub's and the
 * name (FNV-1a, api/fnv.h), so that no catalog's id reads as another's
 * and each is the same after a restart that kept the hub's boot.
 *
 * Never: locks, I/O, a clock read, libmicrohttpd. Allocates in
 * channel_new (the ring: pointers only), channel_text_new and
 * channel_change_text; a text is freed at its last channel_text_unref,
 * a channel by channel_free with the references its ring holds. Not
 * thread-safe, reference counts included: the caller serialises every
 * call (stream.c's hub, under its lock).
 */
#ifndef SPLITKD_CHANNEL_H
#define SPLITKD_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "events.h"

/* Bytes a stream sends: an event (the ring's, shared), or any text a
 * caller makes the same way (a heartbeat, a greeting). */
struct channel_text {
	unsigned refs;
	size_t len;
	char bytes[];
};

/* A text of its own (refs 1) with a copy of bytes[0..len), or NULL when
 * out of memory. */
struct channel_text *channel_text_new(const char *bytes, size_t len);
/* One more reference to `t` (NULL: none); returns `t`. */
struct channel_text *channel_text_ref(struct channel_text *t);
/* One reference less; frees `t` at the last. Accepts NULL. */
void channel_text_unref(struct channel_text *t);

struct channel {
	char name[CATALOG_NAME_MAX + 1]; /* the catalog's; EVENTS_ALL for every catalog */
	char boot[EVENTS_BOOT_LEN + 1];  /* in its ids */
	bool all;
	bool removed;   /* no longer served: its streams end after its last event */
	uint64_t seq;   /* 1 at start, one more at each event */
	uint64_t floor; /* the oldest seq a replay starts from (resumed); 0: any */
	char revision[CATALOG_DIGEST_LEN + 1];
	int64_t loaded_at;
	unsigned streams;              /* open on it (stream.c's count) */
	unsigned depth;                /* events its ring holds, at least 1 */
	struct channel_text **history; /* depth of them, seq s at s % depth; NULL: not held */
};

/* A channel for `name` (EVENTS_ALL: every catalog's) at seq 1, its
 * revision `digest` loaded at `loaded_at` (Unix seconds), holding the
 * last `depth` events (0 reads as 1), its boot `boot` as given (the
 * default's: the hub's) — channel_derive_boot for any other. NULL when
 * out of memory. Free it with channel_free. */
struct channel *channel_new(const char *name, const char *digest, unsigned depth,
			    int64_t loaded_at, const char *boot);
/* Frees the channel and lets go of every text its ring holds (a stream
 * still sending one keeps its own reference). Accepts NULL. */
void channel_free(struct channel *ch);

/* The boot of a channel other than the default's: FNV-1a 64 of the
 * hub's `boot`, '/' and the channel's name, folded to 8 hex digits. */
void channel_derive_boot(struct channel *ch, const char *boot);

/* Where the channel stands: its seq, revision and loaded_at (the
 * revision is the channel's: valid while it is unchanged). */
struct events_revision channel_current(const struct channel *ch);

/* Holds `t` (the caller's reference, taken; NULL: the event is not held,
 * and a replay through it is a reset) as event `seq`, in the slot of
 * seq - depth, which it lets go; the channel's seq is then `seq`. */
void channel_tell(struct channel *ch, uint64_t seq, struct channel_text *t);

/* The event after `told` (told < seq) as the ring holds it, or NULL when
 * it is out of the ring's reach (more than depth behind) or not held:
 * the client standing at `told` needs a reset. Borrowed: channel_text_ref
 * it to keep it. */
struct channel_text *channel_after(const struct channel *ch, uint64_t told);

/* Whether a client that has heard up to `seen` (a Last-Event-ID of this
 * channel's boot) can be replayed the events since from the ring: not
 * past seq, not more than depth behind, not before the floor. */
bool channel_reaches(const struct channel *ch, uint64_t seen);

/* A channel removed earlier serves again, at revision `digest` loaded at
 * `loaded_at`: its next seq, with nothing held for it, and the floor
 * there (what its clients heard before is out of reach: a reset). */
void channel_reopen(struct channel *ch, const char *digest, int64_t loaded_at);

/* The text of the change from `was` (catalog `from`) to `now` (catalog
 * `to`) under the channel's boot, rendered once for every stream; NULL
 * when out of memory. */
struct channel_text *channel_change_text(const struct channel *ch,
					 const struct events_revision *now,
					 const struct events_revision *was,
					 const struct catalog *from, const struct catalog *to);

/*
 * Takes up the numbering a state directory kept: the changes between the
 * revisions cats[0..n) (oldest first, seqs first_seq, first_seq + 1, ...;
 * the last the channel's own revision) into the ring, the newest depth of
 * them, the channel at the last one's seq and its floor at first_seq.
 * For every catalog's channel, cats is unused: what it numbered before is
 * not held, so it goes on at first_seq + 1 with its floor there (a
 * reset). Returns 0, or -1 when first_seq is 0 or the last revision is
 * not the channel's (nothing changes).
 */
int channel_resume(struct channel *ch, uint64_t first_seq, const struct catalog *const *cats,
		   size_t n);

#endif /* SPLITKD_CHANNEL_H */
