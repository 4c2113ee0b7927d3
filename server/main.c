/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd — main: flags, the catalog, signals. Serving is http.c's; every
 * answer is api/'s. Signals are blocked in every thread and taken here with
 * sigwait, so no handler runs in async-signal context.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api.h"
#include "build_info.h"
#include "catalogdir.h"
#include "catalog.h"
#include "catsource.h"
#include "cli.h"
#include "decide.h"
#include "diff.h"
#include "embedded.h"
#include "holder.h"
#include "journal.h"
#include "server.h"
#include "jsonin.h"
#include "log.h"
#include "reload.h"
#include "state.h"
#include "tls.h"


static struct catalog *load_catalog(const char *path, char *err, size_t cap)
{
	return catsource_load(path, NULL, err, cap);
}

/* The canonical writing (no white space) re-indented for an editor: each
 * member and element on its own line, two spaces a level, ": " after a
 * key; an empty array or object stays "[]"/"{}". Only white space is added
 * outside strings, so the file loads to the same catalog and digest. */
static int write_pretty(const char *s, size_t len, FILE *out)
{
	unsigned depth = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (in_string) {
			fputc(c, out);
			if (c == '\\' && i + 1 < len) {
				fputc(s[++i], out);
			} else if (c == '"') {
				in_string = false;
			}
			continue;
		}
		if ((c == '{' || c == '[') && i + 1 < len && (s[i + 1] == '}' || s[i + 1] == ']')) {
			fputc(c, out);
			fputc(s[++i], out);
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			fputc(c, out);
			break;
		case '{':
		case '[':
			depth++;
			fprintf(out, "%c\n%*s", c, (int)(2 * depth), "");
			break;
		case '}':
		case ']':
			depth--;
			fprintf(out, "\n%*s%c", (int)(2 * depth), "", c);
			break;
		case ',':
			fprintf(out, ",\n%*s", (int)(2 * depth), "");
			break;
		case ':':
			fputs(": ", out);
			break;
		default:
			fputc(c, out);
			break;
		}
	}
	return ferror(out) ? -1 : 0;
}

static int dump_catalog(const struct catalog *cat, bool pretty)
{
	struct jsonw w;
	int ret = 1;

	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	if (!w.failed &&
	    (pretty ? write_pretty(w.buf, w.len, stdout) == 0 : fwrite(w.buf, 1, w.len, stdout) == w.len) &&
	    fputc('\n', stdout) != EOF) {
		ret = 0;
	}
	jsonw_cleanup(&w);
	return ret;
}

/* --diff OLD NEW: the answer of POST /v1/catalog/diff on stdout; 0 when
 * it lists nothing, 1 when it lists anything (an entry added or removed,
 * any field of one changed, a decision), 2 when a file is invalid. */
static int diff_files(const struct server_config *cfg)
{
	char err[640];
	struct catalog *old = NULL, *new = NULL;
	struct query q;
	struct decide_shape shape;
	struct slice override = {cfg->diff_override,
				 cfg->diff_override ? strlen(cfg->diff_override) : 0};
	struct jsonw w;
	int ret = 2;

	old = load_catalog(cfg->diff_old, err, sizeof(err));
	if (old == NULL) {
		fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
		goto done;
	}
	new = load_catalog(cfg->diff_new, err, sizeof(err));
	if (new == NULL) {
		fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
		goto done;
	}
	memset(&q, 0, sizeof(q));
	q.max_batch_size = (struct query_u32){cfg->diff_max_batch_size != 0, cfg->diff_max_batch_size};
	q.num_seqs = (struct query_u32){cfg->diff_num_seqs != 0, cfg->diff_num_seqs};
	q.max_rows = (struct query_u32){cfg->diff_max_rows != 0, cfg->diff_max_rows};
	shape = decide_shape_of(&q);
	jsonw_init(&w, 65536);
	diff_write(&w, old, new, shape, override);
	if (w.failed || fwrite(w.buf, 1, w.len, stdout) != w.len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0) {
		fprintf(stderr, "splitkd: --diff: cannot write the answer\n");
	} else {
		ret = diff_any_change(old, new, shape, override) ? 1 : 0;
	}
	jsonw_cleanup(&w);
done:
	catalog_free(old);
	catalog_free(new);
	return ret;
}

