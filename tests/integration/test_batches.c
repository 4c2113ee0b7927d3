/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Mixed batches (seq_lens, issue 49) through the real binary: the worked
 * example of FlashAttention-3 on H100 (one 8,192-token sequence 13 splits
 * alone, 11 beside [512 x 3, 100 x 4], 8 beside 63 x 100), the comparison
 * that says its split moved and the seed's did not, every engine's
 * answer for n equal lengths against num_seqs=n&seq_len=L, each bad
 * seq_lens refused naming it, and the same batch in a POST and an OFREP
 * context.
 */
#include "harness.h"

static struct daemon d;
static const char *const quiet[] = {"--access-log", "off", NULL};

static void start_quiet(void)
{
	daemon_start(&d, quiet);
}

static void stop(void)
{
	daemon_stop(&d);
}

TestSuite(batches, .init = start_quiet, .fini = stop, .timeout = 60);

#define H100 "/v1/splits?target=h100&model=llama-3.1-8b"
#define MIXED "8192,512,512,512,100,100,100,100"

/* The answer's num_splits_by_seq as a comma-separated string. */
static void by_seq(const cJSON *o, const char *key, char *out, size_t cap)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *e;
	size_t n = 0;

	out[0] = '\0';
	cr_assert(cJSON_IsArray(a), "no %s", key);
	cJSON_ArrayForEach(e, a) {
		n += (size_t)snprintf(out + n, cap - n, "%s%d", n > 0 ? "," : "", e->valueint);
		cr_assert_lt(n, cap);
	}
}

/* "8192" followed by k lengths of `other`. */
static char *one_beside(unsigned k, const char *other)
{
	size_t cap = 16 + (size_t)k * (strlen(other) + 1);
	char *s = malloc(cap);
	size_t n = (size_t)snprintf(s, cap, "8192");

	for (unsigned i = 0; i < k; i++) {
		n += (size_t)snprintf(s + n, cap - n, ",%s", other);
	}
	return s;
}

Test(batches, fa3_on_h100_the_worked_example)
{
	char path[1024], got[512];
	char *many = one_beside(63, "100");
	struct reply r;

	r = http(&d, "GET", H100 "&engine=fa3&seq_lens=8192", NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	by_seq(r.json, "num_splits_by_seq", got, sizeof(got));
	cr_assert_str_eq(got, "13");
	reply_free(&r);

	r = http(&d, "GET", H100 "&engine=fa3&seq_lens=" MIXED, NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	by_seq(r.json, "num_splits_by_seq", got, sizeof(got));
	cr_assert_str_eq(got, "11,1,1,1,1,1,1,1");
	cr_assert_eq(jnum(r.json, "num_splits"), 11, "num_splits is the largest");
	cr_assert_eq(jnum(r.json, "num_seqs"), 8);
	reply_free(&r);

	snprintf(path, sizeof(path), H100 "&engine=fa3&seq_lens=%s", many);
	r = http(&d, "GET", path, NULL, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	by_seq(r.json, "num_splits_by_seq", got, sizeof(got));
	cr_assert(strncmp(got, "8,1,1,", 6) == 0, "%s", got);
	reply_free(&r);
	free(many);
}

/* The comparison over the mixed batch: FA3's long sequence moved (11 in
 * the batch, 13 alone), nothing moved for the seed on Hopper (auto). */
Test(batches, the_comparison_marks_what_moved)
{
	struct reply r = http(&d, "GET",
			      "/v1/compare?target=h100&model=llama-3.1-8b&blocks_per_sm=2&seq_lens=" MIXED,
			      NULL, NULL);
	const cJSON *e;
	int seen = 0;
	char got[512];

	cr_assert_eq(r.status, 200, "%s", r.body);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r.json, "engines")) {
		const char *name = jstr(e, "engine");

		if (strcmp(name, "atlas") == 0) {
			by_seq(e, "moved", got, sizeof(got));
			cr_assert_str_eq(got, "", "the seed moved: %s", got);
			cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "batch_invariant")));
			seen++;
		} else if (strcmp(name, "fa3") == 0) {
			by_seq(e, "num_splits_by_seq", got, sizeof(got));
			cr_assert_str_eq(got, "11,1,1,1,1,1,1,1");
			by_seq(e, "alone_by_seq", got, sizeof(got));
			cr_assert_str_eq(got, "13,1,1,1,1,1,1,1");
			by_seq(e, "moved", got, sizeof(got));
			cr_assert_str_eq(got, "0");
			cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "batch_invariant")));
			/* num_splits=1 holds it still */
			by_seq(cJSON_GetObjectItemCaseSensitive(e, "invariant"), "moved", got, sizeof(got));
			cr_assert_str_eq(got, "");
			seen++;
		} else if (strcmp(name, "vllm") == 0 || strcmp(name, "sglang") == 0) {
			/* V1 on FA3 under full graphs: 11 in the batch; SGLang: 8 */
			bool v1 = strcmp(name, "vllm") == 0;
			const cJSON *inv = cJSON_GetObjectItemCaseSensitive(e, "invariant");

			by_seq(e, "num_splits_by_seq", got, sizeof(got));
			cr_assert_str_eq(got, v1 ? "11,1,1,1,1,1,1,1" : "8,1,1,1,1,1,1,1", "%s", name);
			cr_assert_str_eq(jstr(inv, "setting"),
					 v1 ? "batch_invariant=true" : "deterministic=true");
			by_seq(inv, "moved", got, sizeof(got));
			cr_assert_str_eq(got, "", "%s held still moved %s", name, got);
			seen++;
		}
	}
	cr_assert_eq(seen, 4);
	reply_free(&r);
}

