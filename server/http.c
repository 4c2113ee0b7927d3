/* SPDX-License-Identifier: AGPL-3.0-only */
#include "http.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h> /* TCP_NODELAY */
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

/* Room kept in a connection's memory for the answer's status line and
 * headers (ours and libmicrohttpd's: the largest set is about 550 bytes). */
#define ANSWER_RESERVE 1024u
/* What libmicrohttpd 0.9.75 spends per header field, query parameter and
 * cookie in the same memory: a 56-byte record, 16-byte aligned. */
#define FIELD_RECORD 64u
/* The memory a connection has beyond --max-header. */
#define POOL_EXTRA 2048u

/* One request: reset when its request line arrives. */
struct request {
	bool in_request;   /* the request line arrived and the request is not over */
	bool headers_seen; /* on_request has seen the header block */
	bool answered;     /* an answer is queued or written */
	bool too_large;    /* the body passed --max-body; the rest is discarded */
	bool over_budget;  /* the body budget was full; the rest is discarded */
	bool keep_body;    /* a POST: the body is buffered for the api */
	bool draining;     /* the server was draining when the headers came: the
			    * answer says so (/readyz) and closes, both or neither */
	size_t discarded;  /* bytes of a refused body read and dropped */
	uint64_t start_ns;
	const char *uri;
	size_t uri_len;
	char *uri_heap; /* when the target is longer than uri_inline */
	const char *content_type, *if_none_match, *accept; /* MHD's, for the request */
	struct body body;
};

/* One connection, from libmicrohttpd's "started" notice to its "closed". */
struct session {
	struct tls_conn tls; /* first: tls.c finds it from the socket context */
	struct server *server;
	struct conntab_conn *conn;
	int fd;
	struct request req;
	char uri_inline[256];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The connection table's clock: coarse (a few ms), which deadlines in
 * seconds can afford, and cheaper than a precise read on every phase
 * change. The listener ticks on the same clock. */
static void mark(struct session *ss, enum conntab_phase phase)
{
	if (ss->conn != NULL) {
		conntab_mark(ss->conn, phase, listener_now_ns());
	}
}

/* Ends the current request: its counters, its body, its target. */
static void finish_request(struct session *ss)
{
	struct request *r = &ss->req;

	if (!r->in_request) {
		return;
	}
	atomic_fetch_sub(&ss->server->in_flight, 1);
	body_release(&r->body, &ss->server->budget);
	free(r->uri_heap);
	memset(r, 0, sizeof(*r));
	if (ss->conn != NULL) {
		atomic_fetch_add_explicit(&ss->conn->requests, 1, memory_order_relaxed);
	}
	mark(ss, CONNTAB_WAITING);
}

static struct session *session_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info != NULL ? info->socket_context : NULL;
}

/* MHD hands over the request target here, before it decodes anything: the
 * api layer wants the bytes as sent. The return value becomes *req_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct session *ss = session_of(conn);
	struct request *r;
	size_t len;

	(void)cls;
	if (ss == NULL) {
		return NULL;
	}
	finish_request(ss); /* a request MHD dropped without a word */
	r = &ss->req;
	/* RFC 9112 3.2.2: a server must accept the absolute form
	 * (GET http://host/path); the route is the path */
	if (strncasecmp(uri, "http://", 7) == 0 || strncasecmp(uri, "https://", 8) == 0) {
		const char *path = strchr(strstr(uri, "//") + 2, '/');

		uri = path != NULL ? path : "/";
	}
	len = strlen(uri);
	if (len < sizeof(ss->uri_inline)) {
		memcpy(ss->uri_inline, uri, len + 1);
		r->uri = ss->uri_inline;
	} else {
		r->uri_heap = strdup(uri);
		if (r->uri_heap == NULL) {
			return NULL;
		}
		r->uri = r->uri_heap;
	}
	r->uri_len = len;
	r->in_request = true;
	r->start_ns = now_ns();
	atomic_fetch_add(&ss->server->in_flight, 1);
	mark(ss, CONNTAB_HEADERS);
	return ss;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct session *ss = *req_cls;

	(void)cls;
	if (ss == NULL) {
		return;
	}
	*req_cls = NULL;
	/* An error end with no answer queued, ours or MHD's own (it reports
	 * "with error" after sending its own 431 too): MHD gave up on the
	 * request, and session_end answers it. */
	if (why == MHD_REQUEST_TERMINATED_WITH_ERROR && !ss->req.answered &&
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS) == NULL) {
		return;
	}
	finish_request(ss);
}

