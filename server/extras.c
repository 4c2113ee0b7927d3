/* SPDX-License-Identifier: AGPL-3.0-only */
#include "extras.h"

#include <stdio.h>
#include <string.h>

#include "cors.h"

void extras_begin(struct extras *x, const struct server_config *cfg, extras_header_fn *header,
		  void *conn, uint64_t start_ns)
{
	const char *origin = NULL;

	if (cfg->num_cors_origins > 0) {
		origin = header(conn, "Origin");
	}
	x->origin_sent = origin != NULL;
	x->of = start_ns;
	x->fields = (struct extras_fields){
		.vary_origin = cfg->num_cors_origins > 0,
		.origin = cors_match(cfg->cors_origins, cfg->num_cors_origins, origin),
	};
}

/* --rate-limit: takes one of the client's requests, unless the route is
 * never limited; its RateLimit fields go on the answer. Returns false
 * when the client has none left. */
static bool limit_take(struct extras *x, struct ratelimit *limiter, const char *policy,
		       const int unlimited[3], int route, uint64_t now_ns)
{
	struct ratelimit_verdict v;

	if (route == unlimited[0] || route == unlimited[1] || route == unlimited[2]) {
		return true;
	}
	v = ratelimit_take(limiter, x->client, now_ns);
	snprintf(x->ratelimit, sizeof(x->ratelimit), "\"client\";r=%u;t=%u", v.remaining, v.reset_s);
	x->fields.ratelimit = x->ratelimit;
	x->fields.ratelimit_policy = policy;
	if (!v.allowed) {
		snprintf(x->retry_after, sizeof(x->retry_after), "%u", v.retry_after);
	}
	return v.allowed;
}

enum extras_verdict extras_judge(struct extras *x, const struct server_config *cfg,
				 struct ratelimit *limiter, const char *policy,
				 const int unlimited[3], int route, const char *method,
				 extras_header_fn *header, void *conn, uint64_t start_ns, char *why,
				 size_t why_cap)
{
	enum extras_verdict ret = EXTRAS_PASS;

	extras_begin(x, cfg, header, conn, start_ns);
	x->route = route;
	if (route >= 0 && x->origin_sent && strcmp(method, "OPTIONS") == 0 &&
	    header(conn, "Access-Control-Request-Method") != NULL) {
		ret = EXTRAS_PREFLIGHT;
	}
	if (limiter == NULL || limit_take(x, limiter, policy, unlimited, route, start_ns)) {
		return ret;
	}
	snprintf(why, why_cap, "this client address has sent more than its %u requests a "
		 "second (--rate-limit); retry after %s s", cfg->rate_limit, x->retry_after);
	return EXTRAS_REFUSED;
}

void extras_preflight(const struct extras *x, struct api_response *a)
{
	const char *methods = NULL;

	memset(a, 0, sizeof(*a));
	a->status = 204;
	a->route = x->route;
	(void)api_route_path((size_t)x->route, &methods);
	a->allow = methods;
	if (x->fields.origin != NULL) {
		(void)api_response_add_header(a, "Access-Control-Allow-Methods", methods);
		(void)api_response_add_header(a, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
		(void)api_response_add_header(a, "Access-Control-Max-Age", CORS_MAX_AGE);
	}
}
