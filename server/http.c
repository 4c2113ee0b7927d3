/* SPDX-License-Identifier: AGPL-3.0-only */
#include "http.h"

#include <errno.h>
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
#include "extras.h"
#include "framing.h"
#include "httpd.h"
#include "respcache.h"
#include "response.h"

/* Where a request is, from its request line to its end. */
enum request_state {
	REQ_NONE,     /* no request: between two, or before the first */
	REQ_HEADERS,  /* the request line arrived; the header block is not yet judged */
	REQ_KEEP,     /* the headers passed: a POST's body is buffered for the api */
	REQ_DROP,     /* the headers passed: any body is read and dropped (not a POST) */
	REQ_REFUSE,   /* the body passed a limit: read and dropped, `refusal` answered at its end */
	REQ_PREFLIGHT, /* a CORS preflight: any body dropped, answered by the server (preflight) */
	REQ_ANSWERED, /* an answer is queued or written */
};

/* One request: reset when its request line arrives. */
struct request {
	enum request_state state;
	enum problem_kind refusal; /* REQ_REFUSE: 413 or 503 */
	bool draining; /* the server was draining when the headers came: the
			* answer says so (/readyz) and closes, both or neither */
	size_t discarded; /* bytes of a body read and dropped */
	uint64_t start_ns;
	const char *uri;
	size_t uri_len;
	char *uri_heap; /* when the target is longer than uri_inline */
	const char *content_type, *if_none_match, *accept; /* the engine's, for the request */
	const char *if_match;
	const char *version; /* the engine's, for the request: a stream's framing */
	struct body body;
};

/* One connection, from libmicrohttpd's "started" notice to its "closed". */
struct session {
	struct tls_conn tls; /* first: tls.c finds it from the socket context */
	struct server *server;
	struct conntab_conn *conn;
	struct respcache *cache; /* its engine's kept responses; NULL: none (not in the table) */
	int fd;
	struct request req;
	char uri_inline[256];
	/* --cors-allow-origin and --rate-limit (s->extras, extras.h): the
	 * current request's, set as its headers are judged */
	struct extras ext;
	struct extras_fields *extras; /* &ext.fields when either is on, else NULL */
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

	if (r->state == REQ_NONE) {
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
	finish_request(ss); /* one MHD ended without a word and without a close (answer_on_socket) */
	r = &ss->req;
	/* RFC 9112 3.2.2: a server must accept the absolute form
	 * (GET http://host/path); the route is the path. The usual origin
	 * form starts with '/', so one byte decides before any compare. */
	if ((uri[0] == 'h' || uri[0] == 'H') &&
	    (strncasecmp(uri, "http://", 7) == 0 || strncasecmp(uri, "https://", 8) == 0)) {
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
	r->state = REQ_HEADERS;
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
	 * "with error" after sending its own 431 too): the request stays open
	 * for session_end to answer (answer_on_socket). */
	if (why == MHD_REQUEST_TERMINATED_WITH_ERROR && ss->req.state != REQ_ANSWERED &&
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS) == NULL) {
		return;
	}
	finish_request(ss);
}

static void account(struct session *ss, const char *method, int route, unsigned status,
		    size_t bytes)
{
	uint64_t micros = (now_ns() - ss->req.start_ns) / 1000u;

	metrics_request(ss->server->metrics, route, status, micros);
	log_access(ss->server->log, method, ss->req.uri, ss->req.uri_len, status, bytes, micros);
}

/* The one tail of every queued answer (response.c makes and queues it):
 * the request answered and counted. */
static enum MHD_Result queue(struct MHD_Connection *conn, struct session *ss, const char *method,
			     struct api_response *a, struct MHD_Response *made)
{
	enum MHD_Result ret;

	a->close |= ss->req.draining; /* and /readyz says so */
	if (!response_queue(conn, ss->cache, a, made, ss->extras, &ret)) {
		return MHD_NO;
	}
	ss->req.state = REQ_ANSWERED;
	mark(ss, CONNTAB_REPLY);
	account(ss, method, a->route, (unsigned)a->status, a->body_len);
	return ret;
}

