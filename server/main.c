/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd — main: the program's outline. Parse the flags (cli.c), then
 * either do a one-shot action (offline.c) or serve: take the sockets a
 * service manager passed (activation.c), load the default catalog, build
 * the serving state (serving.c), start it, announce it (and tell the
 * manager READY=1, notify.c), reload on SIGHUP until SIGTERM or SIGINT
 * (RELOADING=1, then READY=1 again), drain (STOPPING=1), and tear it
 * down through one exit. The process's own settings are made here: the
 * signal mask, the open files limit, malloc's thresholds, the
 * environment read and unset before any thread starts. Signals are
 * blocked in every thread and taken here with sigwait, so no handler
 * runs in async-signal context. Every answer is api/'s.
 */
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "activation.h"
#include "build_info.h"
#include "catalog.h"
#include "catalogdir.h"
#include "catsource.h"
#include "cli.h"
#include "jsonin.h"
#include "log.h"
#include "notify.h"
#include "offline.h"
#include "serving.h"

/* Blocked before any thread starts, so every thread inherits the mask and
 * only sigwait in wait_for_stop sees these signals. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* READY=1 (again, after a reload) with the status line. */
static void say_ready(const struct notify *n, struct serving *sv)
{
	char status[SERVING_STATUS_MAX];

	if (notify_on(n)) {
		serving_describe(sv, status, sizeof(status));
		notify_send(n, "READY=1\nSTATUS=%s", status);
	}
}

/* Serves SIGHUP (a reload of every followed source: each catalog, the
 * TLS files) until SIGINT or SIGTERM, and returns that signal. The
 * manager hears RELOADING=1 before and READY=1 once it is over
 * (reload_now returns when every source was read), so `systemctl
 * reload` can wait for it. */
static int wait_for_stop(const sigset_t *set, struct serving *sv, const struct notify *n)
{
	int sig = 0;

	for (;;) {
		if (sigwait(set, &sig) != 0) {
			continue;
		}
		if (sig != SIGHUP) {
			return sig;
		}
		notify_reloading(n, "reloading every followed file (SIGHUP)");
		serving_reload(sv);
		say_ready(n, sv);
	}
}

/* The sockets from the service manager: a line scripts wait for each,
 * which they are, and whether --listen expected them. */
static void announce_inherited(const struct server_config *cfg, const struct listener *l,
			       const char *scheme, const struct log *log)
{
	char said[LISTENER_MAX_SOCKETS * 80] = "", addr[72];
	size_t used = 0;

	for (unsigned i = 0; i < l->num_fds; i++) {
		const char *name = cfg->inherited->names[i];

		listener_address(l, i, addr, sizeof(addr));
		fprintf(stderr, "listening on %s://%s\n", scheme, addr);
		used += (size_t)snprintf(said + used, sizeof(said) - used, "%s%s%s%s%s", i ? ", " : "",
					 addr, *name ? " (" : "", name, *name ? ")" : "");
		used = used < sizeof(said) ? used : sizeof(said) - 1;
	}
	fflush(stderr);
	log_event(log, "start", "serving on the %u socket%s the service manager passed "
		  "(LISTEN_FDS): %s; binding none", l->num_fds, l->num_fds == 1 ? "" : "s", said);
	if (cfg->listen_given && !listener_serves(l, cfg->host, cfg->port)) {
		bool v6 = strchr(cfg->host, ':') != NULL;

		log_event(log, "start", "--listen %s%s%s:%u is not among them: serving on them alone "
			  "(with sockets passed, --listen only says which address to expect)",
			  v6 ? "[" : "", cfg->host, v6 ? "]" : "", cfg->port);
	}
}

/* The one line scripts wait for (flushed, on stderr), then the log's. */
static void announce(const struct server_config *cfg, struct serving *sv, const struct log *log)
{
	const char *scheme = sv->use_tls != NULL ? "https" : "http";
	bool v6 = strchr(cfg->host, ':') != NULL;
	struct holder_ref *ref;

	if (cfg->inherited != NULL && cfg->inherited->num_fds > 0) {
		announce_inherited(cfg, &sv->server.listener, scheme, log);
	} else {
		fprintf(stderr, "listening on %s://%s%s%s:%u\n", scheme, v6 ? "[" : "", cfg->host,
			v6 ? "]" : "", sv->server.port);
		fflush(stderr);
	}
	log_event(log, "start", "splitkd %s (%s), %u threads, catalog %s", SPLITKD_VERSION,
		  SPLITKD_BUILD, cfg->threads, holder_acquire(&sv->holder, &ref)->digest);
	holder_release(&sv->holder, ref);
}

/* Descriptors besides the sockets of streams and connections: the
 * listener, the engines' wake pipes, the epoll set, the watch, the log,
 * a catalog or TLS file being read. */
#define FD_RESERVE 64

/*
 * Every change stream and every connection is a socket, and a soft limit
 * of open files (often 1024) is far below --max-streams: it is raised to
 * the hard limit when lower than they need. Only when needed: under the
 * systemd unit (LimitNOFILE=) nothing is changed. Returns the limit now
 * in *have and what they need.
 */
static rlim_t raise_open_files(const struct server_config *cfg, struct rlimit *have)
{
	/* the table, and as many again held while it is full (conntab.h) */
	rlim_t need = (rlim_t)cfg->max_streams + 2 * (rlim_t)cfg->max_connections + FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, have) != 0) {
		have->rlim_cur = have->rlim_max = RLIM_INFINITY; /* unknown: nothing to say */
		return need;
	}
	if (have->rlim_cur < need && have->rlim_cur < have->rlim_max) {
		struct rlimit up = {have->rlim_max == RLIM_INFINITY ? need : have->rlim_max,
				    have->rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
			*have = up;
		}
	}
	return need;
}