/* Adds the response headers every answer carries. */
static void add_headers(struct MHD_Response *resp, struct session *ss, const struct api_response *a)
{
	if (a->status != 304) {
		/* RFC 9110 15.4.5: a 304 has no content, so no content type */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (a->allow != NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, a->allow);
	}
	if (a->close || ss->req.draining) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	if (a->etag[0] != '\0') {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
	}
	for (size_t i = 0; i < a->num_headers; i++) {
		MHD_add_response_header(resp, a->headers[i].name, a->headers[i].value);
	}
}

static void account(struct session *ss, const char *method, int route, unsigned status,
		    size_t bytes)
{
	uint64_t micros = (now_ns() - ss->req.start_ns) / 1000u;

	metrics_request(ss->server->metrics, route, status, micros);
	log_access(ss->server->log, method, ss->req.uri, ss->req.uri_len, status, bytes, micros);
}

/* Queues an answer. A body the response owns is handed to MHD (which
 * free()s it), a static one is lent; neither is copied. For a 304 MHD
 * sends no body but announces the 200's length, which the api kept. */
static enum MHD_Result queue(struct MHD_Connection *conn, struct session *ss, const char *method,
			     struct api_response *a)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (a->owned != NULL && a->body == a->owned) {
		resp = MHD_create_response_from_buffer(a->body_len, a->owned, MHD_RESPMEM_MUST_FREE);
		if (resp != NULL) {
			a->owned = NULL; /* MHD's now */
		}
	} else {
		resp = MHD_create_response_from_buffer(a->body_len, (void *)a->body,
						       a->owned == NULL ? MHD_RESPMEM_PERSISTENT
									: MHD_RESPMEM_MUST_COPY);
	}
	if (resp == NULL) {
		return MHD_NO;
	}
	add_headers(resp, ss, a);
	ret = MHD_queue_response(conn, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	ss->req.answered = true;
	mark(ss, CONNTAB_REPLY);
	account(ss, method, a->route, (unsigned)a->status, a->body_len);
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

/* A problem+json body, in a buffer the caller frees; NULL when out of memory. */
static char *problem_body(enum problem_kind kind, const char *detail, size_t *len)
{
	struct problem p;
	struct jsonw w;

	problem_set(&p, kind, NULL, NULL, "%s", detail);
	jsonw_init(&w, 256);
	problem_write(&w, &p);
	return jsonw_take(&w, len);
}

/* A request refused before the api saw it: a limit (413, 431, 503) or HTTP
 * framing the server will not guess at (400, 417, 501). Written by the same
 * problem module as every other error. Framing errors close the
 * connection: where the body ends is unknown. */
static enum MHD_Result refuse(struct MHD_Connection *conn, struct session *ss, const char *method,
			      enum problem_kind kind, const char *detail)
{
	struct api_response a = {0};
	enum MHD_Result ret;

	a.owned = problem_body(kind, detail, &a.body_len);
	if (a.owned == NULL) {
		return MHD_NO;
	}
	a.body = a.owned;
	a.status = problem_status(kind);
	a.content_type = "application/problem+json";
	a.close = kind != PROBLEM_PAYLOAD_TOO_LARGE && kind != PROBLEM_HEADER_TOO_LARGE;
	a.route = route_of(&ss->req);
	/* the only route the server answers itself is /metrics */
	a.allow = kind == PROBLEM_METHOD_NOT_ALLOWED ? "GET, HEAD" : NULL;
	if (kind == PROBLEM_OVERLOADED) {
		api_response_add_header(&a, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	}
	ret = queue(conn, ss, method, &a);
	free(a.owned); /* NULL unless queue failed to hand it over */
	return ret;
}

/* The head and body of a direct answer in one TLS write. Returns 0, or -1
 * when it could not go (the connection closes without it). */
static int tls_send_answer(struct session *ss, const char *head, size_t head_len,
			   const char *body, size_t body_len, const char *method)
{
	size_t n = body != NULL && strcmp(method, "HEAD") != 0 ? body_len : 0;
	char *all = malloc(head_len + n);
	int ret = -1;

	if (all != NULL) {
		memcpy(all, head, head_len);
		if (n > 0) {
			memcpy(all + head_len, body, n);
		}
		ret = tls_send(&ss->tls, all, head_len + n);
	}
	free(all);
	return ret;
}

/* Writes a whole problem+json answer to the socket, for the requests
 * libmicrohttpd has no memory left to answer. The connection closes after
 * it (the caller returns MHD_NO, or this is the close). Nothing of an
 * answer was sent before: MHD writes a response only once it has built
 * all of its headers. */
static void write_direct(struct session *ss, const char *method, enum problem_kind kind,
			 const char *detail)
{
	char head[512], date[64];
	size_t len = 0, n;
	char *body = problem_body(kind, detail, &len);
	unsigned status = (unsigned)problem_status(kind);
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	n = (size_t)snprintf(head, sizeof(head),
			     "HTTP/1.1 %u %s\r\nDate: %s\r\nContent-Type: application/problem+json\r\n"
			     "Cache-Control: no-cache\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n",
			     status, MHD_get_reason_phrase_for(status), date, len);
	ss->req.answered = true;
	if (ss->tls.tls != NULL) {
		/* through the TLS session, or not at all: never plaintext */
		if (n >= sizeof(head) || tls_send_answer(ss, head, n, body, len, method) != 0) {
			len = 0; /* closed without an answer */
		}
	} else if (n < sizeof(head) && send(ss->fd, head, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n &&
	    body != NULL && strcmp(method, "HEAD") != 0) {
		(void)!send(ss->fd, body, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	free(body);
	account(ss, method, route_of(&ss->req), status, len);
}

static enum MHD_Result over_limit(struct MHD_Connection *conn, struct session *ss,
				  const char *method, enum problem_kind kind)
{
	const struct server_config *cfg = ss->server->cfg;
	char detail[160];

	if (kind == PROBLEM_PAYLOAD_TOO_LARGE) {
		snprintf(detail, sizeof(detail), "the body is over %zu bytes", cfg->max_body);
	} else if (kind == PROBLEM_OVERLOADED) {
		snprintf(detail, sizeof(detail),
			 "request bodies already hold the %zu bytes this server keeps for them; retry",
			 cfg->body_budget);
	} else {
		snprintf(detail, sizeof(detail), "the request line and headers are over %zu bytes",
			 cfg->max_header);
	}
	return refuse(conn, ss, method, kind, detail);
}

/* What the headers say about size and framing, and the few values the
 * answer needs, gathered in one pass (a lookup each cost as much). */
struct framing {
	size_t bytes;  /* request line and headers, as sent */
	size_t fields; /* header fields, query parameters and cookies: MHD keeps a record of each */
	unsigned hosts, lengths, encodings, expects;
	const char *length, *encoding, *expect;
	const char *content_type, *if_none_match, *accept;
};

/* Cookies: MHD copies the header and keeps a record per cookie. */
static void count_cookies(struct framing *f, const char *value, size_t value_len)
{
	f->bytes += value_len + 1;
	for (const char *c = value; c != NULL && *c != '\0'; c++) {
		f->fields += *c == ';';
	}
	f->fields++;
}

/* Notes one header. A header counted twice is a framing problem; one that
 * is given twice otherwise keeps its first value, as MHD's lookup did. */
static void note_header(struct framing *f, const char *key, const char *value, size_t value_len)
{
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
		f->hosts++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->lengths++;
		f->length = f->length != NULL ? f->length : value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_TYPE) == 0) {
		f->content_type = f->content_type != NULL ? f->content_type : value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->encodings++;
		f->encoding = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_EXPECT) == 0) {
		f->expects++;
		f->expect = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT) == 0) {
		f->accept = f->accept != NULL ? f->accept : value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_IF_NONE_MATCH) == 0) {
		f->if_none_match = f->if_none_match != NULL ? f->if_none_match : value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_COOKIE) == 0) {
		count_cookies(f, value, value_len);
	}
}

