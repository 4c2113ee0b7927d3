/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_revisions.h"

#include "decide.h"
#include "diff.h"
#include "events.h"
#include "revision.h"

void handler_revisions(struct handler_call *c)
{
	struct revision one;
	size_t n;
	const struct revision *revs = revision_held(c->ctx, &one, &n);

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "current", revs[0].catalog->digest);
	jsonw_key(&c->w, "revisions");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		jsonw_object_begin(&c->w);
		jsonw_kv_str(&c->w, "revision", revs[i].catalog->digest);
		jsonw_kv_str_or_null(&c->w, "loaded_at", revs[i].loaded_at);
		jsonw_kv_str_or_null(&c->w, "source", revs[i].source);
		jsonw_kv_u64(&c->w, "targets", revs[i].catalog->num_targets);
		jsonw_kv_u64(&c->w, "models", revs[i].catalog->num_models);
		jsonw_object_end(&c->w);
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

void handler_diff(struct handler_call *c)
{
	const struct catalog *from, *to;

	if (revision_diff_pair(c->ctx, c->q.from, c->q.to, &from, &to, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	diff_write(&c->w, from, to, decide_shape_of(&c->q), c->q.override);
}

void handler_catalog_diff(struct handler_call *c)
{
	char why[640];
	const struct catalog *base = c->ctx->catalog;
	struct catalog *candidate;

	if (!handler_json_body(c, "POST /v1/catalog/diff")) {
		return;
	}
	if (c->q.from.p != NULL) {
		base = revision_held_catalog(c->ctx, "from", c->q.from, &c->problem);
		if (base == NULL) {
			handler_fail(c);
			return;
		}
	}
	/* the loader a reload uses, so the same file gets the same verdict */
	candidate = catalog_load(c->req->body, c->req->body_len, why, sizeof(why));
	if (candidate == NULL) {
		problem_set(&c->problem, PROBLEM_INVALID_CATALOG, NULL, NULL, "%s", why);
		handler_fail(c);
		return;
	}
	diff_write(&c->w, base, candidate, decide_shape_of(&c->q), c->q.override);
	catalog_free(candidate);
}

void handler_catalogs(struct handler_call *c)
{
	struct revision_named one;
	struct revision rev;
	size_t n;
	const struct revision_named *all = revision_catalogs(c->ctx, &one, &rev, &n);

	jsonw_object_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		if (all[i].is_default) {
			jsonw_kv_str(&c->w, "default", all[i].name);
		}
	}
	jsonw_key(&c->w, "catalogs");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		const struct revision *now = &all[i].revisions[0];

		jsonw_object_begin(&c->w);
		jsonw_kv_str(&c->w, "name", all[i].name);
		jsonw_kv_bool(&c->w, "default", all[i].is_default);
		jsonw_kv_str(&c->w, "revision", now->catalog->digest);
		jsonw_kv_str_or_null(&c->w, "loaded_at", now->loaded_at);
		jsonw_kv_str_or_null(&c->w, "source", now->source);
		jsonw_kv_u64(&c->w, "targets", now->catalog->num_targets);
		jsonw_kv_u64(&c->w, "models", now->catalog->num_models);
		jsonw_kv_u64(&c->w, "revisions", all[i].num_revisions);
		jsonw_object_end(&c->w);
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

void handler_events(struct handler_call *c)
{
	if (c->q.catalog.p != NULL && c->q.catalog.len == 1 && c->q.catalog.p[0] == '*') {
		c->resp->stream_catalog = EVENTS_ALL;
	} else if (c->q.catalog.p != NULL) {
		/* the router chose it: the name lives as long as the request */
		c->resp->stream_catalog = c->ctx->catalog->name;
	}
	c->content_type = API_CT_EVENT_STREAM;
	c->body = (struct slice){"", 0};
	c->resp->stream = true;
	/* nginx buffers a proxied answer unless told not to */
	(void)exchange_add_header(c->resp, "X-Accel-Buffering", "no");
}
