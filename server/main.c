/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd — main: flags, the catalog, signals. Serving is http.c's; every
 * answer is api/'s. Signals are blocked in every thread and taken here with
 * sigwait, so no handler runs in async-signal context.
 */
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "build_info.h"
#include "catalog.h"
#include "catalogdir.h"
#include "catsource.h"
#include "cli.h"
#include "decide.h"
#include "diff.h"
#include "jsonin.h"
#include "log.h"
#include "serving.h"

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
static int wait_for_stop(const sigset_t *set, struct serving *sv)
{
	int sig = 0;

	for (;;) {
		if (sigwait(set, &sig) != 0) {
			continue;
		}
		if (sig != SIGHUP) {
			return sig;
		}
		serving_reload(sv);
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

/* Serves until SIGTERM or SIGINT. `cat` is the default catalog's file's
 * (NULL: the file is missing or invalid, what rd says, and only
 * --state-dir can start); serve() owns it. Returns the exit status. */
static int serve(const struct server_config *cfg, struct catalog *cat, const struct reload_read *rd,
		 const struct log *log)
{
	struct serving sv;
	sigset_t set;
	char err[640] = "out of memory";
	unsigned left = 0;
	struct rlimit files;
	rlim_t need_files;
	int sig, ret = 1;
	struct holder_ref *ref = NULL;

	need_files = raise_open_files(cfg, &files);
	block_signals(&set);
	if (serving_init(&sv, cfg, cat, rd, log, err, sizeof(err)) != 0 ||
	    serving_start(&sv, err, sizeof(err)) != 0) {
		goto done;
	}
	announce(cfg, sv.use_tls != NULL, sv.server.port, holder_acquire(&sv.holder, &ref), log);
	holder_release(&sv.holder, ref);
	say_open_files(cfg, &files, need_files, log);
	sig = wait_for_stop(&set, &sv);
	log_event(log, "drain", "signal %d: not ready, draining (up to %us)", sig, cfg->drain_timeout);
	left = server_drain(&sv.server);
	ret = 0;
done:
	if (ret != 0) {
		log_event(log, "error", "%s", err);
	}
	serving_cleanup(&sv);
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