static enum MHD_Result inspect_header(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	struct framing *f = cls;
	size_t value_len = value ? strlen(value) : 0;

	(void)kind;
	f->bytes += strlen(key) + value_len + 4; /* ": " and CRLF */
	f->fields++;
	note_header(f, key, value, value_len);
	return MHD_YES;
}

/* The framing problem with a request, or NULL: RFC 9112 where
 * libmicrohttpd 0.9.75 is lenient and leniency is how requests get
 * smuggled past a proxy. One Host (required in HTTP/1.1), at most one
 * Content-Length, never both Content-Length and Transfer-Encoding. */
static const char *framing_problem(const struct framing *f, const char *version)
{
	if (f->hosts > 1 || (f->hosts == 0 && strcmp(version, MHD_HTTP_VERSION_1_1) == 0)) {
		return "an HTTP/1.1 request needs exactly one Host header";
	}
	if (f->lengths > 1) {
		return "more than one Content-Length header";
	}
	if (f->lengths == 1 && f->encodings > 0) {
		return "both Content-Length and Transfer-Encoding";
	}
	if (f->encodings > 1) {
		return "more than one Transfer-Encoding header";
	}
	return NULL;
}

/* Query parameters in the target: MHD keeps a record of each. */
static size_t count_params(const struct request *r)
{
	const char *q = memchr(r->uri, '?', r->uri_len);
	size_t n = 0;

	for (; q != NULL && q < r->uri + r->uri_len; q++) {
		n += *q == '?' || *q == '&';
	}
	return n;
}