/* Everything serve() starts, zeroed before anything starts: every cleanup
 * is safe on a member that never started, so serve() has one exit. */
struct serving {
	struct metrics metrics; /* ~17 KiB: on the main thread's stack for the life of serve() */
	struct holder holder;
	struct state state; /* --state-dir's; zeroed (log NULL) without one */
	struct journal journal; /* GET /v1/history's */
	struct tls tls;
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
};

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

/* Serves SIGHUP (a reload of every followed source: each catalog, the
 * TLS files) until SIGINT or SIGTERM, and returns that signal. */
static int wait_for_stop(const sigset_t *set, const struct server_config *cfg,
			 struct reload *reload, const struct log *log)
{
	int sig = 0;

	for (;;) {
		if (sigwait(set, &sig) != 0) {
			continue;
		}
		if (sig != SIGHUP) {
			return sig;
		}
		if (cfg->catalog_path == NULL) {
			log_event(log, "reload",
				  "skipped: serving the embedded catalog (no --catalog FILE)");
		}
		reload_now(reload);
	}
}

/* The one line scripts wait for (flushed, on stderr), then the log's. */
static void announce(const struct server_config *cfg, bool tls, unsigned port,
		     const struct catalog *cat, const struct log *log)
{
	bool v6 = strchr(cfg->host, ':') != NULL;

	fprintf(stderr, "listening on %s://%s%s%s:%u\n", tls ? "https" : "http", v6 ? "[" : "",
		cfg->host, v6 ? "]" : "", port);
	fflush(stderr);
	log_event(log, "start", "splitkd %s (%s), %u threads, catalog %s", SPLITKD_VERSION,
		  SPLITKD_BUILD, cfg->threads, cat->digest);
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
	rlim_t need = (rlim_t)cfg->max_streams + cfg->max_connections + FD_RESERVE;

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

/* The default catalog's name: cli_parse's pick (--default-catalog, or the
 * first --catalog's), else the embedded catalog's. */
static const char *default_name(const struct server_config *cfg)
{
	return cfg->default_catalog != NULL ? cfg->default_catalog : CATALOG_DEFAULT_NAME;
}

/*
 * Puts catalog `name` in service: the revisions the state directory kept
 * of it (oldest first, so they are held as before the restart), then
 * `cat`, the file's (at `source`), which is current. With `cat` NULL (the
 * file is missing or invalid: `why`) the newest kept revision serves
 * instead, and *from_state says so. The attempt is journaled as
 * `trigger`. The default catalog makes the holder (`ho`); the others are
 * swapped into it (`ho` NULL). What serves is kept in the state
 * directory. The one way every catalog comes into service: the default,
 * each --catalog NAME=FILE and each --catalog-dir NAME.json (hold_dir).
 * Returns 0, or -1 with err set (cat freed).
 */
static int hold(struct serving *sv, const struct holder_options *ho, const char *name,
		const char *source, struct catalog *cat, const char *why, enum api_trigger trigger,
		bool *from_state, char *err, size_t cap)
{
	struct catalog *kept[HOLDER_MAX_REVISIONS + 1];
	size_t n = 0;
	int ret = 0;

	*from_state = false;
	if (sv->state.log != NULL) {
		n = state_load(&sv->state, name, kept, sv->state.max_revisions);
	}
	if (cat == NULL && n == 0) {
		snprintf(err, cap, "%s%s", why, sv->state.log != NULL ? " (and --state-dir keeps no "
			 "revision of this catalog to start on)" : "");
		return -1;
	}
	journal_add(&sv->journal, &(struct reload_attempt){
		.catalog = name, .trigger = trigger, .ok = cat != NULL,
		.changed = cat != NULL && (n == 0 || strcmp(kept[n - 1]->digest, cat->digest) != 0),
		.error = cat != NULL ? "" : why, .from = n > 0 ? kept[n - 1]->digest : "",
		.to = cat != NULL ? cat->digest : "",
		.changed_cells = cat != NULL && n > 0 ? diff_changed_cells(kept[n - 1], cat) : 0});
	if (cat != NULL) {
		kept[n++] = cat;
	} else {
		*from_state = true;
		log_event(sv->state.log, "state", "catalog %s: %s; serving its last revision kept, %s",
			  name, why, kept[n - 1]->digest);
	}
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (ret != 0) {
			catalog_free(kept[i]);
			continue;
		}
		rc = ho != NULL && i == 0 ? holder_init_with(&sv->holder, kept[i], ho)
					  : holder_swap_named(&sv->holder, name, kept[i], source);
		if (rc != 0) {
			snprintf(err, cap, "catalog %s: %s", name, holder_swap_error(rc));
			ret = -1;
		}
	}
	if (ret == 0 && sv->state.log != NULL) {
		state_save(&sv->state, kept[n - 1]); /* held: the holder keeps it alive */
	}
	return ret;
}

