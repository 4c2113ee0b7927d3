/* SPDX-License-Identifier: AGPL-3.0-only */
#include "server.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "activation.h"
#include "build_info.h"

/* Every LISTENER_TICK_MS, on the listener's thread. */
static void tick(void *cls, uint64_t now)
{
	struct server *s = cls;

	conntab_sweep(&s->table, now, listener_received_bytes);
	stream_tick(&s->streams, now);
	/* after a burst of large bodies, give the memory back (8 MiB: well
	 * above what a quiet server holds, so this stays rare) */
	body_budget_trim(&s->budget, 8u << 20);
	if (s->hooks.tick != NULL) {
		s->hooks.tick(s->hooks.tick_cls, now);
	}
}

/* The listener's listener_accept_fn: a newcomer admitted, held while the
 * table is full, or refused (per client, or by a stalled hold: closed,
 * no request yet, so no status to send). */
static int on_accept(void *cls, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct server *s = cls;
	struct conntab_conn *c;
	enum conntab_reason why;

	switch (conntab_enter(&s->table, fd, addr, len, listener_now_ns(), &c, &why)) {
	case CONNTAB_ENTERED:
		http_hand_over(s, c, fd, addr, len);
		return LISTENER_GO;
	case CONNTAB_HELD:
		return LISTENER_GO;
	case CONNTAB_HOLD_FULL:
		return LISTENER_PAUSE;
	default:
		close(fd);
		return LISTENER_GO;
	}
}

/* The listener's listener_kick_fn: each held connection the table can take
 * now is handed over, each held too long closed; accepting goes on while
 * the held queue has room (or has stalled). */
static enum listener_next move_held(void *cls, uint64_t now, bool *soon)
{
	struct server *s = cls;
	struct conntab_held h;
	struct conntab_conn *c;
	enum conntab_entry e;
	size_t held;

	while ((e = conntab_next_held(&s->table, now, &h, &c)) == CONNTAB_ENTERED ||
	       e == CONNTAB_REFUSED) {
		if (e == CONNTAB_ENTERED) {
			http_hand_over(s, c, h.fd, (const struct sockaddr *)&h.addr, h.len);
		} else {
			close(h.fd);
		}
	}
	if (!conntab_may_accept(&s->table, now, &held)) {
		*soon = true;
		return LISTENER_PAUSE;
	}
	*soon = held > 0; /* the front may be waiting for a request to stall */
	return LISTENER_GO;
}

static void kick_listener(void *cls)
{
	listener_kick(cls);
}

/* GET /metrics, as the api's route table calls it (api_context.render_metrics,
 * lent to every request by http.c as s->render_metrics). */
static char *render_metrics(void *cls, const struct catalog *catalog, size_t *len)
{
	struct server *s = cls;
	struct metrics_info info;
	struct metrics_tls tls;
	struct holder_ref *ref;
	struct api_status st = {0};
	char *text;

	memset(&info, 0, sizeof(info));
	holder_acquire(s->holder, &ref);
	info.catalogs = holder_catalogs(ref, &info.num_catalogs);
	info.default_catalog = holder_default_name(s->holder);
	info.version = SPLITKD_VERSION;
	info.build = SPLITKD_BUILD;
	info.digest = catalog->digest;
	info.connections = conntab_count(&s->table);
	info.max_connections = s->cfg->max_connections;
	info.connections_held = (unsigned)conntab_held(&s->table);
	info.ready = !atomic_load(&s->draining);
	for (int i = 0; i < CONNTAB_REASON_COUNT; i++) {
		info.closed[i] = atomic_load_explicit(&s->table.closed[i], memory_order_relaxed);
	}
	info.shed = atomic_load_explicit(&s->budget.shed, memory_order_relaxed);
	info.body_buffered = atomic_load_explicit(&s->budget.used, memory_order_relaxed);
	info.body_budget = s->budget.cap;
	if (s->limiting) {
		info.rate_limit = s->cfg->rate_limit;
		info.rate_limit_clients = ratelimit_clients(&s->limiter);
		info.rate_limit_clients_max = s->cfg->rate_limit_clients;
		info.rate_limited = atomic_load_explicit(&s->limiter.limited, memory_order_relaxed);
		info.rate_limit_evicted = atomic_load_explicit(&s->limiter.evicted, memory_order_relaxed);
	}
	info.streams = atomic_load(&s->streams.open);
	info.max_streams = s->cfg->max_streams;
	info.stream_events = atomic_load_explicit(&s->streams.events_sent, memory_order_relaxed);
	if (s->tls != NULL) {
		tls_figures(s->tls, &tls);
		info.tls = &tls;
	}
	if (s->hooks.report_status != NULL) {
		/* each catalog's reload state, as GET /v1/status has it */
		st.max_named = info.num_catalogs;
		st.named = calloc(st.max_named, sizeof(*st.named));
		st.max_named = st.named != NULL ? st.max_named : 0;
		s->hooks.report_status(s->hooks.report_status_cls, &st);
		info.sources = st.named;
		info.num_sources = st.num_named;
	}
	text = metrics_render(s->metrics, &info, len);
	free(st.named);
	holder_release(s->holder, ref);
	return text;
}

/* The change streams' hub, at the catalog served now. */
static int streams_start(struct server *s)
{
	struct holder_ref *ref;
	const struct catalog *cat = holder_acquire(s->holder, &ref);
	int rc = stream_hub_init(&s->streams, cat, s->cfg->max_streams, s->cfg->stream_heartbeat,
				 s->cfg->revisions, NULL);

	holder_release(s->holder, ref);
	s->streams_up = rc == 0;
	return rc;
}

/* The service manager's sockets when it passed any, else --listen's,
 * bound. */
