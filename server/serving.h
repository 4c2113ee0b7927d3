/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * serving — the daemon's serving state, built and torn down in one place:
 * the metrics, the state directory (--state-dir) and the history, the
 * catalogs in service (the holder) and the sources that follow their
 * files (the default, each --catalog NAME=FILE, a --catalog-dir), the TLS
 * files, the reload that drives them all, and the server.
 *
 * Every catalog comes into service one way (hold: the revisions the state
 * directory kept of it, then its file's, journaled and kept), and every
 * reload attempt is heard one way: the reload's one notice, which this
 * module tells the state directory, the change streams, the history and
 * the metrics, in that order. The change streams resume from the state
 * directory once the server is up.
 *
 * With a service manager listening (notify.c), the serving loop's tick
 * pings its watchdog and refreshes the STATUS= line it shows
 * (serving_describe); what to tell it when is main's.
 *
 * What it never does: parse flags, take signals or print (main.c's), or
 * answer a request (the server's). Ownership: serving_init takes the
 * default catalog's file's catalog; what it builds is its own, and
 * serving_cleanup frees all of it. Lifetimes: serving_init, then
 * serving_start, then serving_cleanup once whatever they returned (one
 * exit: every member cleans up safely whether or not it started). The
 * configuration and the log are borrowed and must outlive the struct.
 * Thread-safety: one owner (main's thread) calls these; the reload's
 * thread and the server's engines share what they share through the
 * modules' own locks.
 */
#ifndef SPLITKD_SERVING_H
#define SPLITKD_SERVING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "catalogdir.h"
#include "catsource.h"
#include "cli.h"
#include "holder.h"
#include "journal.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "reload.h"
#include "server.h"
#include "state.h"
#include "tls.h"

#define SERVING_STATUS_MAX 256 /* a STATUS= line, NUL included */

struct serving {
	const struct server_config *cfg;
	const struct log *log;
	struct metrics metrics; /* ~17 KiB: the struct lives on main's stack for the run */
	struct holder holder;
	struct state state;     /* --state-dir's; zeroed (log NULL) without one */
	struct journal journal; /* GET /v1/history's */
	struct tls tls;
	struct tls *use_tls; /* &tls with --tls-cert; NULL: plain HTTP */
	struct reload reload;
	struct catsource catalog; /* the default's (the embedded one: never read) */
	/* every --catalog NAME=FILE's but the default's: a source each */
	struct catsource named[CLI_MAX_CATALOGS];
	size_t num_named;
	struct catalogdir *dir; /* --catalog-dir's other catalogs; NULL: none */
	struct server server;
	/* the change streams hear of the default catalog's swaps: set once
	 * they are resumed (after server_start), read by the reloading thread */
	atomic_bool streams_on;
	struct notify *notify; /* main's, lent by serving_start; NULL before */
	/* the tick's own: when it last looked at the status, what it sent */
	uint64_t status_at_ns;
	char status_sent[SERVING_STATUS_MAX];
};

/*
 * Builds the serving state for `cfg`: the metrics, the state directory,
 * the history, the default catalog (`cat`, its file's, taken; NULL: the
 * file is missing or invalid, as `rd` says, and only a revision the state
 * directory kept can serve), the TLS files, every named catalog and a
 * --catalog-dir's, each followed. Nothing runs yet. Returns 0, or -1 with
 * why in err (a start-up error); serving_cleanup either way.
 */
int serving_init(struct serving *sv, const struct server_config *cfg, struct catalog *cat,
		 const struct reload_read *rd, const struct log *log, char *err, size_t err_cap);

/* Starts the watch of every followed file, then the server, then the
 * change streams (resumed from the state directory). With `notify` on (a
 * service manager listens; lent, it must outlive the server), the
 * serving loop's tick calls notify_tick (the watchdog) and sends the
 * status when it changed (every 2 s at most). Call with the signals
 * blocked: the threads inherit the mask. Returns 0, or -1 with why in
 * err. */
int serving_start(struct serving *sv, struct notify *notify, char *err, size_t err_cap);

/* The one line an operator reads in `systemctl status` (STATUS=): the
 * default catalog and its revision, how many catalogs, the connections
 * and streams open; "draining" once the drain began. Into out (cap
 * bytes, cut to fit). Any thread. */
void serving_describe(struct serving *sv, char *out, size_t cap);

/* SIGHUP: every followed file read again (reload_now). */
void serving_reload(struct serving *sv);

/* Stops the watch and the server and frees everything, the state
 * directory's lock last. Safe on NULL and after a failed init or start. */
void serving_cleanup(struct serving *sv);

#endif /* SPLITKD_SERVING_H */
