/* SPDX-License-Identifier: AGPL-3.0-only */
#include "conntab.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MS 1000000u
#define SECOND 1000000000u

/* A client is its address without the port; IPv4 as IPv4-mapped IPv6. */
void conntab_client_key(const struct sockaddr *addr, unsigned char out[16])
{
	memset(out, 0, 16);
	if (addr == NULL) {
		return;
	}
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)addr;

		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(out + 12, &in->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)addr;

		memcpy(out, &in6->sin6_addr, 16);
	}
}

uint64_t conntab_client_mix(const unsigned char key[16])
{
	uint64_t a, b;

	memcpy(&a, key, 8);
	memcpy(&b, key + 8, 8);
	return ((a * 0x9E3779B97F4A7C15u) ^ b) * 0xBF58476D1CE4E5B9u;
}

static size_t client_hash(const unsigned char key[16], size_t cap)
{
	return (size_t)(conntab_client_mix(key) >> 17) % cap;
}

/* The client's entry, inserted with count 0 when new. The table has twice
 * as many entries as connections, so it never fills. */
static unsigned client_get(struct conntab *t, const unsigned char key[16])
{
	size_t i = client_hash(key, t->client_cap);

	while (t->clients[i].count != 0 && memcmp(t->clients[i].addr, key, 16) != 0) {
		i = (i + 1) % t->client_cap;
	}
	memcpy(t->clients[i].addr, key, 16);
	return (unsigned)i;
}

/* One connection fewer for a client; an entry that reaches zero is
 * removed by shifting back the run after it (no tombstones). */
static void client_drop(struct conntab *t, unsigned index)
{
	size_t hole = index, i = index;

	if (index == t->heavy) {
		t->heavy_stale = true;
	}
	if (--t->clients[index].count != 0) {
		return;
	}
	for (;;) {
		size_t home;

		i = (i + 1) % t->client_cap;
		if (t->clients[i].count == 0) {
			return;
		}
		home = client_hash(t->clients[i].addr, t->client_cap);
		/* move i into the hole unless its home lies cyclically in (hole, i] */
		if ((hole < i) ? (home <= hole || home > i) : (home <= hole && home > i)) {
			t->clients[hole] = t->clients[i];
			t->clients[i].count = 0;
			t->heavy_stale = true;
			for (size_t c = 0; c < t->cap; c++) {
				if (t->conns[c].live && t->conns[c].client == i) {
					t->conns[c].client = (unsigned)hole;
				}
			}
			hole = i;
		}
	}
}

const char *conntab_reason_name(enum conntab_reason why)
{
	switch (why) {
	case CONNTAB_HEADER_TIMEOUT:
		return "header_timeout";
	case CONNTAB_BODY_TIMEOUT:
		return "body_timeout";
	case CONNTAB_RECLAIMED_IDLE:
		return "reclaimed_idle";
	case CONNTAB_RECLAIMED_UNFINISHED:
		return "reclaimed_unfinished";
	case CONNTAB_REFUSED_FULL:
		return "refused_full";
	case CONNTAB_REFUSED_PER_CLIENT:
		return "refused_per_client";
	case CONNTAB_REASON_COUNT:
		break;
	}
	return "other";
}