/*
 * Writes a problem answer to the socket itself: the one place splitkd
 * answers what libmicrohttpd 0.9.75 cannot. There are two such requests.
 * (1) One whose request line and headers, with the engine's records of
 * them, leave no room in the connection's memory for the answer's headers
 * (on_headers: framing_fits): MHD would fail to build any answer and
 * close in silence. (2) One MHD gives up on without a word (a header
 * block too large for its memory before on_request ever sees it, a
 * target it cannot hold): on_completed then leaves the request open and
 * session_end answers it here, unless splitkd closed the connection
 * itself. Both work because MHD runs with MHD_USE_TURBO: it does not shut
 * the socket down before it reports the close. Nothing of an answer was
 * sent before (MHD writes a response only once all its headers are
 * built), and the connection closes after this one (the caller returns
 * MHD_NO, or this is the close). The body comes from the api's problem
 * writer, like every other error's; response_on_socket writes it (over
 * TLS through the session, or, once MHD has freed it, not at all).
 */
static void answer_on_socket(struct session *ss, const char *method, enum problem_kind kind,
			     const char *detail)
{
	struct api_response a;
	size_t sent;

	api_problem_answer(&a, kind, detail);
	ss->req.state = REQ_ANSWERED;
	sent = response_on_socket(&ss->tls, ss->fd, method, &a);
	account(ss, method, api_route_of(ss->req.uri, ss->req.uri_len), (unsigned)a.status, sent);
	api_response_cleanup(&a);
}

/* A request header, for extras.c. */
static const char *header_of(void *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* A request refused before the api saw it (response_refusal says how),
 * queued through the engine. */
static enum MHD_Result refuse_after(struct MHD_Connection *conn, struct session *ss,
				    const char *method, enum problem_kind kind, const char *detail,
				    const char *retry_after)
{
	struct api_response a;
	enum MHD_Result ret;

	if (ss->extras != NULL && ss->ext.of != ss->req.start_ns) {
		/* refused before on_headers came to them */
		extras_begin(&ss->ext, ss->server->cfg, header_of, conn, ss->req.start_ns);
	}
	response_refusal(&a, kind, detail, retry_after);
	a.route = api_route_of(ss->req.uri, ss->req.uri_len);
	ret = queue(conn, ss, method, &a, NULL);
	api_response_cleanup(&a); /* nothing unless queue failed to hand it over */
	return ret;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, struct session *ss, const char *method,
			      enum problem_kind kind, const char *detail)
{
	return refuse_after(conn, ss, method, kind, detail, "1");
}

static enum MHD_Result over_limit(struct MHD_Connection *conn, struct session *ss,
				  const char *method, enum problem_kind kind)
{
	char detail[160];

	response_limit_detail(kind, ss->server->cfg, detail, sizeof(detail));
	return refuse(conn, ss, method, kind, detail);
}

static enum MHD_Result tally_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	(void)kind;
	framing_note(cls, key, value);
	return MHD_YES;
}

/* --cors-allow-origin and --rate-limit, once the headers passed
 * (extras.c): a preflight noted (answered once the request is in), or a
 * 429. Returns true when refused, with what to return to MHD in *ret. */
static bool on_extras(struct MHD_Connection *conn, struct session *ss, const char *method,
		      enum MHD_Result *ret)
{
	struct server *s = ss->server;
	char why[160];

	switch (extras_judge(&ss->ext, s->cfg, s->limiting ? &s->limiter : NULL, s->rate_policy,
			     s->unlimited, api_route_of(ss->req.uri, ss->req.uri_len), method,
			     header_of, conn, ss->req.start_ns, why, sizeof(why))) {
	case EXTRAS_PASS:
		return false;
	case EXTRAS_PREFLIGHT:
		ss->req.state = REQ_PREFLIGHT;
		return false;
	case EXTRAS_REFUSED:
		break;
	}
	*ret = refuse_after(conn, ss, method, PROBLEM_TOO_MANY_REQUESTS, why, ss->ext.retry_after);
	return true;
}

/* The header block is complete: size, framing and the body's budget
 * (framing.c judges, this answers). Moves the request on to REQ_KEEP or
 * REQ_DROP, or refuses it; returns what to return to MHD. */