/* n equal lengths answer what num_seqs=n&seq_len=L answers, engine by
 * engine: the count, its bound and the scratch, and each sequence's count
 * is that count. */
Test(batches, equal_lengths_are_the_uniform_answer_for_every_engine)
{
	static const char *const engines[] = {
		"",
		"&engine=fa2&page_size=256",
		"&engine=fa3",
		"&engine=flashinfer&blocks_per_sm=2",
		"&engine=flashinfer&tensor_cores=1",
		"&engine=vllm",
	};
	static const struct {
		unsigned n, len;
	} shapes[] = {{1, 8192}, {3, 512}, {8, 100}, {33, 4096}, {200, 17}};

	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			char path[4096], lens[2048], want[64];
			size_t n = 0;
			struct reply a, b;
			const cJSON *x;

			for (unsigned i = 0; i < shapes[s].n; i++) {
				n += (size_t)snprintf(lens + n, sizeof(lens) - n, "%s%u", i ? "," : "",
						      shapes[s].len);
			}
			snprintf(path, sizeof(path), H100 "&head_dim=128%s&num_seqs=%u&seq_len=%u",
				 engines[e], shapes[s].n, shapes[s].len);
			a = http(&d, "GET", path, NULL, NULL);
			snprintf(path, sizeof(path), H100 "&head_dim=128%s&seq_lens=%s", engines[e], lens);
			b = http(&d, "GET", path, NULL, NULL);
			cr_assert_eq(a.status, b.status, "%s: %s / %s", path, a.body, b.body);
			if (a.status == 200) {
				static const char *const same[] = {"num_splits", "num_splits_bound",
								   "workspace_bytes", "workspace_slots"};

				for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++) {
					const cJSON *u = cJSON_GetObjectItemCaseSensitive(a.json, same[k]);
					const cJSON *v = cJSON_GetObjectItemCaseSensitive(b.json, same[k]);

					cr_assert((u == NULL) == (v == NULL), "%s %s", path, same[k]);
					cr_assert(u == NULL || cJSON_Compare(u, v, true), "%s %s: %s / %s",
						  path, same[k], a.body, b.body);
				}
				snprintf(want, sizeof(want), "%d", (int)jnum(a.json, "num_splits"));
				cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(b.json,
										       "num_splits_by_seq")) {
					cr_assert_eq(x->valueint, atoi(want), "%s", path);
				}
			}
			reply_free(&a);
			reply_free(&b);
		}
	}
}

Test(batches, a_bad_seq_lens_is_a_400_naming_it)
{
	static const char *const bad[] = {
		"seq_lens=0",          "seq_lens=-1",         "seq_lens=8192,,100",
		"seq_lens=8192,",      "seq_lens=ten",        "seq_lens=2147483648",
		"seq_lens=",           "seq_lens=1,2&num_seqs=3", "seq_lens=1,2&seq_len=5",
		"seq_lens=1.5",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[256];
		struct reply r;

		snprintf(path, sizeof(path), H100 "&%s", bad[i]);
		r = http(&d, "GET", path, NULL, NULL);
		cr_assert_eq(r.status, 400, "%s: %s", bad[i], r.body);
		cr_assert_str_eq(jstr(r.json, "param"), "seq_lens", "%s: %s", bad[i], r.body);
		reply_free(&r);
	}
}

/* The comparison holds seq_lens to the same rule, for every engine at
 * once: seq_len beside it is refused, not answered by some engines. */
