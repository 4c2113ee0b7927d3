/* SPDX-License-Identifier: AGPL-3.0-only */
#include "response.h"

#include <stdio.h>
#include <string.h>

#include "cors.h"
#include "direct.h"

/* The CORS and RateLimit fields of an answer (extras.h). */
static void add_extra(struct MHD_Response *resp, const struct extras_fields *x)
{
	if (x->vary_origin) {
		/* every answer, so that a cache keeps one per origin */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Origin");
	}
	if (x->origin != NULL) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", x->origin);
		MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
		MHD_add_response_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
	}
	if (x->ratelimit != NULL) {
		MHD_add_response_header(resp, "RateLimit-Policy", x->ratelimit_policy);
		MHD_add_response_header(resp, "RateLimit", x->ratelimit);
	}
}

/* Adds the response headers every answer carries. */
static void add_headers(struct MHD_Response *resp, const struct api_response *a,
			const struct extras_fields *extra)
{
	if (a->status != 304 && a->content_type != NULL) {
		/* RFC 9110 15.4.5: a 304 has no content, so no content type (nor
		 * a preflight's 204, which has none either) */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (a->allow != NULL) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, a->allow);
	}
	if (a->close) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	if (a->etag[0] != '\0') {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
	}
	for (size_t i = 0; i < a->num_headers; i++) {
		MHD_add_response_header(resp, a->headers[i].name, a->headers[i].value);
	}
	if (extra != NULL) {
		add_extra(resp, extra);
	}
}

/* A response for an answer. A body the response owns is handed to MHD
 * (which free()s it), a static one is lent; neither is copied. *body is
 * the bytes the response sends when they stay put for its life (handed
 * over or static), else NULL. */
static struct MHD_Response *build(struct api_response *a, const char **body)
{
	struct MHD_Response *resp;

	*body = NULL;
	if (a->owned != NULL && a->body == a->owned) {
		resp = MHD_create_response_from_buffer(a->body_len, a->owned,
						       MHD_RESPMEM_MUST_FREE);
		if (resp != NULL) {
			*body = a->owned;
			a->owned = NULL; /* MHD's now */
		}
		return resp;
	}
	resp = MHD_create_response_from_buffer(a->body_len, (void *)a->body,
					       a->owned == NULL ? MHD_RESPMEM_PERSISTENT
								: MHD_RESPMEM_MUST_COPY);
	if (resp != NULL && a->owned == NULL) {
		*body = a->body;
	}
	return resp;
}

bool response_queue(struct MHD_Connection *conn, struct respcache *cache, struct api_response *a,
		    struct MHD_Response *made, const struct extras_fields *extra,
		    enum MHD_Result *ret)
{
	bool keep = made == NULL && cache != NULL && respcache_eligible(a, false);
	struct MHD_Response *resp;
	const char *body = NULL;

	if (extra != NULL && (extra->origin != NULL || extra->ratelimit != NULL)) {
		keep = false; /* an answer that echoes an origin or counts a client's
			       * requests is this request's alone: none kept is used
			       * for it, nor is it kept */
	}
	resp = keep ? respcache_find(cache, a) : NULL;

	if (resp != NULL) {
		*ret = MHD_queue_response(conn, (unsigned)a->status, resp); /* the cache keeps it */
		return true;
	}
	resp = made != NULL ? made : build(a, &body);
	if (resp == NULL) {
		return false;
	}
	add_headers(resp, a, extra);
	*ret = MHD_queue_response(conn, (unsigned)a->status, resp);
	if (keep && body != NULL && *ret == MHD_YES) {
		respcache_keep(cache, a, resp, body); /* the cache's reference now */
	} else {
		MHD_destroy_response(resp);
	}
	return true;
}

void response_refusal(struct api_response *a, enum problem_kind kind, const char *detail,
		      const char *retry_after)
{
	api_problem_answer(a, kind, detail);
	a->close = kind != PROBLEM_PAYLOAD_TOO_LARGE && kind != PROBLEM_HEADER_TOO_LARGE &&
		   kind != PROBLEM_TOO_MANY_REQUESTS;
	if (kind == PROBLEM_OVERLOADED || kind == PROBLEM_TOO_MANY_REQUESTS) {
		api_response_add_header(a, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
	}
}

void response_limit_detail(enum problem_kind kind, const struct server_config *cfg, char *out,
			   size_t cap)
{
	if (kind == PROBLEM_PAYLOAD_TOO_LARGE) {
		snprintf(out, cap, "the body is over %zu bytes", cfg->max_body);
	} else if (kind == PROBLEM_OVERLOADED) {
		snprintf(out, cap, "request bodies already hold the %zu bytes this server keeps "
			 "for them; retry", cfg->body_budget);
	} else {
		snprintf(out, cap, "the request line and headers are over %zu bytes",
			 cfg->max_header);
	}
}

/* direct_send's way out over TLS: the connection's session. */
static int tls_send_bytes(void *cls, const void *buf, size_t len)
{
	return tls_send(cls, buf, len);
}

size_t response_on_socket(struct tls_conn *tls, int fd, const char *method,
			  const struct api_response *a)
{
	unsigned status = (unsigned)a->status;
	bool head = strcmp(method, "HEAD") == 0;

	if (tls->tls != NULL) {
		/* through the TLS session, or not at all: never plaintext */
		if (direct_send(tls_send_bytes, tls, status, MHD_get_reason_phrase_for(status),
				a->content_type, a->body, a->body_len, head) != 0) {
			return 0; /* closed without an answer */
		}
		return a->body_len;
	}
	(void)direct_write(fd, status, MHD_get_reason_phrase_for(status), a->content_type, a->body,
			   a->body_len, head);
	return a->body_len;
}