/* The request line and headers within --max-header, with room left in the
 * connection's memory for the answer; and framing splitkd will answer.
 * Returns true when the request may go on; otherwise a refusal is queued
 * (or written) and *ret is what to return to MHD. */
static bool framing_ok(struct MHD_Connection *conn, struct session *ss, const char *method,
		       const char *version, struct framing *out, enum MHD_Result *ret)
{
	const struct server_config *cfg = ss->server->cfg;
	size_t pool = cfg->max_header + POOL_EXTRA;
	/* a target has at most uri_len / 2 + 1 parameters: count them only
	 * when that bound would not fit */
	struct framing f = {.bytes = ss->req.uri_len + strlen(method) + 12,
			    .fields = ss->req.uri_len / 2 + 1};
	const char *problem;

	MHD_get_connection_values(conn, MHD_HEADER_KIND, inspect_header, &f);
	if (f.bytes + FIELD_RECORD * (f.fields + 1) + ANSWER_RESERVE > pool) {
		f.fields -= ss->req.uri_len / 2 + 1 - count_params(&ss->req);
	}
	if (f.bytes + FIELD_RECORD * (f.fields + 1) + ANSWER_RESERVE > pool) {
		/* no room for MHD to build an answer: write it ourselves */
		write_direct(ss, method, PROBLEM_HEADER_TOO_LARGE,
			     "the request line and headers, with 64 bytes for each header field, "
			     "query parameter and cookie, do not fit this connection's memory");
		*ret = MHD_NO;
		return false;
	}
	if (f.bytes > cfg->max_header) {
		*ret = over_limit(conn, ss, method, PROBLEM_HEADER_TOO_LARGE);
		return false;
	}
	problem = framing_problem(&f, version);
	if (problem != NULL) {
		*ret = refuse(conn, ss, method, PROBLEM_BAD_REQUEST, problem);
		return false;
	}
	if (f.encodings == 1 && strcasecmp(f.encoding, "chunked") != 0) {
		*ret = refuse(conn, ss, method, PROBLEM_NOT_IMPLEMENTED,
			      "the only transfer coding accepted is chunked");
		return false;
	}
	if (f.expects > 1 || (f.expects == 1 && strcasecmp(f.expect, "100-continue") != 0)) {
		*ret = refuse(conn, ss, method, PROBLEM_EXPECTATION_FAILED,
			      "the only expectation met is 100-continue");
		return false;
	}
	*out = f;
	return true;
}