/* One line when even the hard limit is too low (after the line scripts
 * wait for): accept then pauses at the limit, and streams past it are
 * refused by the kernel, not with a 503. */
static void say_open_files(const struct server_config *cfg, const struct rlimit *have, rlim_t need,
			   const struct log *log)
{
	if (have->rlim_cur < need) {
		log_event(log, "start",
			  "open files limited to %llu (hard limit %llu): --max-streams %u and "
			  "--max-connections %u need %llu; raise the hard limit (ulimit -Hn, "
			  "LimitNOFILE=) or lower them",
			  (unsigned long long)have->rlim_cur, (unsigned long long)have->rlim_max,
			  cfg->max_streams, cfg->max_connections, (unsigned long long)need);
	}
}

/* Serves until SIGTERM or SIGINT. `cat` is the default catalog's file's
 * (NULL: the file is missing or invalid, what rd says, and only
 * --state-dir can start), taken. Returns the exit status. */
static int serve(const struct server_config *cfg, struct catalog *cat, const struct reload_read *rd,
		 const struct log *log)
{
	struct serving sv;
	struct notify notify;
	sigset_t set;
	char err[640] = "out of memory";
	unsigned left = 0;
	struct rlimit files;
	rlim_t need_files;
	int sig, ret = 1;

	need_files = raise_open_files(cfg, &files);
	block_signals(&set);
	/* before any thread: it unsets what it read */
	if (notify_init(&notify, err, sizeof(err)) != 0) {
		log_event(log, "start", "%s", err);
	}
	if (serving_init(&sv, cfg, cat, rd, log, err, sizeof(err)) != 0 ||
	    serving_start(&sv, &notify, err, sizeof(err)) != 0) {
		goto done;
	}
	announce(cfg, &sv, log);
	say_ready(&notify, &sv); /* the catalog is loaded and the port answers */
	say_open_files(cfg, &files, need_files, log);
	sig = wait_for_stop(&set, &sv, &notify);
	log_event(log, "drain", "signal %d: not ready, draining (up to %us)", sig, cfg->drain_timeout);
	notify_send(&notify, "STOPPING=1\nSTATUS=draining after signal %d (up to %us)", sig,
		    cfg->drain_timeout);
	left = server_drain(&sv.server);
	ret = 0;
done:
	if (ret != 0) {
		log_event(log, "error", "%s", err);
	}
	serving_cleanup(&sv); /* the server first: no tick uses the notify after it */
	notify_cleanup(&notify);
	if (ret == 0) {
		log_event(log, "stop", "exited cleanly%s", left ? " (drain timed out; requests cut)" : "");
	}
	return ret;
}

/* A batch's answer (about 340 KiB for 1,024 queries, 640 bytes a query
 * reserved) and its queries are over glibc's first mmap threshold (128
 * KiB): each request mapped fresh pages, faulted every one in (zeroed)
 * and unmapped them again (84 page faults a batch here). Up to 768 KiB
 * now comes from the heap, and up to 16 MiB of free heap top is kept
 * (a worker with 16 batch answers in flight holds about 14 MiB; with 4
 * MiB kept, 36 faults a batch remained): batch answers 1,300 -> 1,650 a
 * second on one thread here (bench/README.md). A larger buffer — a body
 * near --max-body — is still mapped and given back when freed, so what a
 * burst of large bodies took returns to the system (make overload). */
static void keep_large_buffers(void)
{
#ifdef M_MMAP_THRESHOLD
	mallopt(M_MMAP_THRESHOLD, 768 << 10);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}

int main(int argc, char **argv)
{
	struct server_config cfg;
	struct log log;
	struct catalog *cat;
	struct reload_read rd;
	struct activation inherited;
	char err[640], dir_default[PATH_MAX], dir_default_name[CATALOG_NAME_MAX + 1];

	if (cli_parse(argc, argv, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 2;
	}
	/* --catalog-dir: its default catalog's file is the --catalog source */
	if (cfg.catalog_dir != NULL) {
		if (catalogdir_default(cfg.catalog_dir, cfg.default_catalog, dir_default,
				       sizeof(dir_default), dir_default_name, sizeof(dir_default_name), err,
				       sizeof(err)) != 0) {
			fprintf(stderr, "splitkd: %s\n", err);
			return 1;
		}
		cfg.catalog_path = dir_default;
		cfg.default_catalog = dir_default_name;
	}
	log_init(&log, cfg.log_format == CLI_LOG_JSON, cfg.access_log, STDERR_FILENO);
	keep_large_buffers();
	jsonin_init(); /* cJSON's hooks are process-wide: set before any thread */
	switch (cfg.action) {
	case CLI_HELP:
		fputs(cli_usage(), stdout);
		return 0;
	case CLI_VERSION:
		printf("splitkd %s (%s)\n", SPLITKD_VERSION, SPLITKD_BUILD);
		return 0;
	case CLI_CHECK_CATALOG:
		return offline_check_catalog(cfg.check_path);
	case CLI_DIFF:
		return offline_diff(&cfg);
	case CLI_DUMP_CATALOG:
		return offline_dump_catalog(&cfg);
	case CLI_SERVE:
		break;
	}
	/* before any thread: it unsets what it read */
	if (activation_take(&inherited, err, sizeof(err)) != 0) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 1;
	}
	cfg.inherited = &inherited;
	cat = catsource_load(cfg.catalog_path, &rd, err, sizeof(err));
	/* with --state-dir, serve() may start on the revision it kept */
	if (cat == NULL && cfg.state_dir == NULL) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 1;
	}
	return serve(&cfg, cat, &rd, &log);
}
