/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd — main: flags, the catalog, signals. Serving is http.c's; every
 * answer is api/'s. Signals are blocked in every thread and taken here with
 * sigwait, so no handler runs in async-signal context.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "build_info.h"
#include "catalog.h"
#include "cli.h"
#include "embedded.h"
#include "holder.h"
#include "http.h"
#include "jsonin.h"
#include "log.h"
#include "tls.h"

/* Reads a whole file of at most CATALOG_MAX_BYTES. Returns a heap buffer
 * (free it) or NULL with a message in err. */
static char *read_file(const char *path, size_t *len, char *err, size_t cap)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n;

	if (f == NULL) {
		snprintf(err, cap, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc((size_t)CATALOG_MAX_BYTES + 1);
	if (buf == NULL) {
		snprintf(err, cap, "%s: out of memory", path);
		goto done;
	}
	n = fread(buf, 1, (size_t)CATALOG_MAX_BYTES + 1, f);
	if (ferror(f)) {
		snprintf(err, cap, "%s: read error", path);
		free(buf);
		buf = NULL;
	} else if (n > CATALOG_MAX_BYTES) {
		snprintf(err, cap, "%s: larger than %u bytes", path, CATALOG_MAX_BYTES);
		free(buf);
		buf = NULL;
	} else {
		*len = n;
	}
done:
	fclose(f);
	return buf;
}

/* The catalog from a file, or the embedded one when path is NULL. */
static struct catalog *load_catalog(const char *path, char *err, size_t cap)
{
	char why[512];
	struct catalog *cat;
	size_t len = 0;
	char *text;

	if (path == NULL) {
		cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, why, sizeof(why));
		if (cat == NULL) {
			snprintf(err, cap, "embedded catalog: %s", why);
		}
		return cat;
	}
	text = read_file(path, &len, err, cap);
	if (text == NULL) {
		return NULL;
	}
	cat = catalog_load(text, len, why, sizeof(why));
	if (cat == NULL) {
		snprintf(err, cap, "%s: %s", path, why);
	}
	free(text);
	return cat;
}

static int dump_catalog(const struct catalog *cat)
{
	struct jsonw w;
	int ret = 1;

	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	if (!w.failed && fwrite(w.buf, 1, w.len, stdout) == w.len && fputc('\n', stdout) != EOF) {
		ret = 0;
	}
	jsonw_cleanup(&w);
	return ret;
}

static void reload(struct holder *holder, const struct server_config *cfg, const struct log *log,
		   struct metrics *metrics)
{
	char err[640];
	struct catalog *cat;
	char digest[CATALOG_DIGEST_LEN + 1];

	if (cfg->catalog_path == NULL) {
		log_event(log, "reload", "skipped: serving the embedded catalog (no --catalog FILE)");
		return;
	}
	cat = load_catalog(cfg->catalog_path, err, sizeof(err));
	if (cat == NULL) {
		metrics_reload(metrics, false);
		log_event(log, "reload", "refused, the old catalog keeps serving: %s", err);
		return;
	}
	memcpy(digest, cat->digest, sizeof(digest));
	if (holder_swap(holder, cat) != 0) {
		metrics_reload(metrics, false);
		log_event(log, "reload", "refused: out of memory");
		return;
	}
	metrics_reload(metrics, true);
	metrics_catalog_loaded(metrics);
	log_event(log, "reload", "ok: %s, catalog %s", cfg->catalog_path, digest);
}

static int serve(const struct server_config *cfg, struct catalog *cat, const struct log *log)
{
	struct holder holder;
	struct server server;
	struct metrics metrics; /* ~17 KiB, on the main thread's stack for the life of serve() */
	struct tls tls = {0};
	struct tls *use_tls = cfg->tls_cert != NULL ? &tls : NULL;
	sigset_t set;
	char err[640];
	int sig = 0;
	unsigned left;

	/* Blocked before any thread starts, so MHD's threads inherit the mask
	 * and only sigwait below sees these signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (holder_init(&holder, cat) != 0) {
		log_event(log, "error", "out of memory");
		return 1;
	}
	if (metrics_init(&metrics) != 0) {
		log_event(log, "error", "more routes than METRICS_MAX_ROUTES rows: raise it");
		holder_cleanup(&holder);
		return 1;
	}
	metrics_catalog_loaded(&metrics);
	if (use_tls != NULL && tls_init(&tls, cfg->tls_cert, cfg->tls_key, cfg->tls_client_ca,
					cfg->tls_priority, log, err, sizeof(err)) != 0) {
		/* before server_start: nothing of the server to stop */
		log_event(log, "error", "%s", err);
		tls_cleanup(&tls);
		holder_cleanup(&holder);
		metrics_cleanup(&metrics);
		return 1;
	}
	if (server_start(&server, cfg, &holder, log, &metrics, use_tls, err, sizeof(err)) != 0 ||
	    (use_tls != NULL && tls_watch_start(&tls, err, sizeof(err)) != 0)) {
		log_event(log, "error", "%s", err);
		server_stop(&server);
		tls_cleanup(&tls);
		holder_cleanup(&holder);
		metrics_cleanup(&metrics);
		return 1;
	}
	/* the one line scripts wait for: flushed, on stderr */
	fprintf(stderr, "listening on %s://%s%s%s:%u\n", use_tls != NULL ? "https" : "http",
		strchr(cfg->host, ':') ? "[" : "",
		cfg->host, strchr(cfg->host, ':') ? "]" : "", server.port);
	fflush(stderr);
	log_event(log, "start", "splitkd %s (%s), %u threads, catalog %s", SPLITKD_VERSION,
		  SPLITKD_BUILD, cfg->threads, cat->digest);

	for (;;) {
		if (sigwait(&set, &sig) != 0) {
			continue;
		}
		if (sig == SIGHUP) {
			reload(&holder, cfg, log, &metrics);
			if (use_tls != NULL) {
				(void)tls_reload(&tls, true, err, sizeof(err));
			}
			continue;
		}
		break;
	}
	log_event(log, "drain", "signal %d: not ready, draining (up to %us)", sig, cfg->drain_timeout);
	left = server_drain(&server);
	server_stop(&server);
	tls_cleanup(&tls); /* after the server: no connection holds credentials now */
	holder_cleanup(&holder);
	metrics_cleanup(&metrics);
	log_event(log, "stop", "exited cleanly%s", left ? " (drain timed out; requests cut)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	struct server_config cfg;
	struct log log;
	struct catalog *cat;
	char err[640];

	if (cli_parse(argc, argv, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 2;
	}
	log_init(&log, cfg.log_format == CLI_LOG_JSON, cfg.access_log, STDERR_FILENO);
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
	case CLI_DUMP_CATALOG:
	case CLI_SERVE:
		break;
	}
	cat = load_catalog(cfg.catalog_path, err, sizeof(err));
	if (cat == NULL) {
		fprintf(stderr, "splitkd: %s\n", err);
		return 1;
	}
	if (cfg.action == CLI_DUMP_CATALOG) {
		int rc = dump_catalog(cat);

		catalog_free(cat);
		return rc;
	}
	return serve(&cfg, cat, &log);
}