/* The header block is complete: framing, limits, and the body's budget.
 * Returns true when the request goes on to its body and answer. */
static bool on_headers(struct MHD_Connection *conn, struct session *ss, const char *method,
		       const char *version, enum MHD_Result *ret)
{
	const struct server_config *cfg = ss->server->cfg;
	struct request *r = &ss->req;
	struct framing f;
	const char *cl;

	r->headers_seen = true;
	r->draining = atomic_load(&ss->server->draining);
	if (!framing_ok(conn, ss, method, version, &f, ret)) {
		return false;
	}
	cl = f.length;
	r->content_type = f.content_type;
	r->if_none_match = f.if_none_match;
	r->accept = f.accept;
	r->keep_body = strcmp(method, "POST") == 0;
	if (cl != NULL) {
		unsigned long long declared = strtoull(cl, NULL, 10);

		/* refuse a declared over-size body before reading any of it */
		if (declared > cfg->max_body) {
			*ret = over_limit(conn, ss, method, PROBLEM_PAYLOAD_TOO_LARGE);
			return false;
		}
		if (r->keep_body && body_expect(&r->body, &ss->server->budget, (size_t)declared) !=
					    BODY_OK) {
			*ret = over_limit(conn, ss, method, PROBLEM_OVERLOADED);
			return false;
		}
	}
	if ((cl != NULL && strcmp(cl, "0") != 0) || f.encoding != NULL) {
		mark(ss, CONNTAB_BODY); /* a GET goes straight on to its answer */
	}
	*ret = MHD_YES;
	return true;
}

/* A piece of the body. Kept for a POST within the limits; otherwise read
 * and dropped (MHD cannot answer in the middle of a body: the refusal comes
 * at its end), but only so far, then the connection is cut. */
static enum MHD_Result on_upload(struct session *ss, const char *data, size_t n)
{
	const struct server_config *cfg = ss->server->cfg;
	struct request *r = &ss->req;

	if (ss->conn != NULL) {
		atomic_fetch_add_explicit(&ss->conn->body_bytes, n, memory_order_relaxed);
	}
	if (!r->too_large && !r->over_budget && n > cfg->max_body - r->body.len - r->discarded) {
		r->too_large = true; /* a body without Content-Length that grew too big */
	}
	if (r->too_large || r->over_budget || !r->keep_body) {
		r->discarded += n;
		return r->discarded > 16 * cfg->max_body ? MHD_NO : MHD_YES;
	}
	switch (body_append(&r->body, &ss->server->budget, data, n)) {
	case BODY_OK:
		return MHD_YES;
	case BODY_OVER_BUDGET:
		r->over_budget = true;
		r->discarded = n;
		return MHD_YES;
	case BODY_NO_MEMORY:
		break;
	}
	return MHD_NO;
}

/* The catalog for a request: through its worker thread's reader (no lock
 * unless a reload came), or referenced for this request alone when the
 * connection is not in the table (*ref set: release it). */
static const struct catalog *catalog_for(struct session *ss, struct holder_ref **ref)
{
	struct server *s = ss->server;

	*ref = NULL;
	if (ss->conn != NULL) {
		return holder_read(s->holder, &s->readers[ss->conn->engine]);
	}
	return holder_acquire(s->holder, ref);
}

static void catalog_done(struct session *ss, struct holder_ref *ref)
{
	if (ref != NULL) {
		holder_release(ss->server->holder, ref);
	}
}

static void on_decision(void *cls, const char *target, enum splitk_kind kind)
{
	metrics_decision(cls, target, kind);
}

