/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler.h"

#include <string.h>
#include <strings.h>

int handler_fail(struct handler_call *c)
{
	c->failed = true;
	return -1;
}

bool handler_is_json(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (ct == NULL) {
		return false;
	}
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, want, n) != 0) {
		return false;
	}
	ct += n + strspn(ct + n, " \t");
	return *ct == '\0' || *ct == ';';
}


bool handler_json_body(struct handler_call *c, const char *route)
{
	if (!handler_is_json(c->req->content_type)) {
		problem_set(&c->problem, PROBLEM_UNSUPPORTED_MEDIA_TYPE, NULL, NULL,
			    "%s takes Content-Type: application/json, not %s", route,
			    c->req->content_type ? c->req->content_type : "no content type");
		handler_fail(c);
		return false;
	}
	if (c->req->body_len > c->limits->max_body) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, NULL, NULL,
			    "the body is over %zu bytes", c->limits->max_body);
		handler_fail(c);
		return false;
	}
	return true;
}
