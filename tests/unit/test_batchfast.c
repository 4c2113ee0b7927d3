/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The batch fast reader (batchfast.c) against the cJSON path it stands in
 * for: for every body, the answer through api_handle with the reader and
 * with batch_tree_only is the same status, type and bytes, and the same
 * decisions are counted. Bodies of the common shape must take the fast
 * path (batchfast_answer says yes and writes the tree path's bytes);
 * every other body must be declined with nothing written or counted.
 */
#include <stdio.h>
#include <stdlib.h>

#include "batchfast.h"
#include "decide.h"
#include "helpers.h"

TestSuite(batchfast, .init = load_default_catalog, .fini = free_default_catalog);

static void count(void *cls, const char *catalog, const char *target, enum splitk_kind kind)
{
	(void)catalog;
	(void)target;
	(void)kind;
	(*(size_t *)cls)++;
}

/* The answer and the decisions counted, through the fast reader or not. */
static struct answer run(const char *body, bool tree_only, size_t *decisions)
{
	struct api_limits limits = {API_DEFAULT_MAX_BODY, API_DEFAULT_MAX_URI, 4};
	struct api_context ctx = {.catalog = test_catalog, .version = "t", .build = "t",
				  .on_decision = count, .on_decision_cls = decisions,
				  .limits = &limits, .batch_tree_only = tree_only};
	struct api_request req = {.method = "POST", .uri = "/v1/splits", .uri_len = 10,
				  .content_type = "application/json", .body = body,
				  .body_len = strlen(body)};

	*decisions = 0;
	return call_ctx(&ctx, &req);
}

/* batchfast_answer alone: whether it took the body, and what it wrote. */
static bool fast(const char *body, char **written, size_t *decisions)
{
	struct api_limits limits = {API_DEFAULT_MAX_BODY, API_DEFAULT_MAX_URI, 4};
	struct api_context ctx = {.catalog = test_catalog, .on_decision = count,
				  .on_decision_cls = decisions};
	struct api_request req = {.method = "POST", .uri = "/v1/splits", .uri_len = 10,
				  .content_type = "application/json", .body = body,
				  .body_len = strlen(body)};
	struct handler_call c = {.ctx = &ctx, .req = &req, .limits = &limits};
	bool took;

	*decisions = 0;
	jsonw_init(&c.w, 0);
	took = batchfast_answer(&c);
	*written = strndup(c.w.buf != NULL ? c.w.buf : "", c.w.len);
	jsonw_cleanup(&c.w);
	return took;
}

static void same_both_ways(const char *body, bool want_fast)
{
	size_t n_fast = 0, n_tree = 0, n_direct = 0;
	struct answer a = run(body, false, &n_fast);
	struct answer b = run(body, true, &n_tree);
	char *written = NULL;
	bool took = fast(body, &written, &n_direct);

	cr_assert_eq(a.status, b.status, "%s\nfast: %s\ntree: %s", body, a.body, b.body);
	cr_assert_str_eq(a.content_type, b.content_type, "%s", body);
	cr_assert_str_eq(a.body, b.body, "%s", body);
	cr_assert_eq(n_fast, n_tree, "%s: %zu decisions counted, the tree path %zu", body, n_fast,
		     n_tree);
	cr_assert_eq(took, want_fast, "%s: the fast reader %s it", body, took ? "took" : "declined");
	if (took) {
		cr_assert_str_eq(written, b.body, "%s", body);
		cr_assert_eq(n_direct, n_tree);
	} else {
		cr_assert_str_eq(written, "", "%s: declined, yet wrote %s", body, written);
		cr_assert_eq(n_direct, 0, "%s: declined, yet counted %zu", body, n_direct);
	}
	free(written);
	answer_free(&a);
	answer_free(&b);
}

Test(batchfast, the_common_shape_takes_the_fast_path_with_the_same_bytes)
{
	static const char *const bodies[] = {
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16}]}",
		/* whitespace of every JSON kind, anywhere */
		" \t\r\n{ \"queries\" : [ { \"target\" : \"b200\" , \"model\" : \"qwen3-32b\" } ,\n"
		"{\"target\":\"a100\",\"num_q_heads\":40} ] } \n",
		/* every input once; a catalog miss and a missing model are the
		 * decision's own problems, answered inside the batch */
		"{\"queries\":[{\"sm_count\":132,\"declared\":\"auto\",\"num_q_heads\":64,\"head_dim\":128,"
		"\"max_batch_size\":16,\"num_seqs\":4,\"max_rows\":32,\"override\":\"atuo\",\"explain\":true},"
		"{\"target\":\"hoper\",\"model\":\"qwen3-8b\"},{\"target\":\"h100\"},{}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"explain\":false,\"override\":\"\"}]}",
		/* the largest u32, a pinned override clamped, DEL inside a string */
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":4294967295,"
		"\"override\":\"99\"},{\"target\":\"gb10\",\"model\":\"x\x7fy\"}]}",
		/* fields, before or after the queries */
		"{\"fields\":\"num_splits,workspace_bytes\",\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
		"{\"queries\":[{\"target\":\"hoper\"},{\"target\":\"h100\",\"model\":\"llama-3.1-70b\"}],"
		"\"fields\":\"warnings,target,explain\"}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		same_both_ways(bodies[i], true);
	}
}