/* A --catalog-dir NAME.json's way into service (a catalogdir_hold_fn):
 * hold(), as every other catalog's. */
static int hold_dir(void *cls, const char *name, const char *path, struct catalog *cat,
		    const char *why, enum api_trigger trigger, bool *from_state, char *err, size_t cap)
{
	return hold(cls, NULL, name, path, cat, why, trigger, from_state, err, cap);
}

/* Every --catalog NAME=FILE besides the default: loaded (an invalid one
 * stops the start, as the default's does, unless --state-dir kept a
 * revision of it), held by name and followed on its own. Returns 0, or
 * -1 with err set. */
static int add_named(struct serving *sv, const struct server_config *cfg, char *err, size_t cap)
{
	for (size_t i = 0; i < cfg->num_catalogs; i++) {
		const struct cli_catalog *c = &cfg->catalogs[i];
		struct catsource *source = &sv->named[sv->num_named];
		struct reload_read rd;
		struct catalog *cat;
		char why[640];
		bool from_state;

		if (strcmp(c->name, holder_default_name(&sv->holder)) == 0) {
			continue;
		}
		cat = catsource_load(c->path, &rd, why, sizeof(why));
		if (cat == NULL && sv->state.log == NULL) {
			snprintf(err, cap, "%s", why);
			return -1;
		}
		if (hold(sv, NULL, c->name, c->path, cat, why, API_TRIGGER_START, &from_state, err,
			 cap) != 0) {
			return -1;
		}
		if (catsource_add(source, &sv->reload, &sv->holder, c->name, c->path, &rd,
				  cfg->catalog_check) != 0) {
			snprintf(err, cap, "catalog %s: more followed sources than RELOAD_MAX_SOURCES", c->name);
			return -1;
		}
		if (from_state) {
			reload_source_from_state(&source->src, &rd);
			metrics_reload(&sv->metrics, false);
		}
		sv->num_named++;
	}
	return 0;
}

/* The held revision of the default catalog whose digest is `digest`, or NULL. */
static const struct catalog *held(const struct revision *revs, size_t n, const char *digest)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(revs[i].catalog->digest, digest) == 0) {
			return revs[i].catalog;
		}
	}
	return NULL;
}

/*
 * --state-dir: the change stream goes on numbering where the last run
 * left it (its boot id and seqs, streams.json), so a Last-Event-ID from
 * before the restart replays the changes it missed as far back as their
 * revisions are held, and is a reset only beyond. A catalog file changed
 * while splitkd was down is one more change. Before any stream opens.
 */
static void resume_streams(struct serving *sv)
{
	struct stream_hub *hub = &sv->server.streams;
	struct statefile_seq seqs[HOLDER_MAX_REVISIONS + 1];
	const struct catalog *cats[HOLDER_MAX_REVISIONS + 1];
	char boot[EVENTS_BOOT_LEN + 1];
	struct holder_ref *ref;
	const struct catalog *cur = holder_acquire(&sv->holder, &ref);
	const struct revision *revs;
	size_t num_revs, n = 0, k = 0;

	snprintf(boot, sizeof(boot), "%s", hub->boot);
	if (state_streams_load(&sv->state)) {
		n = sv->state.num_seqs;
		memcpy(seqs, sv->state.seqs, n * sizeof(*seqs));
		snprintf(boot, sizeof(boot), "%s", sv->state.boot);
	}
	if (n == 0 || strcmp(seqs[n - 1].revision, cur->digest) != 0) {
		seqs[n].seq = n > 0 ? seqs[n - 1].seq + 1 : 1;
		snprintf(seqs[n].revision, sizeof(seqs[n].revision), "%s", cur->digest);
		n++;
	}
	revs = holder_revisions(ref, &num_revs);
	/* the newest run of seqs whose revisions are held (each looked up
	 * once, newest first), then turned oldest first */
	while (k < n) {
		const struct catalog *c = held(revs, num_revs, seqs[n - 1 - k].revision);

		if (c == NULL) {
			break;
		}
		cats[k++] = c;
	}
	for (size_t i = 0; i < k / 2; i++) {
		const struct catalog *t = cats[i];

		cats[i] = cats[k - 1 - i];
		cats[k - 1 - i] = t;
	}
	if (stream_hub_resume(hub, boot, seqs[n - k].seq, cats, k) == 0) {
		state_streams_keep(&sv->state, boot, seqs[n - 1].seq, seqs[n - 1].revision);
	}
	holder_release(&sv->holder, ref);
}