static void fill_info(struct server *s, struct metrics_info *info)
{
	memset(info, 0, sizeof(*info));
	info->version = SPLITKD_VERSION;
	info->build = SPLITKD_BUILD;
	info->connections = conntab_count(&s->table);
	info->max_connections = s->cfg->max_connections;
	info->ready = !atomic_load(&s->draining);
	for (int i = 0; i < CONNTAB_REASON_COUNT; i++) {
		info->closed[i] = atomic_load_explicit(&s->table.closed[i], memory_order_relaxed);
	}
	info->shed = atomic_load_explicit(&s->budget.shed, memory_order_relaxed);
	info->body_buffered = atomic_load_explicit(&s->budget.used, memory_order_relaxed);
	info->body_budget = s->budget.cap;
}

/* GET /metrics. */
static enum MHD_Result serve_metrics(struct MHD_Connection *conn, struct session *ss,
				     const char *method)
{
	struct server *s = ss->server;
	struct api_response a = {0};
	struct holder_ref *ref;
	struct metrics_info info;
	enum MHD_Result ret;
	char tls_text[2048];
	char *text;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		return refuse(conn, ss, method, PROBLEM_METHOD_NOT_ALLOWED, "/metrics takes GET, HEAD");
	}
	if (ss->req.uri_len > s->limits.max_uri) {
		/* the same limit the api holds its routes to */
		return refuse(conn, ss, method, PROBLEM_URI_TOO_LONG, "the request target is too long");
	}
	fill_info(s, &info);
	if (s->tls != NULL) {
		info.extra_len = tls_metrics(s->tls, tls_text, sizeof(tls_text));
		info.extra = tls_text;
	}
	info.digest = catalog_for(ss, &ref)->digest;
	text = metrics_render(s->metrics, &info, &a.body_len);
	catalog_done(ss, ref);
	if (text == NULL) {
		return MHD_NO;
	}
	a.status = 200;
	a.content_type = "text/plain; version=0.0.4; charset=utf-8";
	a.body = text;
	a.owned = text;
	a.route = METRICS_ROUTE_METRICS;
	ret = queue(conn, ss, method, &a);
	free(a.owned); /* NULL unless queue failed to hand it over */
	return ret;
}

/* The whole request is in: the api answers it. */
static enum MHD_Result answer(struct MHD_Connection *conn, struct session *ss, const char *method)
{
	struct server *s = ss->server;
	struct request *r = &ss->req;
	struct api_context ctx;
	struct api_request req;
	struct api_response resp;
	struct holder_ref *ref;
	enum MHD_Result ret;

	if (r->too_large) {
		return over_limit(conn, ss, method, PROBLEM_PAYLOAD_TOO_LARGE);
	}
	if (r->over_budget) {
		return over_limit(conn, ss, method, PROBLEM_OVERLOADED);
	}
	if (is_metrics(r)) {
		return serve_metrics(conn, ss, method);
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.catalog = catalog_for(ss, &ref);
	ctx.on_decision = on_decision;
	ctx.on_decision_cls = s->metrics;
	ctx.draining = r->draining;
	ctx.version = SPLITKD_VERSION;
	ctx.build = SPLITKD_BUILD;
	ctx.limits = &s->limits;
	req.method = method;
	req.uri = r->uri;
	req.uri_len = r->uri_len;
	req.content_type = r->content_type;
	req.if_none_match = r->if_none_match;
	req.accept = r->accept;
	req.body = r->body.buf ? r->body.buf : "";
	req.body_len = r->body.len;
	api_handle(&ctx, &req, &resp);
	catalog_done(ss, ref);
	ret = queue(conn, ss, method, &resp);
	api_response_cleanup(&resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct session *ss = *req_cls;
	enum MHD_Result ret = MHD_YES;

	(void)cls;
	(void)url;
	if (ss == NULL) {
		return MHD_NO; /* out of memory in on_uri: drop the connection */
	}
	if (!ss->req.headers_seen) {
		on_headers(conn, ss, method, version, &ret);
		return ret;
	}
	if (*upload_data_size != 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		return ss->req.answered ? MHD_YES : on_upload(ss, upload_data, n);
	}
	if (ss->req.answered) {
		return MHD_YES;
	}
	return answer(conn, ss, method);
}

/* Reads what the client sent and nobody will read, so that closing the
 * socket sends FIN, not RST: a reset can destroy the answer on its way to
 * a client still sending (RFC 9112 9.6). Bounded: a client that keeps
 * sending is cut off. */
static void drain_input(int fd)
{
	char sink[4096];

	for (int i = 0; i < 16; i++) {
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0) {
			return;
		}
	}
}

static void session_start(struct server *s, struct MHD_Connection *conn, void **socket_context)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct session *ss = calloc(1, sizeof(*ss));

