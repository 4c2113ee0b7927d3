/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for the batch fast reader (api/batchfast.c) against
 * the cJSON path it stands in for.
 *
 * Input: one byte of limits (the low two bits pick max_batch 1, 2, 4 or
 * 1024), then a POST /v1/splits body (any bytes). The body is answered
 * twice through api_handle: as the server answers it (the fast reader
 * first) and with batch_tree_only (always cJSON). For the same input the
 * two must give the same answer or the same problem: the same status, the
 * same content type, the same body byte for byte, and the same decisions
 * counted, target by target and policy by policy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "api.h"
#include "catalog.h"
#include "embedded.h"

static struct catalog *cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err, sizeof(err));
	if (cat == NULL) {
		fprintf(stderr, "embedded catalog: %s\n", err);
		abort();
	}
	return 0;
}

/* Decisions counted: a checksum of (target, kind) in order, and how many. */
struct tally {
	uint64_t hash, count;
};

static void count(void *cls, const char *catalog, const char *target, enum splitk_kind kind)
{
	struct tally *t = cls;

	for (const char *c = catalog != NULL ? catalog : "(default)"; *c != '\0'; c++) {
		t->hash = (t->hash ^ (unsigned char)*c) * 0x100000001b3u;
	}
	for (const char *c = target != NULL ? target : "(none)"; *c != '\0'; c++) {
		t->hash = (t->hash ^ (unsigned char)*c) * 0x100000001b3u;
	}
	t->hash = (t->hash ^ (uint64_t)kind) * 0x100000001b3u;
	t->count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t batches[] = {1, 2, 4, 1024};
	struct api_limits limits = {API_DEFAULT_MAX_BODY, API_DEFAULT_MAX_URI, 1024};
	struct api_response fast, tree;
	struct tally t_fast = {0xcbf29ce484222325u, 0}, t_tree = {0xcbf29ce484222325u, 0};
	struct api_request req = {.method = "POST", .uri = "/v1/splits", .uri_len = 10,
				  .content_type = "application/json"};
	struct api_context ctx = {.catalog = cat, .version = "fuzz", .build = "fuzz",
				  .on_decision = count, .limits = &limits};

	if (size < 1) {
		return 0;
	}
	limits.max_batch = batches[data[0] & 3u];
	req.body = (const char *)data + 1;
	req.body_len = size - 1;

	ctx.on_decision_cls = &t_fast;
	api_handle(&ctx, &req, &fast);
	ctx.batch_tree_only = true;
	ctx.on_decision_cls = &t_tree;
	api_handle(&ctx, &req, &tree);

	CHECK(fast.status == tree.status);
	CHECK(strcmp(fast.content_type, tree.content_type) == 0);
	CHECK(fast.body_len == tree.body_len);
	CHECK(memcmp(fast.body, tree.body, fast.body_len) == 0);
	CHECK(strcmp(fast.etag, tree.etag) == 0);
	CHECK(t_fast.count == t_tree.count && t_fast.hash == t_tree.hash);

	api_response_cleanup(&fast);
	api_response_cleanup(&tree);
	return 0;
}