/*
 * Every attempt's one notice (a reload_published_fn), told to all that
 * hear of a catalog's, in this order: the state directory keeps what now
 * serves, the change streams tell their clients of the default catalog's
 * change (and the state directory keeps the seq it took), the history
 * journals the attempt, the metrics count it. The TLS files' attempts are
 * for their status and their own series alone.
 */
static void published(void *cls, const struct reload_attempt *a)
{
	struct serving *sv = cls;
	struct stream_hub *hub = &sv->server.streams;

	if (a->catalog == NULL) {
		return;
	}
	if (a->changed) {
		metrics_catalog_loaded(&sv->metrics);
		if (sv->state.log != NULL && a->after != NULL) {
			state_catalog_swapped(&sv->state, a->after);
		}
		if (a->source == &sv->catalog.src && a->before != NULL &&
		    atomic_load(&sv->streams_on)) {
			stream_catalog_changed(hub, a->before, a->after);
			if (sv->state.log != NULL) {
				/* only this (the reloading) thread writes the hub's seq */
				state_streams_keep(&sv->state, hub->boot, hub->seq, hub->revision);
			}
		}
	}
	journal_attempted(&sv->journal, a);
	metrics_reload(&sv->metrics, a->ok);
}

/* GET /v1/status (an api_status_fn): every source's, and the state
 * directory's part with one. */
static void serving_status(void *cls, struct api_status *out)
{
	struct serving *sv = cls;

	reload_status(&sv->reload, out);
	if (sv->state.log != NULL) {
		state_report(&sv->state, out);
	}
}

/* Serves until SIGTERM or SIGINT. `cat` is the default catalog's file's
 * (NULL: the file is missing or invalid, what rd says, and only
 * --state-dir can start); serve() owns it. Returns the exit status. */
