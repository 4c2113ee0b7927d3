/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * server — the server's life: start, the tick, drain, stop, and the
 * figures GET /metrics shows. What it starts is the connection table, the
 * body budget, the change streams' hub, the listener and the engines
 * (http.c, the only part of it that speaks libmicrohttpd); the listener
 * hands each admitted connection to http.c (http_hand_over) and ticks here.
 *
 * server_start/server_stop pair up; server_drain is the SIGTERM path. One
 * owner (main) drives these; what the engines share in struct server
 * (http.h) is atomics or locked by its own module.
 */
#ifndef SPLITKD_SERVER_H
#define SPLITKD_SERVER_H

#include <stddef.h>

#include "cli.h"
#include "holder.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "tls.h"

/* Starts serving, over TLS when `tls` is not NULL (borrowed: it must
 * outlive the server). `hooks` (copied; NULL: none) must outlive
 * server_stop. Returns 0, or -1 with a message in err (the port is in use,
 * the address is not this host's, out of memory); server_stop then undoes
 * what was started. */
int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, const struct server_hooks *hooks,
		 struct tls *tls, char *err, size_t err_cap);

/* SIGTERM: /readyz turns 503, no new connections are accepted, every answer
 * closes its connection, idle keep-alive connections are closed, and this
 * waits (up to cfg->drain_timeout) until no request is in flight and every
 * client has gone or none has sent anything for half a second. Returns
 * the number still in flight at the end. */
unsigned server_drain(struct server *s);

/* Stops the engines and closes every connection. Safe after a failed start
 * and on a zeroed struct (never started). */
void server_stop(struct server *s);

#endif /* SPLITKD_SERVER_H */