static enum MHD_Result on_headers(struct MHD_Connection *conn, struct session *ss,
				  const char *method, const char *version)
{
	const struct server_config *cfg = ss->server->cfg;
	struct request *r = &ss->req;
	struct framing f;
	const char *detail = NULL;
	enum problem_kind fault = PROBLEM_NONE;
	uint64_t declared = 0;
	enum MHD_Result refused;

	r->draining = atomic_load(&ss->server->draining);
	r->version = version; /* compared only for a stream: a GET pays a store */
	framing_init(&f, method, r->uri_len);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, tally_header, &f);
	switch (framing_judge(&f, r->uri, r->uri_len, cfg->max_header + FRAMING_POOL_EXTRA,
			      cfg->max_header, version, &fault, &detail)) {
	case FRAMING_OK:
		break;
	case FRAMING_NO_ROOM:
		answer_on_socket(ss, method, PROBLEM_HEADER_TOO_LARGE,
				 "the request line and headers, with 64 bytes for each header field, "
				 "query parameter and cookie, do not fit this connection's memory");
		return MHD_NO;
	case FRAMING_TOO_LARGE:
		return over_limit(conn, ss, method, PROBLEM_HEADER_TOO_LARGE);
	case FRAMING_FAULT:
		return refuse(conn, ss, method, fault, detail);
	}
	/* MHD 0.9.75 answers a Content-Length that is not a number itself
	 * (400) before this is called; checked again so that nothing here
	 * rests on that */
	if (f.length != NULL && framing_content_length(f.length, &declared) != 0) {
		return refuse(conn, ss, method, PROBLEM_BAD_REQUEST,
			      "Content-Length is not a decimal number");
	}
	r->content_type = f.content_type;
	r->if_none_match = f.if_none_match;
	r->if_match = f.if_match;
	r->accept = f.accept;
	r->state = api_method_is(method, "POST") ? REQ_KEEP : REQ_DROP;
	if (ss->extras != NULL && on_extras(conn, ss, method, &refused)) {
		return refused;
	}
	/* refuse a declared over-size body before reading any of it */
	if (declared > cfg->max_body) {
		return over_limit(conn, ss, method, PROBLEM_PAYLOAD_TOO_LARGE);
	}
	if (f.length != NULL && r->state == REQ_KEEP &&
	    body_expect(&r->body, &ss->server->budget, (size_t)declared) != BODY_OK) {
		return over_limit(conn, ss, method, PROBLEM_OVERLOADED);
	}
	if (declared > 0 || f.encoding != NULL) {
		mark(ss, CONNTAB_BODY); /* a GET goes straight on to its answer */
	}
	return MHD_YES;
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
	if (r->state != REQ_REFUSE && n > cfg->max_body - r->body.len - r->discarded) {
		/* a body without Content-Length that grew too big */
		r->state = REQ_REFUSE;
		r->refusal = PROBLEM_PAYLOAD_TOO_LARGE;
	}
	if (r->state != REQ_KEEP) {
		r->discarded += n;
		return r->discarded > 16 * cfg->max_body ? MHD_NO : MHD_YES;
	}
	switch (body_append(&r->body, &ss->server->budget, data, n)) {
	case BODY_OK:
		return MHD_YES;
	case BODY_OVER_BUDGET:
		r->state = REQ_REFUSE;
		r->refusal = PROBLEM_OVERLOADED;
		r->discarded = n;
		return MHD_YES;
	case BODY_NO_MEMORY:
		break;
	}
	return MHD_NO;
}

/* The catalog for a request: through its engine's reader (no lock unless
 * a reload came), or referenced for this request alone when the
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

/* The revisions and the named catalogs held with the catalog catalog_for
 * gave (the same ref), into the context. */
static void held_for(struct session *ss, const struct holder_ref *ref, struct api_context *ctx)
{
	if (ref == NULL) {
		ref = ss->server->readers[ss->conn->engine].ref;
	}
	holder_view(ref, &ctx->revisions, &ctx->num_revisions, &ctx->catalogs, &ctx->num_catalogs);
}

