/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Answers compared byte for byte with committed ones (tests/unit/golden/):
 * two calls in one process could agree on a wrong or unstable answer; a
 * file written by an earlier build cannot. Covers every route and the
 * answers with the most moving parts (explain, warnings, batches, errors).
 *
 * Each file holds the status, content type, Allow and ETag on the first
 * line, then the body. A change that alters an answer on purpose rewrites
 * the files with SPLITKD_GOLDEN_WRITE=1 and shows the diff in review:
 *   SPLITKD_GOLDEN_WRITE=1 build/tests/unit/test_golden
 * Run from the top of the tree (make does).
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

TestSuite(golden, .init = load_default_catalog, .fini = free_default_catalog);

struct golden {
	const char *name; /* tests/unit/golden/<name>.golden */
	const char *method;
	const char *uri;
	const char *body; /* POST only, sent as application/json */
};

static const struct golden cases[] = {
	{"splits-explain", "GET", "/v1/splits?target=h100&model=llama-3.1-70b&explain", NULL},
	{"splits-override-typo", "GET",
	 "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&override=atuo", NULL},
	{"splits-legacy-explain-warnings", "GET",
	 "/v1/splits?target=gb10&model=qwen3.8-27b&max_batch_size=16&num_seqs=20&max_rows=8&explain=1",
	 NULL},
	{"splits-saturated-bytes", "GET",
	 "/v1/splits?sm_count=132&num_q_heads=4294967295&head_dim=4294967295"
	 "&max_batch_size=4294967295&declared=auto&explain",
	 NULL},
	{"splits-pinned-clamp-explain", "GET", "/v1/splits?target=h100&num_q_heads=8&override=99&explain=1",
	 NULL},
	{"splits-auto-saturated-explain", "GET",
	 "/v1/splits?sm_count=4294967295&num_q_heads=3000000000&declared=auto&explain=1", NULL},
	{"splits-declared-typo", "GET", "/v1/splits?target=h100&model=qwen3-8b&declared=atuo", NULL},
	{"splits-post-batch", "POST", "/v1/splits",
	 "{\"queries\":[{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
	 "{\"target\":\"nope\",\"model\":\"qwen3-8b\"},{\"target\":\"gb10\",\"num_q_heads\":\"8\"},"
	 "{\"sm_count\":148,\"num_q_heads\":24,\"head_dim\":64,\"override\":\"off\",\"explain\":true}]}"},
	{"splits-post-malformed", "POST", "/v1/splits", "{\"target\":\"h100\",\n \"model\": qwen}"},
	{"matrix-override-typo", "GET", "/v1/matrix?max_batch_size=16&override=atuo", NULL},
	{"policy-clamped", "GET", "/v1/policy?spelling=99", NULL},
	{"policy-unparsed", "GET", "/v1/policy?spelling=atuo", NULL},
	{"targets", "GET", "/v1/targets", NULL},
	{"target-by-alias", "GET", "/v1/targets/H100", NULL},
	{"models", "GET", "/v1/models", NULL},
	{"model-by-alias", "GET", "/v1/models/LLAMA3.1-8B", NULL},
	{"catalog", "GET", "/v1/catalog", NULL},
	{"healthz", "GET", "/healthz", NULL},
	{"readyz", "GET", "/readyz", NULL},
	{"version", "GET", "/version", NULL},
	{"problem-type", "GET", "/problems/unknown-target", NULL},
	{"error-unknown-parameter", "GET", "/v1/splits?targt=h100&model=qwen3-8b", NULL},
	{"error-unknown-target", "GET", "/v1/splits?target=hoper&model=qwen3-8b", NULL},
	{"error-unknown-model-path", "GET", "/v1/models/qwen3-8", NULL},
	{"error-method", "DELETE", "/v1/splits", NULL},
	{"error-not-found", "GET", "/v1/nothing", NULL},
	{"error-bad-escape", "GET", "/v1/splits?target=h100&override=%zz", NULL},
	/* OFREP (docs/ofrep-design.md, section 12) */
	{"ofrep-single", "POST", "/ofrep/v1/evaluate/flags/num_splits",
	 "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":\"16\","
	 "\"targetingKey\":\"node-17\",\"max_bach_size\":3}}"},
	{"ofrep-single-strings", "POST", "/ofrep/v1/evaluate/flags/policy",
	 "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"override\":4}}"},
	{"ofrep-unknown-target", "POST", "/ofrep/v1/evaluate/flags/num_splits",
	 "{\"context\":{\"target\":\"hoper\",\"model\":\"qwen3.8-27b\"}}"},
	{"ofrep-camel", "POST", "/ofrep/v1/evaluate/flags/num_splits",
	 "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"maxBatchSize\":16}}"},
	{"ofrep-bytes-big", "POST", "/ofrep/v1/evaluate/flags/workspace_bytes",
	 "{\"context\":{\"target\":\"h100\",\"num_q_heads\":64,\"max_rows\":1048576,"
	 "\"head_dim\":8388608}}"},
	{"ofrep-not-found", "POST", "/ofrep/v1/evaluate/flags/num_split", "{\"context\":{}}"},
	{"ofrep-parse", "POST", "/ofrep/v1/evaluate/flags/num_splits", "{\"context\": {\"target\": \"h100\","},
	{"ofrep-bulk", "POST", "/ofrep/v1/evaluate/flags",
	 "{\"context\":{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16}}"},
	{"ofrep-bulk-bad", "POST", "/ofrep/v1/evaluate/flags",
	 "{\"context\":{\"target\":\"hoper\",\"model\":\"qwen3.8-27b\"}}"},
	{"ofrep-bulk-parse", "POST", "/ofrep/v1/evaluate/flags", "[1"},
	{"ofrep-configuration", "GET", "/ofrep/v1/configuration", NULL},
	{"ofrep-method", "GET", "/ofrep/v1/evaluate/flags/num_splits", NULL},
};

/* The answer as the file holds it. */
static char *render(const struct golden *g)
{
	struct answer a = call_full(g->method, g->uri, g->body ? "application/json" : NULL, g->body,
				    g->body ? strlen(g->body) : 0, false);
	size_t cap = strlen(a.body) + 256;
	char *out = malloc(cap);

	cr_assert_not_null(out);
	snprintf(out, cap, "%d %s allow=%s etag=%s\n%s\n", a.status, a.content_type,
		 a.allow ? a.allow : "-", a.etag[0] ? a.etag : "-", a.body);
	answer_free(&a);
	return out;
}

Test(golden, answers_match_the_committed_bytes)
{
	bool write = getenv("SPLITKD_GOLDEN_WRITE") != NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[128], *got = render(&cases[i]), *want;

		snprintf(path, sizeof(path), "tests/unit/golden/%s.golden", cases[i].name);
		if (write) {
			FILE *f = fopen(path, "wb");

			cr_assert_not_null(f, "cannot write %s", path);
			fputs(got, f);
			fclose(f);
		}
		want = read_whole_file(path, NULL);
		cr_assert_not_null(want, "%s is missing (run from the top of the tree)", path);
		cr_expect_str_eq(got, want, "%s differs:\n got: %s\nwant: %s", path, got, want);
		free(got);
		free(want);
	}
}

/* The renderer itself can tell answers apart: a guard against a golden
 * test that would pass on any bytes. */
Test(golden, different_questions_render_differently)
{
	char *a = render(&cases[0]), *b = render(&cases[1]);

	cr_assert_str_neq(a, b);
	free(a);
	free(b);
}