int conntab_init(struct conntab *t, const struct conntab_limits *limits)
{
	memset(t, 0, sizeof(*t));
	t->limits = *limits;
	if (t->limits.engines == 0) {
		t->limits.engines = 1;
	}
	/* room for connections being closed beside a full table */
	t->cap = (size_t)limits->max_connections + 64 + limits->max_connections / 8;
	t->client_cap = 2 * t->cap;
	t->conns = calloc(t->cap, sizeof(*t->conns));
	t->clients = calloc(t->client_cap, sizeof(*t->clients));
	t->engine_load = calloc(t->limits.engines, sizeof(*t->engine_load));
	t->held = limits->max_held > 0 ? calloc(limits->max_held, sizeof(*t->held)) : NULL;
	if (t->conns == NULL || t->clients == NULL || t->engine_load == NULL ||
	    (limits->max_held > 0 && t->held == NULL)) {
		conntab_cleanup(t);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		t->conns[i].fd = -1;
	}
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void conntab_cleanup(struct conntab *t)
{
	if (t->conns != NULL) {
		pthread_mutex_destroy(&t->lock);
	}
	for (size_t i = 0; t->held != NULL && i < t->held_count; i++) {
		close(t->held[(t->held_head + i) % t->limits.max_held].fd);
	}
	free(t->held);
	free(t->conns);
	free(t->clients);
	free(t->engine_load);
	t->held = NULL;
	t->held_count = 0;
	t->conns = NULL;
	t->clients = NULL;
	t->engine_load = NULL;
}

static int load_phase(const struct conntab_conn *c)
{
	return atomic_load_explicit(&c->phase, memory_order_relaxed);
}

static uint64_t load_since(const struct conntab_conn *c)
{
	return atomic_load_explicit(&c->since_ns, memory_order_relaxed);
}

/* How long a connection has been in its phase. An engine may stamp a phase
 * after the caller read its clock: that is no time at all, not 2^64 ns. */
static uint64_t in_phase(const struct conntab_conn *c, uint64_t now)
{
	uint64_t since = load_since(c);

	return now > since ? now - since : 0;
}

/* Shuts a connection down for `why` (lock held). libmicrohttpd sees the
 * end of the stream, closes it and reports that (conntab_release). */
static void close_for(struct conntab *t, struct conntab_conn *c, enum conntab_reason why)
{
	c->closing = true;
	t->count--;
	client_drop(t, c->client);
	if (c->fd >= 0) {
		shutdown(c->fd, SHUT_RDWR);
	}
	atomic_fetch_add_explicit(&t->closed[why], 1, memory_order_relaxed);
}

/* An idle keep-alive connection: it answered a request and has been
 * waiting for the next one at least CONNTAB_IDLE_RECLAIM_MS. */
static bool is_idle(const struct conntab_conn *c, uint64_t now)
{
	return load_phase(c) == CONNTAB_WAITING &&
	       atomic_load_explicit(&c->requests, memory_order_relaxed) > 0 &&
	       in_phase(c, now) >= CONNTAB_IDLE_RECLAIM_MS * MS;
}

/* A request that has not finished arriving (or a connection that never
 * sent one), or an answer stuck in the send. Not one that is merely in
 * progress: a header block or body arriving for less than CONNTAB_SLOW_MS,
 * or a new connection whose request the engine has not read within
 * CONNTAB_IDLE_RECLAIM_MS (under a burst it may be queued that long), is
 * spared, so a newcomer never takes the place of a request a burst is
 * about to finish. */
static bool is_unfinished(const struct conntab_conn *c, uint64_t now)
{
	switch (load_phase(c)) {
	case CONNTAB_WAITING:
		return atomic_load_explicit(&c->requests, memory_order_relaxed) == 0 &&
		       in_phase(c, now) >= CONNTAB_IDLE_RECLAIM_MS * MS;
	case CONNTAB_HEADERS:
	case CONNTAB_BODY:
		return in_phase(c, now) >= CONNTAB_SLOW_MS * MS;
	default:
		return in_phase(c, now) >= CONNTAB_STUCK_REPLY_MS * MS;
	}
}

/* The longest idle connection, or NULL. A scan that finds none notes when
 * the first could qualify, so a storm of newcomers against a busy full
 * table costs one scan a second, not one per newcomer. */
static struct conntab_conn *longest_idle(struct conntab *t, uint64_t now)
{
	struct conntab_conn *best = NULL;
	uint64_t next = now + CONNTAB_IDLE_RECLAIM_MS * MS;

	if (now < t->idle_check_ns) {
		return NULL;
	}
	for (size_t i = 0; i < t->cap; i++) {
		struct conntab_conn *c = &t->conns[i];
		uint64_t since = load_since(c);

		if (!c->live || c->closing || load_phase(c) != CONNTAB_WAITING) {
			continue;
		}
		if (is_idle(c, now) && (best == NULL || since < load_since(best))) {
			best = c;
		} else if (since + CONNTAB_IDLE_RECLAIM_MS * MS < next) {
			next = since + CONNTAB_IDLE_RECLAIM_MS * MS;
		}
	}
	if (best == NULL) {
		t->idle_check_ns = next;
	}
	return best;
}

static unsigned heaviest_client(struct conntab *t)
{
	if (t->heavy_stale) {
		t->heavy = 0;
		for (size_t i = 1; i < t->client_cap; i++) {
			if (t->clients[i].count > t->clients[t->heavy].count) {
				t->heavy = (unsigned)i;
			}
		}
		t->heavy_stale = false;
	}
	return t->heavy;
}

/* Whether a connection has answered a request (a keep-alive one), or has
 * been answering one for CONNTAB_SLOW_MS (a slow reader): not a first
 * request a burst is about to finish. */
static bool has_answered(const struct conntab_conn *c, uint64_t now)
{
	return atomic_load_explicit(&c->requests, memory_order_relaxed) > 0 ||
	       (load_phase(c) == CONNTAB_REPLY && in_phase(c, now) >= CONNTAB_SLOW_MS * MS);
}

/* The heavy client's oldest unfinished request, else its oldest connection
 * that has answered a request or is answering one slowly. Either
 * is closed as reclaimed_unfinished: an over-share client's connection that
 * is not idle long enough to be reclaimed as idle is, for the count,
 * unfinished. NULL when every one is a first request in progress. */
static struct conntab_conn *oldest_of(struct conntab *t, unsigned client, uint64_t now)
{
	struct conntab_conn *stuck = NULL, *oldest = NULL;

	for (size_t i = 0; i < t->cap; i++) {
		struct conntab_conn *c = &t->conns[i];

		if (!c->live || c->closing || c->client != client) {
			continue;
		}
		if (is_unfinished(c, now) && (stuck == NULL || load_since(c) < load_since(stuck))) {
			stuck = c;
		}
		if (has_answered(c, now) && (oldest == NULL || c->accepted_ns < oldest->accepted_ns)) {
			oldest = c;
		}
	}
	return stuck != NULL ? stuck : oldest;
}

/* Frees room for a newcomer of `client` in a full table (lock held).
 * Returns false when nothing may give way. */
static bool reclaim(struct conntab *t, unsigned client, uint64_t now)
{
	struct conntab_conn *victim = longest_idle(t, now);
	unsigned heavy;

	if (victim != NULL) {
		close_for(t, victim, CONNTAB_RECLAIMED_IDLE);
		return true;
	}
	heavy = heaviest_client(t);
	/* a client may not push out its own: that only churns */
	if (heavy == client || t->clients[heavy].count <= t->clients[client].count + 1) {
		return false;
	}
	victim = oldest_of(t, heavy, now);
	if (victim == NULL) {
		return false;
	}
	close_for(t, victim, CONNTAB_RECLAIMED_UNFINISHED);
	return true;
}

static struct conntab_conn *free_slot(struct conntab *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->conns[i].live) {
			return &t->conns[i];
		}
	}
	return NULL;
}

