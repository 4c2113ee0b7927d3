/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_catalog.h"

#include "lookup.h"

/* GET /v1/targets and /v1/models: the digest and every entry of a kind;
 * the targets with the rule's constants their policies run under when the
 * catalog states other than the seed's (as /v1/catalog writes them). */
static void get_list(struct handler_call *c, bool targets)
{
	const struct catalog *cat = c->ctx->catalog;
	size_t n = targets ? cat->num_targets : cat->num_models;

	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "catalog", cat->digest);
	if (targets) {
		catalog_write_top(&c->w, cat);
	}
	jsonw_key(&c->w, targets ? "targets" : "models");
	jsonw_array_begin(&c->w);
	for (size_t i = 0; i < n; i++) {
		if (targets) {
			catalog_write_target(&c->w, &cat->targets[i]);
		} else {
			catalog_write_model(&c->w, &cat->models[i]);
		}
	}
	jsonw_array_end(&c->w);
	jsonw_object_end(&c->w);
}

void handler_targets(struct handler_call *c)
{
	get_list(c, true);
}

void handler_models(struct handler_call *c)
{
	get_list(c, false);
}

/* GET /v1/targets/{name} and /v1/models/{name}: one entry. */
static void get_entry(struct handler_call *c, enum catalog_kind kind)
{
	const struct catalog *cat = c->ctx->catalog;
	long i = lookup_find(cat, kind, NULL, c->name, &c->problem);

	if (i < 0) {
		handler_fail(c);
	} else if (kind == CATALOG_TARGETS) {
		catalog_write_target(&c->w, &cat->targets[i]);
	} else {
		catalog_write_model(&c->w, &cat->models[i]);
	}
}

void handler_target(struct handler_call *c)
{
	get_entry(c, CATALOG_TARGETS);
}

void handler_model(struct handler_call *c)
{
	get_entry(c, CATALOG_MODELS);
}

void handler_catalog(struct handler_call *c)
{

	catalog_write(&c->w, c->ctx->catalog, true);
}