Test(batchfast, anything_else_is_declined_and_answered_by_the_tree_path)
{
	static const char *const bodies[] = {
		"", " ", "{}", "[]", "null", "{\"queries\":[]}", "{\"queries\":{}}", "{\"queries\":null}",
		/* over this test's max_batch of 4 */
		"{\"queries\":[{},{},{},{},{}]}",
		/* escapes, non-ASCII, controls */
		"{\"queries\":[{\"target\":\"\\u0068100\",\"model\":\"qwen3-8b\"}]}",
		"{\"queries\":[{\"target\":\"h100\\n\",\"model\":\"qwen3-8b\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qw\xc3\xa9n\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qw\xff\"}]}",
		"{\"queries\":[{\"target\":\"h1\t00\"}]}",
		"{\"queries\":[{\"target\":\"h100\\u0000\"}]}",
		"\xef\xbb\xbf{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}\x01",
		"\x01{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\"}]}",
		/* numbers the plain reader does not take */
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":16.0}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":1.6e1}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":16E0}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":0}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":-1}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":016}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":4294967296}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":99999999999}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":\"16\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"max_batch_size\":null}]}",
		/* wrong types, repeated and unknown keys */
		"{\"queries\":[{\"target\":4,\"model\":\"qwen3-8b\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"explain\":1}]}",
		"{\"queries\":[{\"target\":\"h100\",\"explain\":\"true\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"target\":\"b200\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"max_bach_size\":4}]}",
		"{\"queries\":[{\"target\":\"h100\",\"spelling\":\"auto\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"fields\":\"num_splits\"}]}",
		"{\"queries\":[{\"target\":\"h100\"},4,null,\"x\",[]]}",
		"{\"queries\":[{\"target\":\"h100\"}],\"queries\":[{\"target\":\"b200\"}]}",
		"{\"queries\":[{\"target\":\"h100\"}],\"extra\":1}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":\"num_split\"}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":\"\"}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":\"num_splits,\"}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":\"num_splits,num_splits\"}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":[\"num_splits\"]}",
		"{\"queries\":[{\"target\":\"h100\"}],\"fields\":\"num_splits\",\"fields\":\"policy\"}",
		/* a string past BATCHFAST_MAX_STRING, still under query.c's limit */
		"{\"queries\":[{\"target\":\"h100\",\"override\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]}",
		/* malformed, trailing data, cut short */
		"{\"queries\":[{\"target\":\"h100\"}]}}", "{\"queries\":[{\"target\":\"h100\"}]} x",
		"{\"queries\":[{\"target\":\"h100\"},]}", "{\"queries\":[{\"target\":\"h100\",}]}",
		"{\"queries\":[{\"target\":\"h100\"}", "{\"queries\":[{\"target\":\"h1",
		"{\"queries\":[{\"target\":\"h100\" \"model\":\"x\"}]}", "{\"queries\":[{\"target\"\"h100\"}]}",
		"{\"queries\":[{\"target\":\"h100\"}],}", "{,\"queries\":[{\"target\":\"h100\"}]}",
		"{\"queries\":[{\"target\":\"h100\",\"explain\":tru}]}",
		"{\"queries\":[{\"target\":\"h100\",\"explain\":truex}]}",
		"{\"target\":\"h100\",\"model\":\"qwen3-8b\"}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		same_both_ways(bodies[i], false);
	}
}

/* The bench's body: 1024 decisions over the catalog, the same bytes. */
Test(batchfast, a_full_batch_over_the_catalog_is_the_same_bytes)
{
	static const char *const targets[] = {"hopper", "gb10", "b200", "a100", "h100-pcie", "l40s",
					      "rtx4090", "rtx5090"};
	static const char *const models[] = {"qwen3.8-27b", "llama-3.1-8b", "llama-3.1-70b",
					     "qwen3-32b", "gemma-2-9b", "gpt-oss-120b"};
	struct api_limits limits = {API_DEFAULT_MAX_BODY, API_DEFAULT_MAX_URI, 1024};
	size_t cap = 1024 * 96, len = 0;
	char *body = malloc(cap);
	struct answer a, b;

	cr_assert_not_null(body);
	len += (size_t)snprintf(body, cap, "{\"queries\":[");
	for (unsigned i = 0; i < 1024; i++) {
		len += (size_t)snprintf(body + len, cap - len,
					"%s{\"target\":\"%s\",\"model\":\"%s\",\"max_batch_size\":%u}",
					i ? "," : "", targets[i % 8], models[i % 6], 1 + i % 64);
	}
	len += (size_t)snprintf(body + len, cap - len, "]}");
	cr_assert_lt(len, cap);
	for (int tree = 0; tree < 2; tree++) {
		struct api_context ctx = {.catalog = test_catalog, .limits = &limits,
					  .batch_tree_only = tree == 1};
		struct api_request req = {.method = "POST", .uri = "/v1/splits", .uri_len = 10,
					  .content_type = "application/json", .body = body,
					  .body_len = len};

		if (tree) {
			b = call_ctx(&ctx, &req);
		} else {
			a = call_ctx(&ctx, &req);
		}
	}
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_eq(num(a.json, "count"), 1024);
	cr_assert_eq(num(a.json, "failures"), 0);
	cr_assert_str_eq(a.body, b.body);
	answer_free(&a);
	answer_free(&b);
	free(body);
}

/* Every byte inside a string: the plain ones (printable ASCII and DEL but
 * '"' and '\\') keep the fast path, every other is declined; the answer is
 * the tree path's either way. */
Test(batchfast, every_byte_in_a_string_is_judged_as_the_tree_path_would)
{
	for (int b = 1; b < 256; b++) {
		char body[128];
		bool plain = b >= 0x20 && b <= 0x7f && b != '"' && b != '\\';

		snprintf(body, sizeof(body),
			 "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3-8b\",\"override\":\"a%cb\"}]}", b);
		same_both_ways(body, plain);
	}
}
