/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * ratelimit — --rate-limit N: requests a second per client address, and a
 * burst of one second's worth (N at once, then N a second).
 *
 * Each client is one number, the time its next request would be due if
 * it asked at exactly N a second (the generic cell rate algorithm, which
 * is a token bucket kept as a time): a request is taken while that time
 * is at most one second's worth of requests ahead of now, and pushes it
 * 1/N s on. The clients sit in a fixed table of --rate-limit-clients
 * entries, allocated once: a new client when it is full takes the entry
 * of the least recently seen one, which then starts again with a full
 * burst. So its memory is bounded, whatever the number of addresses.
 *
 * A client is its address without the port (conntab_client_key), IPv4 as
 * IPv4-mapped IPv6. Thread-safe: one mutex around a lookup, which is the
 * only thing done under it. Allocates in ratelimit_init only.
 */
#ifndef SPLITKD_RATELIMIT_H
#define SPLITKD_RATELIMIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ratelimit_client {
	unsigned char addr[16];
	uint64_t due_ns;    /* when its next request is due at N a second */
	uint32_t next_hash; /* the next in its hash chain; RATELIMIT_NONE: the last */
	uint32_t newer, older; /* the recency list */
};

struct ratelimit {
	unsigned rate;          /* requests a second; the burst too */
	uint64_t interval_ns;   /* 1 s / rate */
	uint64_t tolerance_ns;  /* how far ahead of now due_ns may be: (rate - 1) intervals */
	pthread_mutex_t lock;
	struct ratelimit_client *clients; /* cap of them */
	uint32_t *heads;        /* hash chains, mask + 1 of them */
	uint32_t cap, used, mask;
	uint32_t newest, oldest;
	atomic_uint_fast64_t limited, evicted; /* requests refused; clients forgotten for room */
};

/* What one request comes to. */
struct ratelimit_verdict {
	bool allowed;
	unsigned remaining;   /* requests this client may send at once after this one */
	unsigned reset_s;     /* seconds until its whole burst is back (0 or 1) */
	unsigned retry_after; /* refused: seconds until one is taken again (at least 1) */
};

/* `rate` 1 or more; `clients` 1 or more. Returns 0, or -1 out of memory. */
int ratelimit_init(struct ratelimit *rl, unsigned rate, unsigned clients);
/* Safe on a zeroed struct and after a failed init. */
void ratelimit_cleanup(struct ratelimit *rl);

/* One request of client `addr` at `now_ns` (a monotonic clock). */
struct ratelimit_verdict ratelimit_take(struct ratelimit *rl, const unsigned char addr[16],
					uint64_t now_ns);

/* Clients in the table now. */
unsigned ratelimit_clients(struct ratelimit *rl);

#endif /* SPLITKD_RATELIMIT_H */