static void catalog_done(struct session *ss, struct holder_ref *ref)
{
	if (ref != NULL) {
		holder_release(ss->server->holder, ref);
	}
}

static void on_decision(void *cls, const char *catalog, const char *target, enum splitk_kind kind)
{
	metrics_decision(cls, catalog, target, kind);
}

/* GET /v1/events: the api said "a stream"; the stream module holds it
 * open, outside the connection table (stream.h), or it is 503. */
static enum MHD_Result open_stream(struct MHD_Connection *conn, struct session *ss,
				   const char *method, struct api_response *a)
{
	struct server *s = ss->server;
	const char *last_id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
	enum stream_open_status why = STREAM_CLOSING;
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	char detail[160];

	if (!ss->req.draining) {
		/* its heartbeats straight to the socket where the bytes on the
		 * wire are chunks of plain HTTP/1.1 (stream.h) */
		resp = stream_open(&s->streams, conn, a->stream_catalog, last_id,
				   ss->tls.tls == NULL && strcmp(ss->req.version, MHD_HTTP_VERSION_1_1) == 0,
				   &why);
	}
	if (resp == NULL) {
		/* 1 to 4 s, not 1 for all: a storm of reconnects refused
		 * together comes back spread out, so the next one is smaller
		 * (the socket and the clock are random enough for a spread) */
		char after[2] = {(char)('1' + (((uint64_t)ss->fd * 2654435761u ^
					       listener_now_ns() >> 10) & 3)), '\0'};

		snprintf(detail, sizeof(detail), "%s; retry",
			 why == STREAM_FULL ? "every change stream this server keeps (--max-streams) is open"
			 : why == STREAM_CLOSING ? "the server is draining"
			 : why == STREAM_NO_CHANNEL ? "this catalog's stream is not open yet"
			 : "out of memory");
		return refuse_after(conn, ss, method, PROBLEM_OVERLOADED, detail, after);
	}
	/* the stream's end is the connection's: a drain closes both */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = queue(conn, ss, method, a, resp);
	if (ss->conn != NULL) {
		conntab_release(&s->table, ss->conn);
		ss->conn = NULL;
		ss->cache = NULL;
	}
	return ret;
}

/* A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method)
 * on a route: extras.c's 204. */
static enum MHD_Result preflight(struct MHD_Connection *conn, struct session *ss,
				 const char *method)
{
	struct api_response a;

	extras_preflight(&ss->ext, &a);
	return queue(conn, ss, method, &a, NULL);
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

	if (r->state >= REQ_REFUSE) { /* or REQ_PREFLIGHT */
		return r->state == REQ_REFUSE
			       ? over_limit(conn, ss, method, r->refusal)
			       : preflight(conn, ss, method);
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.catalog = catalog_for(ss, &ref);
	held_for(ss, ref, &ctx);
	ctx.on_decision = on_decision;
	ctx.on_decision_cls = s->metrics;
	ctx.on_engine = metrics_engine;
	ctx.report_status = s->hooks.report_status;
	ctx.report_status_cls = s->hooks.report_status_cls;
	ctx.list_history = s->hooks.list_history;
	ctx.list_history_cls = s->hooks.list_history_cls;
	ctx.render_metrics = s->render_metrics;
	ctx.render_metrics_cls = s;
	ctx.draining = r->draining;
	ctx.version = SPLITKD_VERSION;
	ctx.build = SPLITKD_BUILD;
	ctx.limits = &s->limits;
	req.method = method;
	req.uri = r->uri;
	req.uri_len = r->uri_len;
	req.content_type = r->content_type;
	req.if_none_match = r->if_none_match;
	req.if_match = r->if_match;
	req.accept = r->accept;
	req.body = r->body.buf ? r->body.buf : "";
	req.body_len = r->body.len;
	api_handle(&ctx, &req, &resp);
	catalog_done(ss, ref);
	if (resp.stream && api_method_is(method, "GET")) {
		ret = open_stream(conn, ss, method, &resp);
	} else {
		ret = queue(conn, ss, method, &resp, NULL);
	}
	api_response_cleanup(&resp);
	return ret;
}

/* MHD calls this for the header block, for each piece of the body, and
 * once more when the body is in: the request's state says which. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct session *ss = *req_cls;

	(void)cls;
	(void)url;
	if (ss == NULL) {
		return MHD_NO; /* out of memory in on_uri: drop the connection */
	}
	if (ss->req.state == REQ_HEADERS) {
		return on_headers(conn, ss, method, version);
	}
	if (*upload_data_size != 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		return ss->req.state == REQ_ANSWERED ? MHD_YES : on_upload(ss, upload_data, n);
	}
	if (ss->req.state == REQ_ANSWERED) {
		return MHD_YES;
	}
	return answer(conn, ss, method);
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
	ss->cache = ss->conn != NULL ? &s->caches[ss->conn->engine] : NULL;
	ss->extras = s->extras ? &ss->ext.fields : NULL;
	if (s->limiting) {
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		conntab_client_key(info != NULL ? info->client_addr : NULL, ss->ext.client);
	}
	if (s->tls != NULL) {
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		tls_conn_start(&ss->tls, s->tls, info != NULL ? info->tls_session : NULL);
	}
}

