/* SPDX-License-Identifier: AGPL-3.0-only */
#include "ratelimit.h"

#include <stdlib.h>
#include <string.h>

#include "conntab.h"

#define SECOND 1000000000u
#define NONE UINT32_MAX

int ratelimit_init(struct ratelimit *rl, unsigned rate, unsigned clients)
{
	uint32_t buckets = 1;

	memset(rl, 0, sizeof(*rl));
	pthread_mutex_init(&rl->lock, NULL);
	while (buckets < clients) {
		buckets <<= 1; /* a chain a client on average, and a mask for an index */
	}
	rl->rate = rate;
	rl->interval_ns = SECOND / rate;
	rl->tolerance_ns = rl->interval_ns * (rate - 1);
	rl->cap = clients;
	rl->mask = buckets - 1;
	rl->newest = rl->oldest = NONE;
	rl->clients = calloc(clients, sizeof(*rl->clients));
	rl->heads = malloc(buckets * sizeof(*rl->heads));
	if (rl->clients == NULL || rl->heads == NULL) {
		return -1;
	}
	memset(rl->heads, 0xff, buckets * sizeof(*rl->heads)); /* every chain NONE */
	return 0;
}

void ratelimit_cleanup(struct ratelimit *rl)
{
	if (rl->clients != NULL || rl->heads != NULL) {
		pthread_mutex_destroy(&rl->lock);
	}
	free(rl->clients);
	free(rl->heads);
	rl->clients = NULL;
	rl->heads = NULL;
}

static uint32_t hash(const struct ratelimit *rl, const unsigned char addr[16])
{
	return (uint32_t)(conntab_client_mix(addr) >> 32) & rl->mask;
}

static void unlink_recent(struct ratelimit *rl, uint32_t i)
{
	struct ratelimit_client *c = &rl->clients[i];

	if (c->newer != NONE) {
		rl->clients[c->newer].older = c->older;
	} else {
		rl->newest = c->older;
	}
	if (c->older != NONE) {
		rl->clients[c->older].newer = c->newer;
	} else {
		rl->oldest = c->newer;
	}
}

static void make_newest(struct ratelimit *rl, uint32_t i)
{
	struct ratelimit_client *c = &rl->clients[i];

	c->newer = NONE;
	c->older = rl->newest;
	if (rl->newest != NONE) {
		rl->clients[rl->newest].newer = i;
	}
	rl->newest = i;
	if (rl->oldest == NONE) {
		rl->oldest = i;
	}
}

/* Takes the least recently seen client's entry out of its chain and the
 * recency list, for a new client. */
static uint32_t evict_oldest(struct ratelimit *rl)
{
	uint32_t i = rl->oldest;
	uint32_t *link = &rl->heads[hash(rl, rl->clients[i].addr)];

	while (*link != i) {
		link = &rl->clients[*link].next_hash;
	}
	*link = rl->clients[i].next_hash;
	unlink_recent(rl, i);
	atomic_fetch_add_explicit(&rl->evicted, 1, memory_order_relaxed);
	return i;
}

/* The client's entry, most recent now; a new one is due now. */
static struct ratelimit_client *find(struct ratelimit *rl, const unsigned char addr[16],
				     uint64_t now_ns)
{
	uint32_t h = hash(rl, addr);
	uint32_t i = rl->heads[h];
	struct ratelimit_client *c;

	while (i != NONE && memcmp(rl->clients[i].addr, addr, 16) != 0) {
		i = rl->clients[i].next_hash;
	}
	if (i != NONE) {
		unlink_recent(rl, i);
		make_newest(rl, i);
		return &rl->clients[i];
	}
	i = rl->used < rl->cap ? rl->used++ : evict_oldest(rl);
	c = &rl->clients[i];
	memcpy(c->addr, addr, 16);
	c->due_ns = now_ns;
	c->next_hash = rl->heads[h];
	rl->heads[h] = i;
	make_newest(rl, i);
	return c;
}

static unsigned seconds_up(uint64_t ns)
{
	return (unsigned)((ns + SECOND - 1) / SECOND);
}

struct ratelimit_verdict ratelimit_take(struct ratelimit *rl, const unsigned char addr[16],
					uint64_t now_ns)
{
	struct ratelimit_verdict v = {0};
	struct ratelimit_client *c;
	uint64_t ahead;

	pthread_mutex_lock(&rl->lock);
	c = find(rl, addr, now_ns);
	if (c->due_ns < now_ns) {
		c->due_ns = now_ns; /* idle: a whole burst again, no more */
	}
	ahead = c->due_ns - now_ns;
	v.allowed = ahead <= rl->tolerance_ns;
	if (v.allowed) {
		c->due_ns += rl->interval_ns;
		ahead += rl->interval_ns;
	}
	pthread_mutex_unlock(&rl->lock);
	if (v.allowed) {
		v.remaining = ahead <= rl->tolerance_ns
				      ? (unsigned)((rl->tolerance_ns - ahead) / rl->interval_ns) + 1
				      : 0;
	} else {
		v.retry_after = seconds_up(ahead - rl->tolerance_ns);
		atomic_fetch_add_explicit(&rl->limited, 1, memory_order_relaxed);
	}
	v.reset_s = seconds_up(ahead);
	return v;
}

unsigned ratelimit_clients(struct ratelimit *rl)
{
	unsigned n;

	pthread_mutex_lock(&rl->lock);
	n = rl->used;
	pthread_mutex_unlock(&rl->lock);
	return n;
}
