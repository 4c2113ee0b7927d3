/* SPDX-License-Identifier: AGPL-3.0-only */
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api.h"
#include "build_info.h"
#include "jsonw.h"
#include "problem.h"

/* One request's state, from the URI log callback to the completion notice. */
struct request {
	struct server *server;
	char *uri;
	size_t uri_len;
	char *body;
	size_t body_len, body_cap;
	bool headers_seen;
	bool answered;  /* a response is queued */
	bool too_large; /* the body passed max_body; the rest is discarded */
	size_t declared_len; /* Content-Length, 0 when absent */
	size_t discarded;    /* bytes of a refused body read and dropped */
	uint64_t start_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* MHD hands over the request target here, before it decodes anything: the
 * api layer wants the bytes as sent. The return value becomes *req_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct server *s = cls;
	size_t len;
	struct request *r;

	(void)conn;
	/* RFC 9112 3.2.2: a server must accept the absolute form
	 * (GET http://host/path); the route is the path */
	if (strncasecmp(uri, "http://", 7) == 0 || strncasecmp(uri, "https://", 8) == 0) {
		const char *path = strchr(strstr(uri, "//") + 2, '/');

		uri = path != NULL ? path : "/";
	}
	len = strlen(uri);
	/* one allocation: the state, then the target's bytes */
	r = malloc(sizeof(*r) + len + 1);
	if (r == NULL) {
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->server = s;
	r->uri_len = len;
	r->uri = (char *)(r + 1);
	memcpy(r->uri, uri, len + 1);
	r->start_ns = now_ns();
	atomic_fetch_add(&s->in_flight, 1);
	return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct server *s = cls;
	struct request *r = *req_cls;

	(void)conn;
	(void)why;
	if (r == NULL) {
		return;
	}
	atomic_fetch_sub(&s->in_flight, 1);
	free(r->body);
	free(r);
	*req_cls = NULL;
}

/* Queues an answer with the headers every answer carries. A body the
 * response owns is handed to MHD (which free()s it) instead of copied. */
static enum MHD_Result queue(struct MHD_Connection *conn, struct request *r, const char *method,
			     struct api_response *a)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	uint64_t micros;

	if (a->owned != NULL && a->body == a->owned) {
		resp = MHD_create_response_from_buffer(a->body_len, a->owned, MHD_RESPMEM_MUST_FREE);
		if (resp != NULL) {
			a->owned = NULL; /* MHD's now */
		}
	} else {
		resp = MHD_create_response_from_buffer(a->body_len, (void *)a->body,
						       MHD_RESPMEM_MUST_COPY);
	}
	if (resp == NULL) {
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (a->allow != NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, a->allow);
	}
	if (a->close || atomic_load(&r->server->draining)) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	if (a->etag[0] != '\0') {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
	}
	ret = MHD_queue_response(conn, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	micros = (now_ns() - r->start_ns) / 1000u;
	metrics_request(r->server->metrics, a->route, (unsigned)a->status, micros);
	log_access(r->server->log, method, r->uri, r->uri_len, (unsigned)a->status, a->body_len,
		   micros);
	return ret;
}

/* /metrics is the server's own route: only it knows the counters. */
static bool is_metrics(const struct request *r)
{
	return r->uri_len >= 8 && memcmp(r->uri, "/metrics", 8) == 0 &&
	       (r->uri_len == 8 || r->uri[8] == '?');
}

/* The metrics label of a request the api did not answer. */
static int route_of(const struct request *r)
{
	return is_metrics(r) ? METRICS_ROUTE_METRICS : api_route_of(r->uri, r->uri_len);
}

/* A request refused before the api saw it: a limit (413, 431) or HTTP
 * framing the server will not guess at (400, 417, 501). Written by the same
 * problem module as every other error. Framing errors close the
 * connection: where the body ends is unknown. */
static enum MHD_Result refuse(struct MHD_Connection *conn, struct request *r, const char *method,
			      enum problem_kind kind, const char *detail)
{
	struct api_response a = {0};
	struct problem p;
	struct jsonw w;
	enum MHD_Result ret;

