/* SPDX-License-Identifier: AGPL-3.0-only */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "buf.h"
#include "engines.h"

/* every status splitkd sends; anything else (MHD's own 505) is "other" */
static const unsigned statuses[METRICS_NUM_STATUS - 1] = {200, 304, 400, 404, 405, 409, 412,
							  413, 414, 415, 417, 431, 500, 501,
							  503};
/* upper bounds in microseconds; the last bucket is +Inf */
static const uint64_t bucket_us[METRICS_NUM_BUCKETS - 1] = {50,   100,  250,   500,   1000,
							    2500, 5000, 10000, 25000, 100000};

int metrics_init(struct metrics *m)
{
	struct timespec ts;

	memset(m, 0, sizeof(*m));
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	/* the start-up load is the first success, as Prometheus counts its own */
	atomic_init(&m->last_reload_ok, true);
	atomic_init(&m->last_reload_success, (int_fast64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	pthread_mutex_init(&m->insert_lock, NULL);
	snprintf(m->targets[METRICS_MAX_TARGETS].name, sizeof(m->targets[0].name), "(other)");
	snprintf(m->targets[METRICS_MAX_TARGETS].catalog, sizeof(m->targets[0].catalog), "(other)");
	return api_route_count() + 1 <= METRICS_MAX_ROUTES ? 0 : -1;
}

void metrics_cleanup(struct metrics *m)
{
	pthread_mutex_destroy(&m->insert_lock);
}

/* Index of the route label row: the router's routes (/metrics among them),
 * then other. */
static int route_row(int route)
{
	size_t count = api_route_count();
	int n = count < METRICS_MAX_ROUTES - 1 ? (int)count : METRICS_MAX_ROUTES - 1;

	return route >= 0 && route < n ? route : n;
}

const char *metrics_route_label(int row)
{
	const char *methods;
	const char *path = api_route_path((size_t)row, &methods);

	return path != NULL ? path : "other";
}

void metrics_request(struct metrics *m, int route, unsigned status, uint64_t micros)
{
	int row = route_row(route), s = 0, b = 0;

	while (s < METRICS_NUM_STATUS - 1 && statuses[s] != status) {
		s++;
	}
	while (b < METRICS_NUM_BUCKETS - 1 && micros > bucket_us[b]) {
		b++;
	}
	atomic_fetch_add_explicit(&m->requests[row][s], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->latency[row][b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->latency_sum_us[row], micros, memory_order_relaxed);
	if (status == 304) {
		atomic_fetch_add_explicit(&m->not_modified, 1, memory_order_relaxed);
	}
}

static inline __attribute__((always_inline)) struct metrics_target *
find_target(struct metrics *m, const char *catalog, const char *name)
{
	size_t n = atomic_load_explicit(&m->num_targets, memory_order_acquire);

	/* the first byte before the call: most names differ there */
	for (size_t i = 0; i < n; i++) {
		if (m->targets[i].name[0] == name[0] && strcmp(m->targets[i].name, name) == 0 &&
		    (catalog == NULL ? m->targets[i].catalog[0] == '\0'
				     : strcmp(m->targets[i].catalog, catalog) == 0)) {
			return &m->targets[i];
		}
	}
	return NULL;
}

void metrics_decision(struct metrics *m, const char *catalog, const char *target,
		      enum splitk_kind kind)
{
	const char *name = target != NULL ? target : "(none)";
	struct metrics_target *t = find_target(m, catalog, name);

	if (t == NULL) {
		/* first sighting: publish the name before the count that makes it
		 * visible, so a lock-free reader never sees a half-written name */
		pthread_mutex_lock(&m->insert_lock);
		t = find_target(m, catalog, name);
		if (t == NULL) {
			size_t n = atomic_load_explicit(&m->num_targets, memory_order_relaxed);

			if (n < METRICS_MAX_TARGETS) {
				t = &m->targets[n];
				snprintf(t->name, sizeof(t->name), "%s", name);
				/* "": the default, named at the scrape */
				snprintf(t->catalog, sizeof(t->catalog), "%s", catalog != NULL ? catalog : "");
				atomic_store_explicit(&m->num_targets, n + 1, memory_order_release);
			} else {
				t = &m->targets[METRICS_MAX_TARGETS];
			}
		}
		pthread_mutex_unlock(&m->insert_lock);
	}
	atomic_fetch_add_explicit(&t->by_kind[kind <= SPLITK_PINNED ? kind : SPLITK_PINNED], 1,
				  memory_order_relaxed);
}

_Static_assert(METRICS_ENGINES == ENGINES_COUNT - 1,
	       "a row of engine answers per engine but the seed");

_Static_assert(ENGINES_PATH_COUNT == 4, "a column of engine paths per path");

void metrics_engine(void *cls, int engine, int path, bool answered)
{
	struct metrics *m = cls;

	if (engine > ENGINES_SEED && engine < ENGINES_COUNT) {
		atomic_fetch_add_explicit(&m->engine_answers[engine - 1][answered ? 0 : 1], 1,
					  memory_order_relaxed);
		if (path >= 0 && path < ENGINES_PATH_COUNT) {
			atomic_fetch_add_explicit(&m->engine_paths[engine - 1][path], 1,
						  memory_order_relaxed);
		}
	}
}

void metrics_reload(struct metrics *m, bool ok)
{
	struct timespec ts;

	atomic_fetch_add_explicit(ok ? &m->reloads_ok : &m->reloads_failed, 1, memory_order_relaxed);
	atomic_store(&m->last_reload_ok, ok);
	if (ok) {
		clock_gettime(CLOCK_REALTIME, &ts);
		atomic_store(&m->last_reload_success, (int_fast64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	}
}

void metrics_catalog_loaded(struct metrics *m)
{
	atomic_store(&m->catalog_loaded_at, (int_fast64_t)time(NULL));
}

/* The text grows in the one growable buffer (buf.h). */
struct out {
	struct buf text;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&o->text, fmt, ap);
	va_end(ap);
}

static uint64_t load(atomic_uint_fast64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static long resident_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (f == NULL) {
		return 0;
	}
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
		resident = 0;
	}
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

static void render_tls(struct out *o, const struct metrics_tls *t)
{
	put(o, "# HELP splitkd_tls_certificate_expiry_timestamp_seconds When the served TLS "
	       "certificate expires (its notAfter).\n"
	       "# TYPE splitkd_tls_certificate_expiry_timestamp_seconds gauge\n"
	       "splitkd_tls_certificate_expiry_timestamp_seconds %lld\n"
	       "# HELP splitkd_tls_certificate_loaded_timestamp_seconds When the served TLS "
	       "certificate was loaded.\n"
	       "# TYPE splitkd_tls_certificate_loaded_timestamp_seconds gauge\n"
	       "splitkd_tls_certificate_loaded_timestamp_seconds %lld\n"
	       "# HELP splitkd_tls_reloads_total Reloads of the TLS files (a change seen, or "
	       "SIGHUP), by result.\n"
	       "# TYPE splitkd_tls_reloads_total counter\n"
	       "splitkd_tls_reloads_total{result=\"ok\"} %llu\n"
	       "splitkd_tls_reloads_total{result=\"error\"} %llu\n"
	       "# HELP splitkd_tls_last_reload_success Whether the last reload of the TLS files "
	       "succeeded (0: the old certificate keeps serving).\n"
	       "# TYPE splitkd_tls_last_reload_success gauge\n"
	       "splitkd_tls_last_reload_success %d\n"
	       "# HELP splitkd_tls_handshakes_total TLS handshakes completed.\n"
	       "# TYPE splitkd_tls_handshakes_total counter\n"
	       "splitkd_tls_handshakes_total %llu\n"
	       "# HELP splitkd_tls_handshake_failures_total TLS handshakes that failed, by reason.\n"
	       "# TYPE splitkd_tls_handshake_failures_total counter\n"
	       "splitkd_tls_handshake_failures_total{reason=\"client_certificate\"} %llu\n"
	       "splitkd_tls_handshake_failures_total{reason=\"handshake\"} %llu\n",
	    (long long)t->expiry, (long long)t->loaded_at, (unsigned long long)t->reloads_ok,
	    (unsigned long long)t->reloads_error, t->last_reload_ok ? 1 : 0,
	    (unsigned long long)t->handshakes, (unsigned long long)t->failures_client_certificate,
	    (unsigned long long)t->failures_handshake);
}

static void render_requests(struct metrics *m, struct out *o, int rows)
{
	put(o, "# HELP splitkd_requests_total Requests answered, by route and status.\n"
	       "# TYPE splitkd_requests_total counter\n");
	for (int r = 0; r < rows; r++) {
		for (int s = 0; s < METRICS_NUM_STATUS; s++) {
			uint64_t v = load(&m->requests[r][s]);

			if (v == 0) {
				continue;
			}
			if (s < METRICS_NUM_STATUS - 1) {
				put(o, "splitkd_requests_total{route=\"%s\",status=\"%u\"} %llu\n",
				    metrics_route_label(r), statuses[s], (unsigned long long)v);
			} else {
				put(o, "splitkd_requests_total{route=\"%s\",status=\"other\"} %llu\n",
				    metrics_route_label(r), (unsigned long long)v);
			}
		}
	}
	put(o, "# HELP splitkd_request_duration_seconds Time from the first byte of a request "
	       "to its queued answer.\n"
	       "# TYPE splitkd_request_duration_seconds histogram\n");
	for (int r = 0; r < rows; r++) {
		uint64_t cumulative = 0;
		uint64_t counts[METRICS_NUM_BUCKETS];

		for (int b = 0; b < METRICS_NUM_BUCKETS; b++) {
			counts[b] = load(&m->latency[r][b]);
			cumulative += counts[b];
		}
		if (cumulative == 0) {
			continue;
		}
		cumulative = 0;
		for (int b = 0; b < METRICS_NUM_BUCKETS; b++) {
			cumulative += counts[b];
			if (b < METRICS_NUM_BUCKETS - 1) {
				put(o, "splitkd_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
				    metrics_route_label(r), (double)bucket_us[b] / 1e6,
				    (unsigned long long)cumulative);
			} else {
				put(o, "splitkd_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
				    metrics_route_label(r), (unsigned long long)cumulative);
			}
		}
		put(o, "splitkd_request_duration_seconds_sum{route=\"%s\"} %.6f\n", metrics_route_label(r),
		    (double)load(&m->latency_sum_us[r]) / 1e6);
		put(o, "splitkd_request_duration_seconds_count{route=\"%s\"} %llu\n",
		    metrics_route_label(r), (unsigned long long)cumulative);
	}
}

static void render_decisions(struct metrics *m, struct out *o, const char *default_catalog)
{
	size_t n = atomic_load_explicit(&m->num_targets, memory_order_acquire);

	put(o, "# HELP splitkd_decisions_total Split-K decisions answered, by catalog, target and "
	       "policy kind.\n"
	       "# TYPE splitkd_decisions_total counter\n");
	for (size_t i = 0; i <= METRICS_MAX_TARGETS; i++) {
		if (i >= n && i != METRICS_MAX_TARGETS) {
			continue;
		}
		for (int k = 0; k < 3; k++) {
			uint64_t v = load(&m->targets[i].by_kind[k]);

			if (v != 0) {
				put(o, "splitkd_decisions_total{catalog=\"%s\",target=\"%s\",policy=\"%s\"} %llu\n",
				    m->targets[i].catalog[0] != '\0' ? m->targets[i].catalog : default_catalog,
				    m->targets[i].name,
				    splitk_kind_name((enum splitk_kind)k), (unsigned long long)v);
			}
		}
	}
	put(o, "# HELP splitkd_engine_answers_total Answers of the other engines (engine=), by engine "
	       "and result (answered, refused: a shape it has no kernel for).\n"
	       "# TYPE splitkd_engine_answers_total counter\n");
	for (int id = 1; id < ENGINES_COUNT; id++) {
		for (int r = 0; r < 2; r++) {
			put(o, "splitkd_engine_answers_total{engine=\"%s\",result=\"%s\"} %llu\n",
			    engines_info((enum engines_id)id)->name, r == 0 ? "answered" : "refused",
			    (unsigned long long)load(&m->engine_answers[id - 1][r]));
		}
	}
	put(o, "# HELP splitkd_engine_paths_total Launches of the other engines by engine and "
	       "path (uniform: num_seqs of seq_len; mixed: seq_lens; tensor_cores: FlashInfer's "
	       "tensor-core plan), answered or refused.\n"
	       "# TYPE splitkd_engine_paths_total counter\n");
	for (int id = 1; id < ENGINES_COUNT; id++) {
		for (int path = 0; path < ENGINES_PATH_COUNT; path++) {
			put(o, "splitkd_engine_paths_total{engine=\"%s\",path=\"%s\"} %llu\n",
			    engines_info((enum engines_id)id)->name,
			    engines_path_name((enum engines_path)path),
			    (unsigned long long)load(&m->engine_paths[id - 1][path]));
		}
	}
	put(o, "# HELP splitkd_not_modified_total Conditional requests answered 304.\n"
	       "# TYPE splitkd_not_modified_total counter\n"
	       "splitkd_not_modified_total %llu\n",
	    (unsigned long long)load(&m->not_modified));
}

/* Connections, the limits that protect them, and the body budget. */
static void render_connections(struct out *o, const struct metrics_info *info)
{
	put(o, "# HELP splitkd_connections Open client connections.\n"
	       "# TYPE splitkd_connections gauge\n"
	       "splitkd_connections %u\n"
	       "# HELP splitkd_connections_max The --max-connections limit.\n"
	       "# TYPE splitkd_connections_max gauge\n"
	       "splitkd_connections_max %u\n"
	       "# HELP splitkd_connections_held Connections accepted while the table is full, "
	       "waiting for a slot.\n"
	       "# TYPE splitkd_connections_held gauge\n"
	       "splitkd_connections_held %u\n"
	       "# HELP splitkd_ready 1 while ready, 0 while draining after SIGTERM.\n"
	       "# TYPE splitkd_ready gauge\n"
	       "splitkd_ready %d\n",
	    info->connections, info->max_connections, info->connections_held, info->ready ? 1 : 0);
	put(o, "# HELP splitkd_connections_closed_total Connections splitkd closed or refused, "
	       "by reason.\n"
	       "# TYPE splitkd_connections_closed_total counter\n");
	for (int r = 0; r < CONNTAB_REASON_COUNT; r++) {
		put(o, "splitkd_connections_closed_total{reason=\"%s\"} %llu\n",
		    conntab_reason_name((enum conntab_reason)r), (unsigned long long)info->closed[r]);
	}
	put(o, "# HELP splitkd_requests_shed_total Requests answered 503 because the body "
	       "budget was full.\n"
	       "# TYPE splitkd_requests_shed_total counter\n"
	       "splitkd_requests_shed_total %llu\n"
	       "# HELP splitkd_body_buffered_bytes Request body bytes held now.\n"
	       "# TYPE splitkd_body_buffered_bytes gauge\n"
	       "splitkd_body_buffered_bytes %zu\n"
	       "# HELP splitkd_body_budget_bytes The --body-budget limit.\n"
	       "# TYPE splitkd_body_budget_bytes gauge\n"
	       "splitkd_body_budget_bytes %zu\n",
	    (unsigned long long)info->shed, info->body_buffered, info->body_budget);
	if (info->rate_limit == 0) {
		return;
	}
	put(o, "# HELP splitkd_rate_limited_total Requests answered 429: their client address had "
	       "spent its --rate-limit.\n"
	       "# TYPE splitkd_rate_limited_total counter\n"
	       "splitkd_rate_limited_total %llu\n"
	       "# HELP splitkd_rate_limit Requests a second per client address (--rate-limit).\n"
	       "# TYPE splitkd_rate_limit gauge\n"
	       "splitkd_rate_limit %u\n"
	       "# HELP splitkd_rate_limit_clients Client addresses the rate limit remembers now.\n"
	       "# TYPE splitkd_rate_limit_clients gauge\n"
	       "splitkd_rate_limit_clients %u\n"
	       "# HELP splitkd_rate_limit_clients_max The --rate-limit-clients limit.\n"
	       "# TYPE splitkd_rate_limit_clients_max gauge\n"
	       "splitkd_rate_limit_clients_max %u\n"
	       "# HELP splitkd_rate_limit_evictions_total Client addresses forgotten for a new one "
	       "(the least recently seen), which start again with a whole burst.\n"
	       "# TYPE splitkd_rate_limit_evictions_total counter\n"
	       "splitkd_rate_limit_evictions_total %llu\n",
	    (unsigned long long)info->rate_limited, info->rate_limit, info->rate_limit_clients,
	    info->rate_limit_clients_max, (unsigned long long)info->rate_limit_evicted);
}

/* Each catalog's own reload state: a bad file of one catalog names itself. */
static void render_catalog_reloads(struct out *o, const struct metrics_info *info)
{
	if (info->sources == NULL) {
		return;
	}
	put(o, "# HELP splitkd_catalog_reload_successful Whether the last reload attempt of this catalog "
	       "succeeded (0: its file is refused, its last good serves).\n"
	       "# TYPE splitkd_catalog_reload_successful gauge\n");
	for (size_t i = 0; i < info->num_sources; i++) {
		put(o, "splitkd_catalog_reload_successful{catalog=\"%s\"} %d\n", info->sources[i].name,
		    info->sources[i].st.last.ok ? 1 : 0);
	}
	put(o, "# HELP splitkd_catalog_reloads_total Reload attempts of this catalog, by result.\n"
	       "# TYPE splitkd_catalog_reloads_total counter\n");
	for (size_t i = 0; i < info->num_sources; i++) {
		put(o, "splitkd_catalog_reloads_total{catalog=\"%s\",result=\"ok\"} %llu\n"
		       "splitkd_catalog_reloads_total{catalog=\"%s\",result=\"error\"} %llu\n",
		    info->sources[i].name, (unsigned long long)info->sources[i].st.reloads_ok,
		    info->sources[i].name, (unsigned long long)info->sources[i].st.reloads_error);
	}
}

char *metrics_render(struct metrics *m, const struct metrics_info *info, size_t *len)
{
	struct out o;
	int rows = route_row(METRICS_ROUTE_NONE) + 1;

	buf_init(&o.text, 16384);
	if (o.text.failed) {
		return NULL;
	}
	render_requests(m, &o, rows);
	render_decisions(m, &o, info->default_catalog != NULL ? info->default_catalog : "default");
	render_connections(&o, info);
	put(&o, "# HELP splitkd_streams Open change streams (GET /v1/events).\n"
		"# TYPE splitkd_streams gauge\n"
		"splitkd_streams %u\n"
		"# HELP splitkd_streams_max The --max-streams limit.\n"
		"# TYPE splitkd_streams_max gauge\n"
		"splitkd_streams_max %u\n"
		"# HELP splitkd_stream_events_total Events sent on change streams, heartbeats not counted.\n"
		"# TYPE splitkd_stream_events_total counter\n"
		"splitkd_stream_events_total %llu\n",
	    info->streams, info->max_streams, (unsigned long long)info->stream_events);
	if (info->tls != NULL) {
		render_tls(&o, info->tls);
	}
	put(&o, "# HELP splitkd_catalog_info Each catalog being served, by name, and its revision.\n"
		"# TYPE splitkd_catalog_info gauge\n");
	for (size_t i = 0; i < (info->catalogs != NULL ? info->num_catalogs : 1); i++) {
		const char *name = info->catalogs != NULL ? info->catalogs[i].name : "default";
		const char *digest = info->catalogs != NULL ? info->catalogs[i].revisions[0].catalog->digest
							    : info->digest;

		put(&o, "splitkd_catalog_info{catalog=\"%s\",digest=\"%s\",revision=\"%s\"} 1\n", name,
		    digest, digest);
	}
	put(&o, "# HELP splitkd_catalog_loaded_timestamp_seconds When the served catalog was loaded.\n"
		"# TYPE splitkd_catalog_loaded_timestamp_seconds gauge\n"
		"splitkd_catalog_loaded_timestamp_seconds %lld\n",
	    (long long)atomic_load(&m->catalog_loaded_at));
	put(&o, "# HELP splitkd_reloads_total Catalog reload attempts (SIGHUP or the file watch), "
		"by result.\n"
		"# TYPE splitkd_reloads_total counter\n"
		"splitkd_reloads_total{result=\"ok\"} %llu\n"
		"splitkd_reloads_total{result=\"error\"} %llu\n"
		"# HELP splitkd_catalog_last_reload_successful Whether the last reload attempt succeeded.\n"
		"# TYPE splitkd_catalog_last_reload_successful gauge\n"
		"splitkd_catalog_last_reload_successful %d\n"
		"# HELP splitkd_catalog_last_reload_success_timestamp_seconds When a reload "
		"(or the start-up load) last succeeded.\n"
		"# TYPE splitkd_catalog_last_reload_success_timestamp_seconds gauge\n"
		"splitkd_catalog_last_reload_success_timestamp_seconds %.3f\n",
	    (unsigned long long)load(&m->reloads_ok), (unsigned long long)load(&m->reloads_failed),
	    atomic_load(&m->last_reload_ok) ? 1 : 0,
	    (double)atomic_load(&m->last_reload_success) / 1000.0);
	render_catalog_reloads(&o, info);
	if (atomic_load(&m->state_on)) {
		put(&o, "# HELP splitkd_state_write_errors_total Revisions the state directory could not keep "
			"(a full or read-only directory); serving goes on.\n"
			"# TYPE splitkd_state_write_errors_total counter\n"
			"splitkd_state_write_errors_total %llu\n"
			"# HELP splitkd_state_files_skipped_total State files not taken at start "
			"(torn, edited or misnamed).\n"
			"# TYPE splitkd_state_files_skipped_total counter\n"
			"splitkd_state_files_skipped_total %llu\n"
			"# HELP splitkd_state_history_lines_skipped_total History lines not "
			"taken at start (torn by a crash, or edited).\n"
			"# TYPE splitkd_state_history_lines_skipped_total counter\n"
			"splitkd_state_history_lines_skipped_total %llu\n",
		    (unsigned long long)load(&m->state_write_errors),
		    (unsigned long long)load(&m->state_files_skipped),
		    (unsigned long long)load(&m->state_history_lines_skipped));
	}
	put(&o, "# HELP splitkd_build_info The running build.\n"
		"# TYPE splitkd_build_info gauge\n"
		"splitkd_build_info{version=\"%s\",build=\"%s\"} 1\n",
	    info->version, info->build);
	put(&o, "# HELP process_start_time_seconds Start time of the process since the epoch.\n"
		"# TYPE process_start_time_seconds gauge\n"
		"process_start_time_seconds %.3f\n"
		"# HELP process_resident_memory_bytes Resident memory.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes %ld\n",
	    m->start_time, resident_bytes());
	return buf_take(&o.text, len);
}