static int listen_on(struct server *s, char *err, size_t err_cap)
{
	const struct server_config *cfg = s->cfg;

	if (cfg->inherited != NULL && cfg->inherited->num_fds > 0) {
		return listener_adopt(&s->listener, cfg->inherited->fds,
				      (unsigned)cfg->inherited->num_fds, err, err_cap);
	}
	return listener_open(&s->listener, cfg->host, cfg->port, cfg->reuse_port, cfg->backlog, err,
			     err_cap);
}

/* --cors-allow-origin and --rate-limit: what every request then pays for. */
static int limits_start(struct server *s)
{
	const struct server_config *cfg = s->cfg;
	static const char *const never[] = {"/healthz", "/readyz", "/metrics"};

	s->extras = cfg->num_cors_origins > 0 || cfg->rate_limit > 0;
	if (cfg->rate_limit == 0) {
		return 0;
	}
	if (ratelimit_init(&s->limiter, cfg->rate_limit, cfg->rate_limit_clients) != 0) {
		return -1;
	}
	s->limiting = true;
	/* draft-ietf-httpapi-ratelimit-headers-10: a quota of N a second */
	snprintf(s->rate_policy, sizeof(s->rate_policy), "\"client\";q=%u;w=1", cfg->rate_limit);
	for (size_t i = 0; i < 3; i++) {
		s->unlimited[i] = api_route_of(never[i], strlen(never[i]));
	}
	return 0;
}

int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, const struct server_hooks *hooks,
		 struct tls *tls, char *err, size_t err_cap)
{
	struct conntab_limits limits = {
		cfg->max_connections,
		cfg->per_client_connections,
		cfg->threads,
		(uint64_t)cfg->header_timeout * 1000000000u,
		(uint64_t)cfg->body_timeout * 1000000000u,
		cfg->body_min_rate,
		tls != NULL,
		cfg->max_connections, /* held while the table is full, at most as many again */
	};

	memset(s, 0, sizeof(*s));
	s->listener.wake[0] = s->listener.wake[1] = -1; /* listener_close is safe */
	s->listener.kick[0] = s->listener.kick[1] = -1;
	s->cfg = cfg;
	s->holder = holder;
	s->log = log;
	s->metrics = metrics;
	if (hooks != NULL) {
		s->hooks = *hooks;
	}
	s->tls = tls;
	s->render_metrics = render_metrics;
	atomic_init(&s->draining, false);
	atomic_init(&s->in_flight, 0);
	body_budget_init(&s->budget, cfg->body_budget);
	s->limits = (struct api_limits){cfg->max_body, API_DEFAULT_MAX_URI, API_DEFAULT_MAX_BATCH};
	if (conntab_init(&s->table, &limits) != 0) {
		snprintf(err, err_cap, "out of memory");
		return -1;
	}
	if (streams_start(s) != 0 || limits_start(s) != 0) {
		snprintf(err, err_cap, "out of memory");
		return -1;
	}
	if (listen_on(s, err, err_cap) != 0 || http_engines_start(s, err, err_cap) != 0 ||
	    listener_start(&s->listener, on_accept, tick, move_held, s, err, err_cap) != 0) {
		return -1;
	}
	conntab_on_room(&s->table, kick_listener, &s->listener);
	s->port = s->listener.port;
	return 0;
}

unsigned server_drain(struct server *s)
{
	uint64_t now = listener_now_ns(), idle_since = 0;
	uint64_t deadline = now + (uint64_t)s->cfg->drain_timeout * 1000000000u;
	struct timespec pause = {0, 10 * 1000 * 1000};
	unsigned left;

	atomic_store(&s->draining, true);
	listener_stop_accepting(&s->listener);
	if (s->streams_up) {
		stream_close_all(&s->streams); /* each ends, and is no longer in flight */
	}
	while (now < deadline) {
		size_t held = conntab_held(&s->table);

		left = atomic_load(&s->in_flight);
		if (left == 0 && conntab_count(&s->table) == 0 && held == 0) {
			break;
		}
		/* A held connection sent its request and waits for a slot: it is
		 * in flight for the quiet timer, and the idle connections give
		 * it theirs (move_held admits it on the listener's next round,
		 * and it is answered, with Connection: close, like the rest). */
		if (held > 0 && left == 0) {
			conntab_close_idle(&s->table, true);
		}
		/* A busy keep-alive client gets "Connection: close" on its next
		 * answer and leaves; an idle one is closed once all is quiet. */
		if (left > 0 || held > 0) {
			idle_since = 0;
		} else if (idle_since == 0) {
			idle_since = now;
		} else if (now - idle_since >= 500u * 1000 * 1000) {
			break;
		}
		nanosleep(&pause, NULL);
		now = listener_now_ns();
	}
	conntab_close_idle(&s->table, true);
	/* the held ones the deadline leaves are cut like requests in flight */
	return atomic_load(&s->in_flight) + (unsigned)conntab_held(&s->table);
}

void server_stop(struct server *s)
{
	if (s->cfg == NULL) {
		return; /* zeroed: server_start never ran */
	}
	if (s->table.conns != NULL) {
		conntab_on_room(&s->table, NULL, NULL); /* no kick once the pipe closes */
	}
	listener_close(&s->listener);
	if (s->streams_up) {
		/* MHD must not stop with a connection suspended (microhttpd.h) */
		stream_close_all(&s->streams);
	}
	http_engines_stop(s);
	if (s->table.conns != NULL) {
		conntab_cleanup(&s->table);
	}
	if (s->streams_up) {
		stream_hub_cleanup(&s->streams);
		s->streams_up = false;
	}
	ratelimit_cleanup(&s->limiter);
	s->limiting = false;
	s->cfg = NULL; /* stopped: a second stop does nothing */
}
