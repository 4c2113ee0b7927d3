/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * http — the libmicrohttpd glue, and the only module that knows about it.
 *
 * Per request it collects the raw request target (through MHD's URI log
 * callback, before MHD decodes anything) and a bounded body, calls the pure
 * api_handle, and queues its answer. Body and header limits answer 413/431
 * before a byte more is read.
 *
 * server_start/server_stop pair up; server_drain is the SIGTERM path. The
 * struct is shared with MHD's threads: its counters are atomics.
 */
#ifndef SPLITKD_HTTP_H
#define SPLITKD_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "holder.h"
#include "log.h"
#include "metrics.h"

struct MHD_Daemon;

struct server {
	struct MHD_Daemon *daemon;
	const struct server_config *cfg;
	struct holder *holder;
	const struct log *log;
	struct metrics *metrics;
	unsigned port; /* the bound port, after server_start */
	int quiesced_fd; /* the listen socket MHD_quiesce_daemon handed back, or -1 */
	atomic_bool draining;
	atomic_uint in_flight;   /* requests begun and not yet completed */
	atomic_uint connections; /* open client connections */
};

/* Starts serving. Returns 0, or -1 with a message in err. */
int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, char *err, size_t err_cap);

/* SIGTERM: /readyz turns 503, no new connections are accepted, every answer
 * closes its connection, and this waits (up to cfg->drain_timeout) until
 * no request is in flight and either every client has gone or none has
 * sent anything for half a second (idle keep-alive connections are then
 * closed by server_stop). Returns the number still in flight at the end. */
unsigned server_drain(struct server *s);

/* Stops the daemon and closes every connection. Safe after a failed start. */
void server_stop(struct server *s);

#endif /* SPLITKD_HTTP_H */
