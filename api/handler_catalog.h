/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * handler_catalog — the catalog as it is served: the lists, one entry by
 * name or alias (a 404 with a did-you-mean from lookup_find), and the whole
 * catalog with its digest, all in catalog_write's canonical form. Reads
 * the context's catalog only; thread-safe.
 */
#ifndef SPLITKD_HANDLER_CATALOG_H
#define SPLITKD_HANDLER_CATALOG_H

#include "handler.h"

handler_fn handler_targets; /* GET /v1/targets */
handler_fn handler_target;  /* GET /v1/targets/{name} */
handler_fn handler_models;  /* GET /v1/models */
handler_fn handler_model;   /* GET /v1/models/{name} */
handler_fn handler_catalog; /* GET /v1/catalog */

#endif /* SPLITKD_HANDLER_CATALOG_H */