	*socket_context = ss;
	if (ss == NULL || info == NULL) {
		free(ss);
		*socket_context = NULL;
		return;
	}
	ss->server = s;
	ss->fd = info->connect_fd;
	ss->conn = conntab_find(&s->table, ss->fd);
	if (s->tls != NULL) {
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		tls_conn_start(&ss->tls, s->tls, info != NULL ? info->tls_session : NULL);
	}
}

static void session_end(struct server *s, struct session *ss)
{
	bool ours = ss->conn != NULL && conntab_closing(&s->table, ss->conn);

	ss->tls.session = NULL; /* libmicrohttpd freed it before telling us */

	if (ss->req.in_request && !ss->req.answered && !ours) {
		/* libmicrohttpd gave up on this request without answering, or
		 * reported nothing at all: the client is still waiting */
		write_direct(ss, "GET", ss->req.uri_len > s->cfg->max_header ? PROBLEM_URI_TOO_LONG
									      : PROBLEM_HEADER_TOO_LARGE,
			     "the request does not fit the memory a connection has");
	}
	finish_request(ss);
	drain_input(ss->fd);
	tls_conn_end(&ss->tls, listener_received_bytes(ss->fd) != 0);
	if (ss->conn != NULL) {
		conntab_release(&s->table, ss->conn);
	}
	free(ss);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		session_start(s, conn, socket_context);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context != NULL) {
		session_end(s, *socket_context);
		*socket_context = NULL;
	}
}

