/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded.h"
#include "history.h"
#include "status.h"

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

void handler_status(struct handler_call *c)
{
	struct api_status st;

	memset(&st, 0, sizeof(st));
	if (c->ctx->report_status != NULL) {
		st.max_named = c->ctx->num_catalogs;
		st.named = st.max_named > 1 ? calloc(st.max_named, sizeof(*st.named)) : NULL;
		st.max_named = st.named != NULL ? st.max_named : 0;
		c->ctx->report_status(c->ctx->report_status_cls, &st);
	} else {
		/* no server behind the context: the catalog it carries, as if
		 * embedded and loaded at start */
		snprintf(st.revision, sizeof(st.revision), "%s", c->ctx->catalog->digest);
		st.catalog.last.ok = true;
	}
	status_write(&c->w, &st, c->ctx->catalog->name);
	free(st.named);
}

void handler_history(struct handler_call *c)
{
	struct history_entry *page;
	uint32_t limit = c->q.limit.set ? c->q.limit.v : HISTORY_DEFAULT_LIMIT;
	uint64_t before = c->q.before.set ? c->q.before.v : 0;
	size_t n = 0;

	/* the query layer refused 0 for both (a u32 is 1 or more): only a
	 * limit above the page is this route's to refuse */
	if (limit > HISTORY_MAX_LIMIT) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, "limit", NULL,
			    "limit must be from 1 to %d, not %u", HISTORY_MAX_LIMIT, limit);
		handler_fail(c);
		return;
	}
	/* one more than asked: whether a next page exists */
	page = calloc((size_t)limit + 1, sizeof(*page));
	if (page == NULL) {
		problem_set(&c->problem, PROBLEM_INTERNAL, NULL, NULL, "out of memory");
		handler_fail(c);
		return;
	}
	if (c->ctx->list_history != NULL) {
		n = c->ctx->list_history(c->ctx->list_history_cls, before, page, (size_t)limit + 1);
	}
	jsonw_object_begin(&c->w);
	jsonw_key(&c->w, "entries");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n && i < limit; i++) {
		history_write_entry(&c->w, &page[i], false);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_u64_or_null(&c->w, "next_before", n > limit ? page[limit - 1].seq : 0);
	jsonw_object_end(&c->w);
	free(page);
}