static void session_end(struct server *s, struct session *ss)
{
	bool ours = ss->conn != NULL && conntab_closing(&s->table, ss->conn);
	enum request_state state = ss->req.state;

	ss->tls.session = NULL; /* libmicrohttpd freed it before telling us */
	if (state != REQ_NONE && state != REQ_ANSWERED && !ours) {
		/* MHD gave up on this request without answering, or reported
		 * nothing at all: the client is still waiting */
		answer_on_socket(ss, "GET", ss->req.uri_len > s->cfg->max_header ? PROBLEM_URI_TOO_LONG
										: PROBLEM_HEADER_TOO_LARGE,
				 "the request does not fit the memory a connection has");
	}
	finish_request(ss);
	httpd_drain(ss->fd);
	tls_conn_end(&ss->tls, ss->fd, listener_received_bytes(ss->fd) != 0);
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

/* The listener admitted a connection: the table chose its engine. */
int http_hand_over(struct server *s, struct conntab_conn *c, int fd, const struct sockaddr *addr,
		   socklen_t len)
{
	if (httpd_add(s->engines[c->engine], fd, addr, len) != 0) {
		conntab_release(&s->table, c); /* MHD closed the socket */
		return -1;
	}
	return 0;
}

int http_engines_start(struct server *s, char *err, size_t err_cap)
{
	const struct server_config *cfg = s->cfg;
	const struct httpd_calls calls = {on_request, on_uri, on_completed, on_connection, s};

	s->engines = calloc(cfg->threads, sizeof(*s->engines));
	s->readers = calloc(cfg->threads, sizeof(*s->readers));
	s->caches = calloc(cfg->threads, sizeof(*s->caches)); /* zeroed: empty caches */
	if (s->engines == NULL || s->readers == NULL || s->caches == NULL) {
		snprintf(err, err_cap, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < cfg->threads; i++) {
		/* streams are not in the table */
		s->engines[i] = httpd_start(cfg, (unsigned)(s->table.cap + cfg->max_streams), s->tls,
					     &calls);
		if (s->engines[i] == NULL) {
			snprintf(err, err_cap, "cannot start the HTTP engine (libmicrohttpd)");
			return -1;
		}
		s->num_engines = i + 1;
	}
	return 0;
}

void http_engines_stop(struct server *s)
{
	for (unsigned i = 0; i < s->num_engines; i++) {
		httpd_stop(s->engines[i]);
	}
	/* the engines' threads are gone: their readers let go */
	for (unsigned i = 0; s->readers != NULL && i < s->cfg->threads; i++) {
		holder_reader_cleanup(s->holder, &s->readers[i]);
	}
	free(s->readers);
	s->readers = NULL;
	/* ...and their kept responses go (MHD frees each once unused) */
	for (unsigned i = 0; s->caches != NULL && i < s->cfg->threads; i++) {
		respcache_cleanup(&s->caches[i]);
	}
	free(s->caches);
	s->caches = NULL;
	free(s->engines);
	s->engines = NULL;
	s->num_engines = 0;
}