/* The listener admitted a connection: the table chose its daemon. */
static int hand_over(void *cls, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct server *s = cls;
	enum conntab_reason why;
	struct conntab_conn *c = conntab_admit(&s->table, fd, addr, listener_now_ns(), &why);
	int one = 1;

	if (c == NULL) {
		close(fd); /* no request yet, so no status to send */
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (MHD_add_connection(s->daemons[c->engine], fd, addr, len) != MHD_YES) {
		conntab_release(&s->table, c); /* MHD closed the socket */
		return -1;
	}
	return 0;
}

static void tick(void *cls, uint64_t now)
{
	struct server *s = cls;

	conntab_sweep(&s->table, now, listener_received_bytes);
	/* after a burst of large bodies, give the memory back (8 MiB: well
	 * above what a quiet server holds, so this stays rare) */
	body_budget_trim(&s->budget, 8u << 20);
}

static int start_daemons(struct server *s, char *err, size_t err_cap)
{
	const struct server_config *cfg = s->cfg;
	/* poll(), not MHD_USE_AUTO's epoll: with libmicrohttpd 0.9.75 (Debian
	 * 12) epoll left a connection of a 256-client burst unanswered and
	 * throughput fell from ~100k to ~1k requests/s; poll measured the same
	 * speed without the stall (limits::a_burst_of_connections_is_all_answered).
	 * TURBO: MHD does not shut a socket down before it reports the close,
	 * so splitkd can still answer a request MHD gave up on (session_end). */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
			 MHD_USE_TURBO | (s->tls != NULL ? MHD_USE_TLS : 0);
	/* Over TLS the last options are the priorities and the per-handshake
	 * certificate (tls.c); without, the first of them ends the list. */
	enum MHD_OPTION tls_opt = s->tls != NULL ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END;
	const char *priority = s->tls != NULL ? s->tls->priority : NULL;

	s->daemons = calloc(cfg->threads, sizeof(*s->daemons));
	s->readers = calloc(cfg->threads, sizeof(*s->readers));
	if (s->daemons == NULL || s->readers == NULL) {
		snprintf(err, err_cap, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < cfg->threads; i++) {
		s->daemons[i] = MHD_start_daemon(
			flags, 0, NULL, NULL, on_request, s, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
			on_connection, s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->table.cap,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout,
			/* The pool holds the request line, the headers, MHD's records
			 * of them and the answer's headers (framing_ok keeps room for
			 * those). No bigger: MHD zeroes the whole pool after every
			 * request (a 48 KiB pool was 15% of the time under load). */
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(cfg->max_header + POOL_EXTRA),
			tls_opt, priority, MHD_OPTION_HTTPS_CERT_CALLBACK, tls_retrieve, MHD_OPTION_END);
		if (s->daemons[i] == NULL) {
			snprintf(err, err_cap, "cannot start the HTTP engine (libmicrohttpd)");
			return -1;
		}
		s->num_daemons = i + 1;
	}
	return 0;
}

int server_start(struct server *s, const struct server_config *cfg, struct holder *holder,
		 const struct log *log, struct metrics *metrics, struct tls *tls, char *err,
		 size_t err_cap)
{
	struct conntab_limits limits = {
		cfg->max_connections,
		cfg->per_client_connections,
		cfg->threads,
		(uint64_t)cfg->header_timeout * 1000000000u,
		(uint64_t)cfg->body_timeout * 1000000000u,
		cfg->body_min_rate,
		tls != NULL,
	};

	memset(s, 0, sizeof(*s));
	s->listener.fd = -1;
	s->listener.wake[0] = s->listener.wake[1] = -1;
	s->cfg = cfg;
	s->holder = holder;
	s->log = log;
	s->metrics = metrics;
	s->tls = tls;
	atomic_init(&s->draining, false);
	atomic_init(&s->in_flight, 0);
	body_budget_init(&s->budget, cfg->body_budget);
	s->limits = (struct api_limits){cfg->max_body, API_DEFAULT_MAX_URI, API_DEFAULT_MAX_BATCH};
	if (conntab_init(&s->table, &limits) != 0) {
		snprintf(err, err_cap, "out of memory");
		return -1;
	}
	if (listener_open(&s->listener, cfg->host, cfg->port, cfg->reuse_port, err, err_cap) != 0 ||
	    start_daemons(s, err, err_cap) != 0 ||
	    listener_start(&s->listener, hand_over, tick, s, err, err_cap) != 0) {
		return -1;
	}
	s->port = s->listener.port;
	return 0;
}

unsigned server_drain(struct server *s)
{
	uint64_t now = now_ns(), idle_since = 0;
	uint64_t deadline = now + (uint64_t)s->cfg->drain_timeout * 1000000000u;
	struct timespec pause = {0, 10 * 1000 * 1000};
	unsigned left;

	atomic_store(&s->draining, true);
	listener_stop_accepting(&s->listener);
	while (now < deadline) {
		left = atomic_load(&s->in_flight);
		if (left == 0 && conntab_count(&s->table) == 0) {
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
		nanosleep(&pause, NULL);
		now = now_ns();
	}
	conntab_close_idle(&s->table, true);
	return atomic_load(&s->in_flight);
}

void server_stop(struct server *s)
{
	listener_close(&s->listener);
	for (unsigned i = 0; i < s->num_daemons; i++) {
		MHD_stop_daemon(s->daemons[i]);
	}
	/* the daemons' threads are gone: their readers let go */
	for (unsigned i = 0; s->readers != NULL && i < s->cfg->threads; i++) {
		holder_reader_cleanup(s->holder, &s->readers[i]);
	}
	free(s->readers);
	s->readers = NULL;
	free(s->daemons);
	s->daemons = NULL;
	s->num_daemons = 0;
	if (s->table.conns != NULL) {
		conntab_cleanup(&s->table);
	}
}
