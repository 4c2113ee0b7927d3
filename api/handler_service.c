/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_service.h"

#include "embedded.h"

void handler_healthz(struct handler_call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", "ok");
	jsonw_object_end(&c->w);
}

void handler_readyz(struct handler_call *c)
{

	c->status = c->ctx->draining ? 503 : 200;
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "status", c->ctx->draining ? "draining" : "ready");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

void handler_version(struct handler_call *c)
{

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "name", "splitkd");
	jsonw_kv_str(&c->w, "version", c->ctx->version ? c->ctx->version : "unknown");
	jsonw_kv_str(&c->w, "build", c->ctx->build ? c->ctx->build : "unknown");
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_object_end(&c->w);
}

void handler_openapi(struct handler_call *c)
{

	c->body = (struct slice){embedded_openapi_json, embedded_openapi_json_len};
}

void handler_problem_type(struct handler_call *c)
{

	if (!problem_write_type(&c->w, c->name.p, c->name.len)) {
		problem_set(&c->problem, PROBLEM_NOT_FOUND, NULL, NULL, "no such problem type");
		handler_fail(c);
	}
}