static int serve(const struct server_config *cfg, struct catalog *cat, const struct reload_read *rd,
		 const struct log *log)
{
	struct serving sv;
	struct holder_options ho = {.max_revisions = cfg->revisions, .source = cfg->catalog_path,
				    .name = default_name(cfg), .max_catalogs = cfg->max_catalogs};
	struct server_hooks hooks = {.report_status = serving_status, .report_status_cls = &sv,
				     .list_history = journal_page, .list_history_cls = &sv.journal};
	struct tls *use_tls = NULL;
	sigset_t set;
	char err[640] = "out of memory";
	unsigned left = 0;
	struct rlimit files;
	rlim_t need_files;
	int sig, ret = 1;
	bool from_state = false;
	struct holder_ref *ref = NULL;

	memset(&sv, 0, sizeof(sv));
	need_files = raise_open_files(cfg, &files);
	block_signals(&set);
	if (metrics_init(&sv.metrics) != 0) {
		catalog_free(cat);
		snprintf(err, sizeof(err), "more routes than METRICS_MAX_ROUTES rows: raise it");
		goto done;
	}
	if (cfg->state_dir != NULL && state_open(&sv.state, cfg->state_dir, cfg->revisions, log,
						 &sv.metrics, err, sizeof(err)) != 0) {
		catalog_free(cat);
		goto done;
	}
	if (journal_init(&sv.journal, cfg->history, sv.state.log != NULL ? &sv.state : NULL, log) != 0) {
		catalog_free(cat);
		goto done;
	}
	if (hold(&sv, &ho, ho.name, cfg->catalog_path, cat, rd->error, API_TRIGGER_START, &from_state,
		 err, sizeof(err)) != 0) {
		goto done;
	}
	metrics_catalog_loaded(&sv.metrics);
	reload_init(&sv.reload, log, published, &sv);
	/* the reload's first source, so its row is the status's first */
	catsource_add(&sv.catalog, &sv.reload, &sv.holder, NULL, cfg->catalog_path,
		      cfg->catalog_path != NULL ? rd : NULL,
		      cfg->catalog_path != NULL ? cfg->catalog_check : 0);
	if (from_state) {
		reload_source_from_state(&sv.catalog.src, rd);
		metrics_reload(&sv.metrics, false);
	}
	if (cfg->tls_cert != NULL) {
		if (tls_init(&sv.tls, &sv.reload, cfg->tls_cert, cfg->tls_key, cfg->tls_client_ca,
			     cfg->tls_priority, log, err, sizeof(err)) != 0) {
			goto done;
		}
		use_tls = &sv.tls;
	}
	if (add_named(&sv, cfg, err, sizeof(err)) != 0) {
		goto done;
	}
	if (cfg->catalog_dir != NULL &&
	    ((sv.dir = catalogdir_new(cfg->catalog_dir, holder_default_name(&sv.holder), hold_dir, &sv)) == NULL ||
	     catalogdir_start(sv.dir, &sv.reload, &sv.holder, &sv.metrics, log, cfg->catalog_check,
			      err, sizeof(err)) != 0)) {
		goto done;
	}
	/* the watch before the server, so a request's status never sees it
	 * half set; after the signal mask, which its thread inherits */
	if (reload_watch_start(&sv.reload, err, sizeof(err)) != 0 ||
	    server_start(&sv.server, cfg, &sv.holder, log, &sv.metrics, &hooks, use_tls, err,
			 sizeof(err)) != 0) {
		goto done;
	}
	/* change streams hear of every swap from now on (a swap the watch
	 * made since server_start is in what they resume, or is no event: a
	 * stream can only have opened in that instant, and its hello names
	 * the catalog then current) */
	if (sv.state.log != NULL) {
		resume_streams(&sv);
	}
	atomic_store(&sv.streams_on, true);
	announce(cfg, use_tls != NULL, sv.server.port, holder_acquire(&sv.holder, &ref), log);
	holder_release(&sv.holder, ref);
	say_open_files(cfg, &files, need_files, log);
	sig = wait_for_stop(&set, cfg, &sv.reload, log);
	log_event(log, "drain", "signal %d: not ready, draining (up to %us)", sig, cfg->drain_timeout);
	left = server_drain(&sv.server);
	ret = 0;
done:
	if (ret != 0) {
		log_event(log, "error", "%s", err);
	}
	server_stop(&sv.server);
	reload_cleanup(&sv.reload); /* the watch stops: no source is read after this */
	catalogdir_free(sv.dir);
	tls_cleanup(&sv.tls); /* after the server: no connection holds credentials now */
	holder_cleanup(&sv.holder);
	journal_cleanup(&sv.journal);
	state_close(&sv.state); /* the lock goes last: nothing writes after this */
	metrics_cleanup(&sv.metrics);
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
		cat = load_catalog(cfg.check_path, err, sizeof(err));
		if (cat == NULL) {
			fprintf(stderr, "splitkd: invalid catalog: %s\n", err);
			return 1;
		}
		printf("%s: ok: %zu targets, %zu models, digest %s\n", cfg.check_path, cat->num_targets,
		       cat->num_models, cat->digest);
		catalog_free(cat);
		return 0;
	case CLI_DIFF:
		return diff_files(&cfg);
	case CLI_DUMP_CATALOG:
	case CLI_SERVE:
		break;
	}
	cat = catsource_load(cfg.catalog_path, &rd, err, sizeof(err));
	/* with --state-dir, serve() may start on the revision it kept */
	if (cat == NULL && (cfg.state_dir == NULL || cfg.action != CLI_SERVE)) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 1;
	}
	if (cfg.action == CLI_DUMP_CATALOG) {
		int rc = dump_catalog(cat, cfg.pretty);

		catalog_free(cat);
		return rc;
	}
	return serve(&cfg, cat, &rd, &log);
}