	problem_set(&p, kind, NULL, NULL, "%s", detail);
	jsonw_init(&w, 256);
	problem_write(&w, &p);
	a.owned = jsonw_take(&w, &a.body_len);
	if (a.owned == NULL) {
		return MHD_NO;
	}
	a.body = a.owned;
	a.status = problem_status(kind);
	a.content_type = "application/problem+json";
	a.close = kind != PROBLEM_PAYLOAD_TOO_LARGE && kind != PROBLEM_HEADER_TOO_LARGE;
	a.route = route_of(r);
	/* the only route the server answers itself is /metrics */
	a.allow = kind == PROBLEM_METHOD_NOT_ALLOWED ? "GET, HEAD" : NULL;
	r->answered = true;
	ret = queue(conn, r, method, &a);
	free(a.owned); /* NULL unless queue failed to hand it over */
	return ret;
}

static enum MHD_Result over_limit(struct MHD_Connection *conn, struct request *r,
				  const char *method, enum problem_kind kind)
{
	char detail[96];

	if (kind == PROBLEM_PAYLOAD_TOO_LARGE) {
		snprintf(detail, sizeof(detail), "the body is over %zu bytes", r->server->cfg->max_body);
	} else {
		snprintf(detail, sizeof(detail), "the request line and headers are over %zu bytes",
			 r->server->cfg->max_header);
	}
	return refuse(conn, r, method, kind, detail);
}

/* What the headers say about size and framing, gathered in one pass. */
struct framing {
	size_t bytes; /* request line and headers, as sent */
	unsigned hosts, lengths, encodings, expects;
	const char *encoding, *expect;
};

static enum MHD_Result inspect_header(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	struct framing *f = cls;

	(void)kind;
	f->bytes += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " and CRLF */
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
		f->hosts++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->lengths++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->encodings++;
		f->encoding = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_EXPECT) == 0) {
		f->expects++;
		f->expect = value;
	}
	return MHD_YES;
}

/* The request line and headers within --max-header; and RFC 9112 where
 * libmicrohttpd 0.9.75 is lenient and leniency is how requests get
 * smuggled past a proxy: one Host (required in HTTP/1.1),
 * at most one Content-Length, never both Content-Length and
 * Transfer-Encoding, no transfer coding but chunked, and no expectation
 * but 100-continue. Returns true when the request may go on; otherwise a
 * refusal is queued and *ret is what to return to MHD. */
static bool framing_ok(struct MHD_Connection *conn, struct request *r, const char *method,
		       const char *version, enum MHD_Result *ret)
{
	struct framing f = {r->uri_len + strlen(method) + 12, 0, 0, 0, 0, NULL, NULL};
	const char *status_detail = NULL;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, inspect_header, &f);
	/* libmicrohttpd's own limit is a backstop set above this one, so the
	 * usual over-size request gets a problem+json 431 from us */
	if (f.bytes > r->server->cfg->max_header) {
		*ret = over_limit(conn, r, method, PROBLEM_HEADER_TOO_LARGE);
		return false;
	}
	if (f.hosts > 1 || (f.hosts == 0 && strcmp(version, MHD_HTTP_VERSION_1_1) == 0)) {
		status_detail = "an HTTP/1.1 request needs exactly one Host header";
	} else if (f.lengths > 1) {
		status_detail = "more than one Content-Length header";
	} else if (f.lengths == 1 && f.encodings > 0) {
		status_detail = "both Content-Length and Transfer-Encoding";
	} else if (f.encodings > 1) {
		status_detail = "more than one Transfer-Encoding header";
	}
	if (status_detail != NULL) {
		*ret = refuse(conn, r, method, PROBLEM_BAD_REQUEST, status_detail);
		return false;
	}
	if (f.encodings == 1 && strcasecmp(f.encoding, "chunked") != 0) {
		*ret = refuse(conn, r, method, PROBLEM_NOT_IMPLEMENTED,
			      "the only transfer coding accepted is chunked");
		return false;
	}
	if (f.expects > 1 || (f.expects == 1 && strcasecmp(f.expect, "100-continue") != 0)) {
		*ret = refuse(conn, r, method, PROBLEM_EXPECTATION_FAILED,
			      "the only expectation met is 100-continue");
		return false;
	}
	return true;
}

static void on_decision(void *cls, const char *target, enum splitk_kind kind)
{
	metrics_decision(cls, target, kind);
}