Test(batches, the_comparison_refuses_seq_len_beside_seq_lens)
{
	struct reply r = http(&d, "GET",
			      "/v1/compare?target=h100&model=llama-3.1-8b&seq_len=100&seq_lens=8192,100",
			      NULL, NULL);

	cr_assert_eq(r.status, 400, "%s", r.body);
	cr_assert_str_eq(jstr(r.json, "param"), "seq_lens");
	reply_free(&r);
}

/* More lengths than a batch holds, in a body: refused naming seq_lens. */
Test(batches, more_than_4096_lengths_are_refused)
{
	size_t cap = 16 + 4097 * 2 + 128;
	char *body = malloc(cap);
	size_t n = (size_t)snprintf(body, cap, "{\"queries\":[{\"target\":\"h100\",\"seq_lens\":[");
	const char *const json[] = {"Content-Type: application/json", NULL};
	struct reply r;

	for (int i = 0; i < 4097; i++) {
		n += (size_t)snprintf(body + n, cap - n, "%s1", i ? "," : "");
	}
	snprintf(body + n, cap - n, "]}]}");
	r = http(&d, "POST", "/v1/splits", json, body);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_not_null(strstr(r.body, "\"param\":\"seq_lens\""), "%.400s", r.body);
	reply_free(&r);
	free(body);
}

/* The same batch in a POST batch's query and an OFREP context. */
Test(batches, a_body_and_a_context_take_it_as_an_array)
{
	const char *const json[] = {"Content-Type: application/json", NULL};
	struct reply r = http(&d, "POST", "/v1/splits", json,
			      "{\"queries\":[{\"target\":\"h100\",\"model\":\"llama-3.1-8b\","
			      "\"engine\":\"fa3\",\"seq_lens\":[" MIXED "]}]}");
	char got[256];

	cr_assert_eq(r.status, 200, "%s", r.body);
	by_seq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "results"), 0),
	       "num_splits_by_seq", got, sizeof(got));
	cr_assert_str_eq(got, "11,1,1,1,1,1,1,1");
	reply_free(&r);

	r = http(&d, "POST", "/ofrep/v1/evaluate/flags/num_splits", json,
		 "{\"context\":{\"target\":\"h100\",\"model\":\"llama-3.1-8b\",\"engine\":\"fa3\","
		 "\"seq_lens\":[" MIXED "]}}");
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_eq(jnum(r.json, "value"), 11, "%s", r.body);
	reply_free(&r);
}

/* The reserve through the real daemon (issue 51): each engine's witness,
 * asked of /v1/splits, gives the bytes GET /v1/reserve reports; a batch's
 * query with reserve answers the same as the route. */
Test(batches, each_reserve_is_reached_by_its_batch)
{
	static const char *const engines[] = {"fa2", "fa3", "vllm", "vllm-v0", "vllm-triton",
					      "sglang", "trtllm"};

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		char path[65536];
		struct reply r, s;
		const cJSON *x;
		size_t len;

		snprintf(path, sizeof(path),
			 "/v1/reserve?target=h100&model=llama-3.1-8b&engine=%s&max_batch_size=32"
			 "&max_model_len=16384",
			 engines[i]);
		r = http(&d, "GET", path, NULL, NULL);
		cr_assert_eq(r.status, 200, "%s: %s", engines[i], r.body);
		len = (size_t)snprintf(path, sizeof(path), H100 "&engine=%s&seq_lens=", engines[i]);
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r.json, "seq_lens")) {
			len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%.0f",
						x->prev != NULL && x->prev->next == x ? "," : "",
						x->valuedouble);
		}
		s = http(&d, "GET", path, NULL, NULL);
		cr_assert_eq(s.status, 200, "%s: %s", path, s.body);
		cr_assert_eq(jnum(s.json, "workspace_bytes"), jnum(r.json, "workspace_bytes"), "%s",
			     engines[i]);
		reply_free(&s);
		reply_free(&r);
	}
	static const char *const json_type[] = {"Content-Type: application/json", NULL};
	struct reply b = http(&d, "POST", "/v1/splits", json_type,
			      "{\"queries\":[{\"target\":\"h100\",\"model\":\"llama-3.1-8b\","
			      "\"engine\":\"vllm\",\"reserve\":true,\"max_batch_size\":64,"
			      "\"max_model_len\":32768}]}");
	struct reply g = http(&d, "GET",
			      "/v1/reserve?target=h100&model=llama-3.1-8b&engine=vllm&max_batch_size=64"
			      "&max_model_len=32768",
			      NULL, NULL);

	cr_assert_eq(b.status, 200, "%s", b.body);
	cr_assert_eq(jnum(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(b.json, "results"), 0),
			  "workspace_bytes"),
		     jnum(g.json, "workspace_bytes"), "%s", b.body);
	reply_free(&b);
	reply_free(&g);
}
