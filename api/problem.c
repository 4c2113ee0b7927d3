/* SPDX-License-Identifier: AGPL-3.0-only */
#include "problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "quote.h"

struct kind_info {
	const char *slug;
	const char *title;
	int status;
	const char *description;
};

static const struct kind_info kinds[PROBLEM_KIND_COUNT] = {
	[PROBLEM_NONE] = {"none", "No problem", 200, "Not an error."},
	[PROBLEM_INVALID_PARAMETER] = {"invalid-parameter", "Invalid parameter", 400,
		"A parameter or body field has the wrong type or a value outside its range. Numbers are "
		"plain decimals from 1 to 4294967295 (no sign, no leading zero); `param` names the field."},
	[PROBLEM_UNKNOWN_PARAMETER] = {"unknown-parameter", "Unknown parameter", 400,
		"The endpoint does not take this parameter or body field. `suggestion` names the nearest one "
		"it does take."},
	[PROBLEM_REPEATED_PARAMETER] = {"repeated-parameter", "Repeated parameter", 400,
		"A parameter or body field appears more than once; splitkd never guesses which one was meant."},
	[PROBLEM_MISSING_PARAMETER] = {"missing-parameter", "Missing parameter", 400,
		"A required parameter is absent, e.g. neither `target` nor `sm_count` was given."},
	[PROBLEM_MALFORMED_QUERY] = {"malformed-query", "Malformed query string", 400,
		"The query string has a bad percent-escape or too many parameters (at most 32)."},
	[PROBLEM_MALFORMED_JSON] = {"malformed-json", "Malformed JSON", 400,
		"The body is not one strict JSON value: bad syntax, trailing data, invalid UTF-8, NUL "
		"characters, or nesting deeper than 32."},
	[PROBLEM_UNKNOWN_TARGET] = {"unknown-target", "Unknown target", 404,
		"No target in the loaded catalog has this name or alias. See GET /v1/targets."},
	[PROBLEM_UNKNOWN_MODEL] = {"unknown-model", "Unknown model", 404,
		"No model in the loaded catalog has this name or alias. See GET /v1/models."},
	[PROBLEM_NOT_FOUND] = {"not-found", "Not found", 404,
		"No resource at this path. GET /openapi.json lists every route."},
	[PROBLEM_METHOD_NOT_ALLOWED] = {"method-not-allowed", "Method not allowed", 405,
		"The path exists but not for this method; the Allow header lists the methods it takes."},
	[PROBLEM_UNSUPPORTED_MEDIA_TYPE] = {"unsupported-media-type", "Unsupported media type", 415,
		"POST bodies must be sent as Content-Type: application/json."},
	[PROBLEM_PAYLOAD_TOO_LARGE] = {"payload-too-large", "Payload too large", 413,
		"The body is over --max-body (default 1 MiB), or a batch has more than 1024 queries."},
	[PROBLEM_URI_TOO_LONG] = {"uri-too-long", "URI too long", 414,
		"The request target is longer than splitkd accepts (8192 bytes)."},
	[PROBLEM_HEADER_TOO_LARGE] = {"header-too-large", "Request header fields too large", 431,
		"The request line and headers are over --max-header (default 4096 bytes). Answered by the "
		"server before the request is read."},
	[PROBLEM_BAD_REQUEST] = {"bad-request", "Bad request", 400,
		"HTTP framing splitkd will not guess at: no Host (HTTP/1.1), two Hosts, two Content-Lengths, "
		"or Content-Length with Transfer-Encoding. Answered by the server, which then closes the "
		"connection."},
	[PROBLEM_EXPECTATION_FAILED] = {"expectation-failed", "Expectation failed", 417,
		"An Expect header other than 100-continue."},
	[PROBLEM_NOT_IMPLEMENTED] = {"not-implemented", "Not implemented", 501,
		"A Transfer-Encoding other than chunked."},
	[PROBLEM_OVERLOADED] = {"overloaded", "Service overloaded", 503,
		"The memory splitkd keeps for request bodies (--body-budget) is full. Nothing was done; "
		"retry after the Retry-After seconds, here or at another replica."},
	[PROBLEM_INTERNAL] = {"internal", "Internal error", 500,
		"splitkd could not answer (out of memory). Nothing was changed; retry."},
	[PROBLEM_REVISION_UNAVAILABLE] = {"revision-unavailable", "Revision unavailable", 409,
		"The request pins a catalog revision (a digest) this replica does not hold: it never served "
		"it, or has let it go (--revisions). `current` is this replica's revision and `held` every "
		"one it still answers for: try another replica, or wait for the rollout to reach this one."},
	[PROBLEM_PRECONDITION_FAILED] = {"precondition-failed", "Precondition failed", 412,
		"If-Match names no tag of the current answer (RFC 9110 13.1.1): what the client read has "
		"changed. Read it again (its ETag is the new tag), or pin the revision it planned with."},
	[PROBLEM_INVALID_CATALOG] = {"invalid-catalog", "Invalid catalog", 400,
		"The candidate catalog would be refused by a load (--catalog, SIGHUP): `detail` names the "
		"entry and the field, as splitkd --check-catalog does."},
	[PROBLEM_UNKNOWN_CATALOG] = {"unknown-catalog", "Unknown catalog", 404,
		"No catalog this replica serves has this name (`catalog`): it was never declared here, or "
		"its file was removed from --catalog-dir. `suggestion` names the nearest one; GET "
		"/v1/catalogs lists them."},
	[PROBLEM_CATALOG_MISMATCH] = {"catalog-mismatch", "Revision of another catalog", 409,
		"The request pins a revision (a digest) that this replica holds for another catalog than the "
		"one the request names (or the default, when it names none). splitkd never answers one "
		"catalog's question from another's revision: ask with the `catalog` the revision belongs to, "
		"which `detail` names, or without the revision."},
	[PROBLEM_UNKNOWN_ENGINE] = {"unknown-engine", "Unknown engine", 404,
		"`engine` names none of the engines splitkd answers for: seed, fa2, fa3, flashinfer or vllm "
		"(GET /v1/engines lists them). `suggestion` names the nearest."},
	[PROBLEM_UNSUPPORTED_SHAPE] = {"unsupported-shape", "Shape the engine refuses", 422,
		"The engine, at the upstream commit splitkd ports, has no kernel for this shape or refuses "
		"it as its own checks do (a head size, a GQA group size, a page or block size, a split count "
		"past its bound). `param` names the input to change and `detail` says what the engine takes."},
	[PROBLEM_TOO_MANY_REQUESTS] = {"too-many-requests", "Too many requests", 429,
		"This client address has spent its requests (--rate-limit: a second's worth, and a burst). "
		"Nothing was done; retry after Retry-After seconds. RateLimit-Policy says the quota and "
		"RateLimit what is left of it. /healthz, /readyz and /metrics are never limited."},
};