static unsigned least_loaded(const struct conntab *t)
{
	unsigned best = 0;

	for (unsigned e = 1; e < t->limits.engines; e++) {
		if (t->engine_load[e] < t->engine_load[best]) {
			best = e;
		}
	}
	return best;
}

/* Decides whether a newcomer of `client` may come in (lock held). */
static bool may_enter(struct conntab *t, unsigned client, uint64_t now, enum conntab_reason *why)
{
	if (t->limits.per_client != 0 && t->clients[client].count >= t->limits.per_client) {
		*why = CONNTAB_REFUSED_PER_CLIENT;
		return false;
	}
	if (t->count >= t->limits.max_connections && !reclaim(t, client, now)) {
		*why = CONNTAB_REFUSED_FULL;
		return false;
	}
	return true;
}

/* Takes a slot for a newcomer of `client` that may enter (lock held):
 * the slot, or NULL when every spare slot is still closing. */
static struct conntab_conn *take_slot(struct conntab *t, int fd, unsigned client, uint64_t now)
{
	struct conntab_conn *c = free_slot(t);

	if (c == NULL) {
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->live = true;
	t->live++;
	c->client = client;
	c->engine = least_loaded(t);
	c->accepted_ns = now;
	conntab_mark(c, CONNTAB_WAITING, now);
	if (++t->clients[client].count > t->clients[t->heavy].count) {
		t->heavy = client;
	}
	t->engine_load[c->engine]++;
	t->count++;
	return c;
}

/* Admits a newcomer whose key is `key`, or says why not (lock held;
 * nothing counted). */
static struct conntab_conn *admit_locked(struct conntab *t, int fd, const unsigned char key[16],
					 uint64_t now, enum conntab_reason *why)
{
	unsigned client = client_get(t, key);
	struct conntab_conn *c;

	if (!may_enter(t, client, now, why)) {
		return NULL;
	}
	c = take_slot(t, fd, client, now);
	if (c == NULL) {
		*why = CONNTAB_REFUSED_FULL; /* every spare slot is still closing */
	}
	return c;
}

struct conntab_conn *conntab_admit(struct conntab *t, int fd, const struct sockaddr *addr,
				   uint64_t now_ns, enum conntab_reason *why)
{
	unsigned char key[16];
	struct conntab_conn *c;

	conntab_client_key(addr, key);
	pthread_mutex_lock(&t->lock);
	c = admit_locked(t, fd, key, now_ns, why);
	if (c == NULL) {
		atomic_fetch_add_explicit(&t->closed[*why], 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&t->lock);
	return c;
}

static struct conntab_held *held_at(struct conntab *t, size_t i)
{
	return &t->held[(t->held_head + i) % t->limits.max_held];
}

/* Whether a full held queue must leave the accept on (lock held): the
 * table holds a connection a newcomer of another client would take (an
 * idle keep-alive one, or the heaviest client's stalled or kept-alive
 * one), so a pause would keep such a newcomer in the listen queue behind
 * the held for nothing; the accept goes on and refuses at once what it
 * cannot take, as before. A table of first requests in progress (a burst)
 * is paused for: it is about to move. Scanned at most every
 * CONNTAB_SLOW_MS, the answer kept in between. */
static bool hold_sheds(struct conntab *t, uint64_t now)
{
	if (t->held_count < t->limits.max_held) {
		return false;
	}
	if (now >= t->shed_check_ns) {
		t->shedding = t->count >= t->limits.max_connections &&
			      (longest_idle(t, now) != NULL ||
			       oldest_of(t, heaviest_client(t), now) != NULL);
		t->shed_check_ns = now + CONNTAB_SLOW_MS * MS;
	}
	return t->shedding;
}

/* Holds a newcomer the table cannot take (lock held): at the front when
 * its client holds fewer than the heaviest one (it would take an
 * over-share client's place as soon as one stalls), else at the back. */
static enum conntab_entry hold(struct conntab *t, int fd, const struct sockaddr *addr,
			       socklen_t len, const unsigned char key[16], uint64_t now)
{
	unsigned client = client_get(t, key);
	struct conntab_held *h;

	if (t->clients[heaviest_client(t)].count > t->clients[client].count + 1) {
		t->held_head = (t->held_head + t->limits.max_held - 1) % t->limits.max_held;
		h = held_at(t, 0);
	} else {
		h = held_at(t, t->held_count);
	}
	t->held_count++;
	h->fd = fd;
	h->len = len <= sizeof(h->addr) ? len : (socklen_t)sizeof(h->addr);
	h->since_ns = now;
	memcpy(&h->addr, addr, h->len);
	return t->held_count == t->limits.max_held ? CONNTAB_HOLD_FULL : CONNTAB_HELD;
}

enum conntab_entry conntab_enter(struct conntab *t, int fd, const struct sockaddr *addr,
				 socklen_t len, uint64_t now_ns, struct conntab_conn **c,
				 enum conntab_reason *why)
{
	unsigned char key[16];
	enum conntab_entry e = CONNTAB_REFUSED;

	conntab_client_key(addr, key);
	pthread_mutex_lock(&t->lock);
	/* first come, first served: while some are held a slot a release
	 * frees is theirs (move_held gives it on the listener's next round),
	 * so a newcomer queues behind them, not past them; one of a client
	 * holding fewer than the heaviest would go ahead of them anyway (at
	 * the front), so it tries now, and a probe waits for no round */
	if (t->held_count > 0 && t->held_count < t->limits.max_held &&
	    t->clients[heaviest_client(t)].count <= t->clients[client_get(t, key)].count + 1) {
		*c = NULL;
		e = hold(t, fd, addr, len, key, now_ns);
		pthread_mutex_unlock(&t->lock);
		return e;
	}
	*c = admit_locked(t, fd, key, now_ns, why);
	if (*c != NULL) {
		e = CONNTAB_ENTERED;
	} else if (*why == CONNTAB_REFUSED_FULL && t->held_count < t->limits.max_held) {
		e = hold(t, fd, addr, len, key, now_ns);
	} else {
		atomic_fetch_add_explicit(&t->closed[*why], 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&t->lock);
	return e;
}

enum conntab_entry conntab_next_held(struct conntab *t, uint64_t now_ns, struct conntab_held *h,
				     struct conntab_conn **c)
{
	enum conntab_entry e = CONNTAB_NONE_HELD;
	enum conntab_reason why;
	unsigned char key[16];

	*c = NULL;
	pthread_mutex_lock(&t->lock);
	if (t->held_count > 0) {
		*h = *held_at(t, 0);
		e = CONNTAB_HELD;
		conntab_client_key((const struct sockaddr *)&h->addr, key);
		if (now_ns - h->since_ns > t->limits.header_timeout_ns) {
			/* held past the header deadline, which runs from the accept */
			atomic_fetch_add_explicit(&t->closed[CONNTAB_REFUSED_FULL], 1,
						  memory_order_relaxed);
			e = CONNTAB_REFUSED;
		} else {
			*c = admit_locked(t, h->fd, key, now_ns, &why);
			if (*c != NULL) {
				e = CONNTAB_ENTERED;
			} else if (why == CONNTAB_REFUSED_PER_CLIENT) {
				/* its client took its share while it was held */
				atomic_fetch_add_explicit(&t->closed[why], 1, memory_order_relaxed);
				e = CONNTAB_REFUSED;
			}
		}
		if (e != CONNTAB_HELD) {
			t->held_head = (t->held_head + 1) % t->limits.max_held;
			t->held_count--;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return e;
}

bool conntab_may_accept(struct conntab *t, uint64_t now_ns, size_t *held)
{
	bool may;

	pthread_mutex_lock(&t->lock);
	*held = t->held_count;
	may = t->held_count < t->limits.max_held || hold_sheds(t, now_ns);
	pthread_mutex_unlock(&t->lock);
	return may;
}

size_t conntab_held(struct conntab *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->held_count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void conntab_on_room(struct conntab *t, conntab_kick_fn *kick, void *cls)
{
	pthread_mutex_lock(&t->lock);
	t->kick = kick;
	t->kick_cls = cls;
	pthread_mutex_unlock(&t->lock);
}

struct conntab_conn *conntab_find(struct conntab *t, int fd)
{
	struct conntab_conn *found = NULL;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->cap && found == NULL; i++) {
		if (t->conns[i].live && t->conns[i].fd == fd) {
			found = &t->conns[i];
		}
	}
	pthread_mutex_unlock(&t->lock);
	return found;
}

void conntab_release(struct conntab *t, struct conntab_conn *c)
{
	pthread_mutex_lock(&t->lock);
	if (c->live) {
		if (!c->closing) {
			t->count--;
			client_drop(t, c->client);
		}
		t->engine_load[c->engine]--;
		c->live = false;
		c->fd = -1;
		t->live--;
		if (t->held_count > 0 && t->count < t->limits.max_connections && t->kick != NULL) {
			t->kick(t->kick_cls); /* a held connection can come in */
		}
	}
	pthread_mutex_unlock(&t->lock);
}

/* A waiting connection: has a request line started arriving, and for how
 * long? The kernel's count of received bytes tells, checked once it has
 * waited a second (a busy keep-alive connection never gets this far). */
static bool line_too_slow(struct conntab *t, struct conntab_conn *c, uint64_t now,
			  conntab_rx_fn *rx)
{
	unsigned requests = atomic_load_explicit(&c->requests, memory_order_relaxed);
	int64_t bytes;

	if (rx == NULL || in_phase(c, now) < SECOND) {
		return false;
	}
	bytes = rx(c->fd);
	if (bytes < 0) {
		return false;
	}
	if (c->swept_requests != requests + 1 || c->rx_baseline > (uint64_t)bytes) {
		/* a new wait: note where the byte count stands */
		c->swept_requests = requests + 1;
		c->rx_baseline = t->limits.from_accept && requests == 0 ? 0 : (uint64_t)bytes;
		c->arriving_since = 0;
		return false;
	}
	if (c->arriving_since == 0) {
		if ((uint64_t)bytes > c->rx_baseline) {
			c->arriving_since = now;
		}
		return false;
	}
	return now > c->arriving_since && now - c->arriving_since > t->limits.header_timeout_ns;
}

/* Whether a connection has missed a deadline, and which. */
static bool overdue(struct conntab *t, struct conntab_conn *c, uint64_t now, conntab_rx_fn *rx,
		    enum conntab_reason *why)
{
	uint64_t elapsed = in_phase(c, now), allowed;

	switch (load_phase(c)) {
	case CONNTAB_HEADERS:
		*why = CONNTAB_HEADER_TIMEOUT;
		return elapsed > t->limits.header_timeout_ns;
	case CONNTAB_BODY:
		*why = CONNTAB_BODY_TIMEOUT;
		allowed = t->limits.body_timeout_ns;
		if (t->limits.body_min_rate != 0) {
			/* Apache's MinRate: each min_rate bytes buys a second more */
			allowed += atomic_load_explicit(&c->body_bytes, memory_order_relaxed) * SECOND /
				   t->limits.body_min_rate;
		}
		return elapsed > allowed;
	case CONNTAB_WAITING:
		*why = CONNTAB_HEADER_TIMEOUT;
		return line_too_slow(t, c, now, rx);
	default:
		return false;
	}
}

unsigned conntab_sweep(struct conntab *t, uint64_t now_ns, conntab_rx_fn *rx)
{
	unsigned closed = 0;

	pthread_mutex_lock(&t->lock);
	/* slots are taken lowest first, so the live ones sit at the front:
	 * stop at the last, not at cap (a quiet server's tick then costs a
	 * few slots, not 1,200) */
	for (size_t i = 0, seen = 0; i < t->cap && seen < t->live; i++) {
		struct conntab_conn *c = &t->conns[i];
		enum conntab_reason why;

		seen += c->live ? 1 : 0;
		if (c->live && !c->closing && overdue(t, c, now_ns, rx, &why)) {
			close_for(t, c, why);
			closed++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return closed;
}

unsigned conntab_close_idle(struct conntab *t, bool fresh)
{
	unsigned closed = 0;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->cap; i++) {
		struct conntab_conn *c = &t->conns[i];

		if (c->live && !c->closing && load_phase(c) == CONNTAB_WAITING &&
		    (fresh || atomic_load_explicit(&c->requests, memory_order_relaxed) > 0)) {
			c->closing = true;
			t->count--;
			client_drop(t, c->client);
			if (c->fd >= 0) {
				shutdown(c->fd, SHUT_RDWR);
			}
			closed++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return closed;
}

bool conntab_closing(struct conntab *t, const struct conntab_conn *c)
{
	bool closing;

	pthread_mutex_lock(&t->lock);
	closing = c->closing;
	pthread_mutex_unlock(&t->lock);
	return closing;
}

unsigned conntab_count(struct conntab *t)
{
	unsigned n;

	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
