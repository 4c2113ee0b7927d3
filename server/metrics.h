/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * metrics — counters for /metrics, in the Prometheus text format 0.0.4.
 *
 * The hot path only does relaxed atomic increments: requests by route and
 * status, a latency histogram by route, decisions by catalog, target and
 * policy. Labels are bounded: routes come from the router's table, catalogs
 * and targets from the names catalogs declare (at most METRICS_MAX_TARGETS
 * distinct pairs, the rest count as "(other)"), never from raw request
 * input. A new target name takes a
 * mutex once, when it is first seen; every later count is lock-free.
 */
#ifndef SPLITKD_METRICS_H
#define SPLITKD_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "conntab.h"
#include "revision.h"
#include "status.h"
#include "splitk.h"

/* the router's routes (/metrics among them), and "other" */
#define METRICS_MAX_ROUTES (API_MAX_ROUTES + 1)
#define METRICS_NUM_STATUS 16
#define METRICS_NUM_BUCKETS 11
#define METRICS_MAX_TARGETS 128
#define METRICS_ENGINES 9 /* engines.h less the seed: fa2 ... flashmla */
#define METRICS_ROUTE_NONE (-1) /* no route: a 404 */

struct metrics_target {
	char catalog[72]; /* the catalog's name (catalog.h) */
	char name[72];
	atomic_uint_fast64_t by_kind[3]; /* legacy, auto, pinned */
};

struct metrics {
	atomic_uint_fast64_t requests[METRICS_MAX_ROUTES][METRICS_NUM_STATUS];
	atomic_uint_fast64_t latency[METRICS_MAX_ROUTES][METRICS_NUM_BUCKETS];
	atomic_uint_fast64_t latency_sum_us[METRICS_MAX_ROUTES];
	atomic_uint_fast64_t not_modified;
	atomic_uint_fast64_t reloads_ok, reloads_failed;
	atomic_int_fast64_t catalog_loaded_at; /* unix seconds */
	atomic_bool last_reload_ok;              /* the last attempt (the start-up load at first) */
	atomic_int_fast64_t last_reload_success; /* unix milliseconds */
	double start_time;                     /* unix seconds, set once */
	/* --state-dir (state.c's): its series are written only with one */
	atomic_bool state_on;
	atomic_uint_fast64_t state_write_errors, state_files_skipped;
	atomic_uint_fast64_t state_history_lines_skipped; /* journal.c's: lines not taken */
	/* other engines' answers (engines.h), by engine (less the seed):
	 * answered, refused */
	atomic_uint_fast64_t engine_answers[METRICS_ENGINES][2];
	/* by path (enum engines_path): uniform, mixed, tensor_cores */
	atomic_uint_fast64_t engine_paths[METRICS_ENGINES][4];
	pthread_mutex_t insert_lock;
	atomic_size_t num_targets;
	struct metrics_target targets[METRICS_MAX_TARGETS + 1]; /* + "(other)" */
};

/* The TLS figures a scrape shows as the splitkd_tls_* series: tls.c reads
 * them (tls_figures), this module writes them. */
struct metrics_tls {
	int64_t expiry;    /* the served certificate's notAfter, unix seconds */
	int64_t loaded_at; /* when it was loaded, unix seconds */
	uint64_t reloads_ok, reloads_error;
	bool last_reload_ok;
	uint64_t handshakes;
	uint64_t failures_client_certificate, failures_handshake;
};

/* What a scrape shows besides the counters: the server's own state. */
struct metrics_info {
	const char *version, *build, *digest;
	unsigned connections, max_connections;
	unsigned connections_held; /* accepted while the table is full (conntab.h) */
	bool ready;
	uint64_t closed[CONNTAB_REASON_COUNT]; /* connections splitkd closed or refused */
	uint64_t shed;                         /* requests refused for the body budget */
	/* --rate-limit's (ratelimit.h); rate_limit 0: off, and no
	 * splitkd_rate_limit* series */
	unsigned rate_limit, rate_limit_clients, rate_limit_clients_max;
	uint64_t rate_limited, rate_limit_evicted;
	size_t body_buffered, body_budget;
	unsigned streams, max_streams; /* open change streams (GET /v1/events), --max-streams */
	uint64_t stream_events;        /* events sent on them, heartbeats not counted */
	const struct metrics_tls *tls; /* NULL: plain HTTP, no splitkd_tls_* series */
	/* every catalog served by name (revision.h), for the catalog="..."
	 * series; NULL: the one catalog of `digest`, named default */
	const struct revision_named *catalogs;
	size_t num_catalogs;
	const char *default_catalog; /* the default's name; NULL: "default" */
	/* each catalog's source state (the reload's), for the per-catalog
	 * reload series; NULL: none */
	const struct api_named_source *sources;
	size_t num_sources;
};

/* Returns 0, or -1 when the router has more routes than the table has
 * rows (a route would be counted as "other": a build error, caught at
 * start). */
int metrics_init(struct metrics *m);
/* Safe on a zeroed struct: an all-zero mutex is PTHREAD_MUTEX_INITIALIZER
 * on glibc and musl, and metrics_init inits it even when it fails. */
void metrics_cleanup(struct metrics *m);

/* `route` is the router's index (api_route_of) or METRICS_ROUTE_NONE. */
void metrics_request(struct metrics *m, int route, unsigned status, uint64_t micros);
/* A decision answered from the catalog named `catalog` (NULL: the
 * default, whose name metrics_info gives at a scrape); `target` NULL: an
 * sm_count-only decision. */
/* One answer of another engine (api_engine_fn, with the metrics as cls). */
void metrics_engine(void *m, int engine, int path, bool answered);

void metrics_decision(struct metrics *m, const char *catalog, const char *target,
		      enum splitk_kind kind);
/* A reload attempt (SIGHUP or the watch): counted by result; the last
 * one's result and the time of the last success are kept. */
void metrics_reload(struct metrics *m, bool ok);
void metrics_catalog_loaded(struct metrics *m);

/* Renders the text format into a new buffer (free it); NULL when out of
 * memory. */
char *metrics_render(struct metrics *m, const struct metrics_info *info, size_t *len);

/* The label of a row: the router's template, or "other". */
const char *metrics_route_label(int row);

#endif /* SPLITKD_METRICS_H */