int problem_set(struct problem *p, enum problem_kind kind, const char *param,
		const char *suggestion, const char *fmt, ...)
{
	va_list ap;

	p->kind = kind;
	p->extra = NULL;
	p->extra_cls = NULL;
	quote_excerpt(param ? param : "", param ? strlen(param) : 0, p->param, sizeof(p->param));
	quote_excerpt(suggestion ? suggestion : "", suggestion ? strlen(suggestion) : 0,
		   p->suggestion, sizeof(p->suggestion));
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	return -1;
}

int problem_unknown_name(struct problem *p, enum problem_kind kind, const char *param,
			 const char *what, const char *name, size_t len, const char *near,
			 const char *list)
{
	char quoted[QUOTE_MAX];

	quote_excerpt(name, len, quoted, sizeof(quoted));
	if (near != NULL) {
		return problem_set(p, kind, param, near, "no %s named \"%s\"; did you mean \"%s\"?",
				   what, quoted, near);
	}
	return problem_set(p, kind, param, NULL, "no %s named \"%s\" (%s lists them)", what, quoted,
			   list);
}

int problem_status(enum problem_kind kind)
{
	return kind < PROBLEM_KIND_COUNT ? kinds[kind].status : 500;
}

const char *problem_slug(enum problem_kind kind)
{
	return kinds[kind < PROBLEM_KIND_COUNT ? kind : PROBLEM_INTERNAL].slug;
}

static void write_type_uri(struct jsonw *w, const char *slug)
{
	char uri[64];

	snprintf(uri, sizeof(uri), "/problems/%s", slug);
	jsonw_kv_str(w, "type", uri);
}

void problem_write(struct jsonw *w, const struct problem *p)
{
	const struct kind_info *k = &kinds[p->kind < PROBLEM_KIND_COUNT ? p->kind : PROBLEM_INTERNAL];

	jsonw_object_begin(w);
	write_type_uri(w, k->slug);
	jsonw_kv_str(w, "title", k->title);
	jsonw_kv_u64(w, "status", (uint64_t)k->status);
	jsonw_kv_str(w, "detail", p->detail);
	if (p->param[0] != '\0') {
		jsonw_kv_str(w, "param", p->param);
	}
	if (p->suggestion[0] != '\0') {
		jsonw_kv_str(w, "suggestion", p->suggestion);
	}
	if (p->extra != NULL) {
		p->extra(w, p->extra_cls);
	}
	jsonw_object_end(w);
}

bool problem_write_type(struct jsonw *w, const char *slug, size_t len)
{
	for (int i = PROBLEM_NONE + 1; i < PROBLEM_KIND_COUNT; i++) {
		if (strlen(kinds[i].slug) == len && memcmp(kinds[i].slug, slug, len) == 0) {
			jsonw_object_begin(w);
			write_type_uri(w, kinds[i].slug);
			jsonw_kv_str(w, "title", kinds[i].title);
			jsonw_kv_u64(w, "status", (uint64_t)kinds[i].status);
			jsonw_kv_str(w, "description", kinds[i].description);
			jsonw_object_end(w);
			return true;
		}
	}
	return false;
}