/* GET /metrics. */
static enum MHD_Result serve_metrics(struct MHD_Connection *conn, struct request *r,
				     const char *method)
{
	struct server *s = r->server;
	struct api_response a = {0};
	struct holder_ref *ref;
	struct metrics_info info = {SPLITKD_VERSION, SPLITKD_BUILD, NULL,
				    atomic_load(&s->connections)};
	enum MHD_Result ret;
	char *text;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		return refuse(conn, r, method, PROBLEM_METHOD_NOT_ALLOWED, "/metrics takes GET, HEAD");
	}
	info.digest = holder_acquire(s->holder, &ref)->digest;
	text = metrics_render(s->metrics, &info, &a.body_len);
	holder_release(s->holder, ref);
	if (text == NULL) {
		return MHD_NO;
	}
	a.status = 200;
	a.content_type = "text/plain; version=0.0.4; charset=utf-8";
	a.body = text;
	a.owned = text;
	a.route = METRICS_ROUTE_METRICS;
	ret = queue(conn, r, method, &a);
	free(a.owned); /* NULL unless queue failed to hand it over */
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct server *s = cls;
	struct request *r = *req_cls;
	struct api_context ctx;
	struct api_request req;
	struct api_response resp;
	struct holder_ref *ref;
	enum MHD_Result ret;

	(void)url;
	if (r == NULL) {
		return MHD_NO; /* out of memory in on_uri: drop the connection */
	}
	if (!r->headers_seen) {
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		enum MHD_Result refused;

		r->headers_seen = true;
		if (!framing_ok(conn, r, method, version, &refused)) {
			return refused;
		}
		/* refuse a declared over-size body before reading any of it */
		if (cl != NULL) {
			unsigned long long declared = strtoull(cl, NULL, 10);

			if (declared > s->cfg->max_body) {
				return over_limit(conn, r, method, PROBLEM_PAYLOAD_TOO_LARGE);
			}
			r->declared_len = (size_t)declared;
		}
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (r->too_large) {
			/* MHD cannot answer in the middle of a body: read on and
			 * answer 413 at its end, but only so far, then hang up */
			r->discarded += n;
			return r->discarded > 16 * s->cfg->max_body ? MHD_NO : MHD_YES;
		}
		if (n > s->cfg->max_body - r->body_len) {
			r->too_large = true; /* a body without Content-Length that grew too big */
			r->discarded = n;
			return MHD_YES;
		}
		if (r->body_len + n > r->body_cap) {
			/* Content-Length, when sent and within the limit, sizes the
			 * buffer once; otherwise it doubles from 4 KiB */
			size_t cap = r->body_cap ? r->body_cap
						 : (r->declared_len > 0 ? r->declared_len : 4096);
			char *grown;

			while (cap < r->body_len + n) {
				cap *= 2;
			}
			grown = realloc(r->body, cap);
			if (grown == NULL) {
				return MHD_NO;
			}
			r->body = grown;
			r->body_cap = cap;
		}
		memcpy(r->body + r->body_len, upload_data, n);
		r->body_len += n;
		return MHD_YES;
	}
	if (r->answered) {
		return MHD_YES;
	}
	if (r->too_large) {
		return over_limit(conn, r, method, PROBLEM_PAYLOAD_TOO_LARGE);
	}

	if (is_metrics(r)) {
		r->answered = true;
		return serve_metrics(conn, r, method);
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.catalog = holder_acquire(s->holder, &ref);
	ctx.on_decision = on_decision;
	ctx.on_decision_cls = s->metrics;
	ctx.draining = atomic_load(&s->draining);
	ctx.version = SPLITKD_VERSION;
	ctx.build = SPLITKD_BUILD;
	req.method = method;
	req.uri = r->uri;
	req.uri_len = r->uri_len;
	req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);
	req.if_none_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_IF_NONE_MATCH);
	req.body = r->body ? r->body : "";
	req.body_len = r->body_len;
	api_handle(&ctx, &req, &resp);
	holder_release(s->holder, ref);
	r->answered = true;
	ret = queue(conn, r, method, &resp);
	api_response_cleanup(&resp);
	return ret;
}

/* Over --max-connections, a new connection is closed at once: there is no
 * request yet to answer, so no status can be sent. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct server *s = cls;

	(void)addr;
	(void)len;
	/* Counted here, at admission, not when MHD reports the connection
	 * started: both worker threads may admit at once, and a count taken
	 * later let a burst of eight through a limit of four. (Should MHD
	 * fail to set up an admitted connection, out of memory, the count
	 * stays one high: the limit errs on the strict side.) */
	if (atomic_fetch_add(&s->connections, 1) >= s->cfg->max_connections) {
		atomic_fetch_sub(&s->connections, 1);
		return MHD_NO;
	}
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;

	(void)conn;
	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		atomic_fetch_sub(&s->connections, 1);
	}
}

static int resolve(const struct server_config *cfg, struct sockaddr_storage *addr,
		   socklen_t *len, char *err, size_t cap)
{
	struct addrinfo hints, *res = NULL;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", cfg->port);
	rc = getaddrinfo(cfg->host, port, &hints, &res);
	if (rc != 0 || res == NULL) {
		snprintf(err, cap, "cannot resolve listen address %s: %s", cfg->host, gai_strerror(rc));
		return -1;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, char *err, size_t err_cap)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const union MHD_DaemonInfo *info;
	/* poll(), not MHD_USE_AUTO's epoll: with libmicrohttpd 0.9.75 (Debian
	 * 12) epoll left a connection of a 256-client burst unanswered on one
	 * worker thread and throughput fell from ~100k to ~1k requests/s;
	 * poll measured the same speed without the stall (see the test
	 * limits::a_burst_of_connections_is_all_answered). */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC;

	memset(s, 0, sizeof(*s));
	s->quiesced_fd = -1;
	s->cfg = cfg;
	s->holder = holder;
	s->log = log;
	s->metrics = metrics;
	atomic_init(&s->draining, false);
	atomic_init(&s->in_flight, 0);
	atomic_init(&s->connections, 0);
	if (resolve(cfg, &addr, &addr_len, err, err_cap) != 0) {
		return -1;
	}
	if (addr.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
	}
	s->daemon = MHD_start_daemon(
		flags, (uint16_t)cfg->port, on_accept, s, on_request, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->threads,
		/* on_accept enforces the limit; MHD's own, per worker thread,
		 * would leave connections waiting unseen in the backlog */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)(cfg->max_connections + 64),
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->per_client_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout,
		/* The pool holds the request line, the headers and the read
		 * buffer. A little over --max-header, so on_request sees (and
		 * answers) a request just over the limit before libmicrohttpd
		 * must refuse it; no more, because MHD zeroes the whole pool after
		 * every request (a 48 KiB pool was 15% of the time under load,
		 * 16 KiB still 40% of the instructions). */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(cfg->max_header + 2048),
		MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
		MHD_OPTION_END);
	if (s->daemon == NULL) {
		snprintf(err, err_cap, "cannot listen on %s:%u (in use, or not an address of this host?)",
			 cfg->host, cfg->port);
		return -1;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info != NULL ? info->port : cfg->port;
	return 0;
}

unsigned server_drain(struct server *s)
{
	uint64_t now = now_ns(), idle_since = 0;
	uint64_t deadline = now + (uint64_t)s->cfg->drain_timeout * 1000000000u;
	struct timespec tick = {0, 10 * 1000 * 1000};
	unsigned left;

	atomic_store(&s->draining, true);
	/* MHD returns the listen socket for us to close after the daemon stops.
	 * Until then, shut it down: on Linux that takes it out of LISTEN, so a
	 * new client is refused at once (and tries another replica) instead of
	 * waiting in a backlog nobody accepts from. */
	s->quiesced_fd = (int)MHD_quiesce_daemon(s->daemon);
	if (s->quiesced_fd >= 0) {
		shutdown(s->quiesced_fd, SHUT_RDWR);
	}
	while (now < deadline) {
		left = atomic_load(&s->in_flight);
		if (left == 0 && atomic_load(&s->connections) == 0) {
			break;
		}
		/* A busy keep-alive client gets "Connection: close" on its next
		 * answer and leaves; an idle one is closed once all is quiet. */
		if (left > 0) {
			idle_since = 0;
		} else if (idle_since == 0) {
			idle_since = now;
		} else if (now - idle_since >= 500u * 1000 * 1000) {
			break;
		}
		nanosleep(&tick, NULL);
		now = now_ns();
	}
	return atomic_load(&s->in_flight);
}

void server_stop(struct server *s)
{
	if (s->daemon != NULL) {
		MHD_stop_daemon(s->daemon);
		s->daemon = NULL;
	}
	if (s->quiesced_fd >= 0) {
		close(s->quiesced_fd);
		s->quiesced_fd = -1;
	}
}
