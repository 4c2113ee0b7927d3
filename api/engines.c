/* SPDX-License-Identifier: AGPL-3.0-only */
#include "engines.h"

#include <string.h>

#include "decimal.h"
#include "fa2.h"
#include "fa3.h"
#include "flashinfer.h"
#include "names.h"
#include "vocab.h"
#include "vllm.h"

/* What the seed's answer reads: the policy's inputs and the workspace's. */
#define SEED_READS \
	(ENGINE_IN_SM_COUNT | ENGINE_IN_NUM_SEQS | ENGINE_IN_NUM_Q_HEADS | ENGINE_IN_HEAD_DIM)

#define PORT(id, prefix, name)                                                              \
	[id] = {name, prefix##_TITLE, prefix##_REPO, prefix##_COMMIT, prefix##_FILES,      \
		prefix##_FUNCTIONS, prefix##_READS, prefix##_GPU_READS, NULL}

static const struct engines_info engines[ENGINES_COUNT] = {
	[ENGINES_SEED] = {"seed", "The seed's rule (attn_splitk.rs: auto, legacy or pinned)", NULL,
			  "", "attn_splitk.rs",
			  "resolve_policy num_splits auto_splits legacy_splits workspace_slots",
			  SEED_READS, 0, NULL},
	PORT(ENGINES_FA2, FA2, "fa2"),
	PORT(ENGINES_FA3, FA3, "fa3"),
	PORT(ENGINES_FLASHINFER, FLASHINFER, "flashinfer"),
	PORT(ENGINES_VLLM, VLLM, "vllm"),
};

/* The launch functions apart from the table's strings, so the table reads
 * as the headers' macros. */
static struct engine_answer (*const launches[ENGINES_COUNT])(const struct engine_shape *) = {
	[ENGINES_FA2] = fa2_launch,
	[ENGINES_FA3] = fa3_launch,
	[ENGINES_FLASHINFER] = flashinfer_launch,
	[ENGINES_VLLM] = vllm_launch,
};

const struct engines_info *engines_info(enum engines_id id)
{
	return (unsigned)id < ENGINES_COUNT ? &engines[id] : NULL;
}

int engines_find(const struct query *q, enum engines_id *out, struct problem *p)
{
	struct names_near near;

	*out = ENGINES_SEED;
	if (q->engine.p == NULL) {
		return 0;
	}
	for (int e = 0; e < ENGINES_COUNT; e++) {
		if (names_equal(q->engine.p, q->engine.len, engines[e].name)) {
			*out = (enum engines_id)e;
			return 0;
		}
	}
	names_near_init(&near, q->engine.p, q->engine.len, NAMES_SAME);
	for (int e = 0; e < ENGINES_COUNT; e++) {
		names_near_offer(&near, engines[e].name);
	}
	return problem_unknown_name(p, PROBLEM_UNKNOWN_ENGINE, VOCAB_M_ENGINE, "engine",
				    q->engine.p, q->engine.len, near.best, "GET /v1/engines");
}

/* The input an engine needs and the query leaves out: a 400 that says
 * what it is for. */
static int missing(enum engines_id id, const char *input, const char *why, struct problem *p)
{
	return problem_set(p, PROBLEM_MISSING_PARAMETER, input, NULL,
			   "%s is required with engine=%s: %s", input, engines[id].name, why);
}

uint32_t engines_kv_heads(const struct query *q, const struct decision *d)
{
	if (q->num_kv_heads.set) {
		return q->num_kv_heads.v;
	}
	return d->model != NULL ? d->model->num_kv_heads : 0;
}

int engines_shape(enum engines_id id, const struct query *q, const struct decision *d,
		  uint32_t num_splits, struct engine_shape *out, struct problem *p)
{
	const struct engines_info *e = &engines[id];
	uint32_t kv = engines_kv_heads(q, d);

	memset(out, 0, sizeof(*out));
	if ((e->reads & ENGINE_IN_SEQ_LEN) && !q->seq_len.set) {
		return missing(id, VOCAB_M_SEQ_LEN, "the tokens of KV each sequence holds", p);
	}
	if ((e->reads & ENGINE_IN_NUM_KV_HEADS) && kv == 0) {
		return missing(id, VOCAB_M_NUM_KV_HEADS,
			       d->model != NULL ? "the catalog's model does not say it"
						: "num_q_heads was given without a model",
			       p);
	}
	if ((e->reads & ENGINE_IN_HEAD_DIM) && d->head_dim == 0) {
		return missing(id, VOCAB_M_HEAD_DIM,
			       d->model != NULL ? "the catalog's model does not say it"
						: "num_q_heads was given without a model",
			       p);
	}
	if ((e->gpu_reads & ENGINE_IN_BLOCKS_PER_SM) && !q->blocks_per_sm.set) {
		return missing(id, VOCAB_M_BLOCKS_PER_SM,
			       "the decode kernel's CTAs per SM, which the engine asks "
			       "cudaOccupancyMaxActiveBlocksPerMultiprocessor at run time; splitkd "
			       "never guesses it",
			       p);
	}
	out->sm_count = d->sm_count;
	out->num_seqs = d->shape.num_seqs;
	out->num_q_heads = d->num_q_heads;
	out->num_kv_heads = kv;
	out->head_dim = d->head_dim;
	out->seq_len = q->seq_len.set ? q->seq_len.v : 0;
	out->page_size = q->page_size.set ? q->page_size.v : 16;
	out->blocks_per_sm = q->blocks_per_sm.set ? q->blocks_per_sm.v : 0;
	out->cuda_graph = q->cuda_graph;
	out->num_splits = num_splits;
	return 0;
}

int engines_refused(enum engines_id id, const struct engine_answer *a, struct problem *p)
{
	return problem_set(p, PROBLEM_UNSUPPORTED_SHAPE, a->refused_input, NULL, "%s: %s",
			   engines[id].name, a->refused);
}

/* Appends a string literal: its length is a constant. */
#define LIT(p, s)                                \
	do {                                     \
		memcpy((p), (s), sizeof(s) - 1); \
		(p) += sizeof(s) - 1;            \
	} while (0)

/* A name known plain (a catalog's: catalog_name_ok), or null. */
static char *put_name(char *p, const char *s, size_t len)
{
	if (s == NULL) {
		LIT(p, "null");
		return p;
	}
	*p++ = '"';
	memcpy(p, s, len);
	p += len;
	*p++ = '"';
	return p;
}

/* A term's name: the port's static string, plain JSON text and at most
 * ENGINES_TERM_NAME_MAX bytes (test_engines holds every port to both). */
static char *put_term(char *p, const char *s)
{
	size_t len = strlen(s);

	*p++ = '"';
	memcpy(p, s, len);
	p += len;
	LIT(p, "\":");
	return p;
}

/* The bytes an answer can take: its keys and punctuation, twenty-digit
 * numbers, the names and the terms. */
static size_t answer_bound(const struct decision *d, const struct catalog *cat)
{
	size_t n = 640 + CATALOG_DIGEST_LEN + cat->name_len;

	n += d->target != NULL ? d->target->names.name_len : 0;
	n += d->model != NULL ? d->model->names.name_len : 0;
	return n + ENGINE_TERMS_MAX * (ENGINES_TERM_NAME_MAX + 24);
}

/* The answer in place, a literal a key and no writer call a member (a
 * batch of them was 2.7 times the seed's through jsonw). */
static size_t write_answer(char *out, enum engines_id id, const struct decision *d,
			   const struct engine_shape *s, const struct engine_answer *a,
			   const struct catalog *cat)
{
	char *p = out;
	const char *name = engines[id].name;

	LIT(p, "{" VOCAB_KEY(ENGINE));
	p = put_name(p, name, strlen(name));
	LIT(p, VOCAB_NEXT_KEY(TARGET));
	p = put_name(p, d->target ? d->target->names.name : NULL,
		     d->target ? d->target->names.name_len : 0);
	LIT(p, VOCAB_NEXT_KEY(SM_COUNT));
	p = decimal_put_u64(p, s->sm_count);
	LIT(p, VOCAB_NEXT_KEY(MODEL));
	p = put_name(p, d->model ? d->model->names.name : NULL,
		     d->model ? d->model->names.name_len : 0);
	LIT(p, VOCAB_NEXT_KEY(NUM_Q_HEADS));
	p = decimal_put_u64(p, s->num_q_heads);
	LIT(p, VOCAB_NEXT_KEY(NUM_KV_HEADS));
	p = decimal_put_u64(p, s->num_kv_heads);
	LIT(p, VOCAB_NEXT_KEY(HEAD_DIM));
	p = decimal_put_u64(p, s->head_dim);
	LIT(p, VOCAB_NEXT_KEY(NUM_SEQS));
	p = decimal_put_u64(p, s->num_seqs);
	LIT(p, VOCAB_NEXT_KEY(SEQ_LEN));
	p = decimal_put_u64(p, s->seq_len);
	LIT(p, VOCAB_NEXT_KEY(PAGE_SIZE));
	p = decimal_put_u64(p, s->page_size);
	LIT(p, VOCAB_NEXT_KEY(BLOCKS_PER_SM));
	if (s->blocks_per_sm == 0) {
		LIT(p, "null");
	} else {
		p = decimal_put_u64(p, s->blocks_per_sm);
	}
	if (s->cuda_graph) {
		LIT(p, VOCAB_NEXT_KEY(CUDA_GRAPH) "true");
	} else {
		LIT(p, VOCAB_NEXT_KEY(CUDA_GRAPH) "false");
	}
	LIT(p, VOCAB_NEXT_KEY(NUM_SPLITS));
	p = decimal_put_u64(p, a->num_splits);
	LIT(p, VOCAB_NEXT_KEY(NUM_SPLITS_BOUND));
	p = decimal_put_u64(p, a->num_splits_bound);
	LIT(p, VOCAB_NEXT_KEY(WORKSPACE_BYTES));
	p = decimal_put_u64(p, a->workspace_bytes);
	LIT(p, VOCAB_NEXT_KEY(TERMS) "{");
	for (unsigned i = 0; i < a->n_terms && i < ENGINE_TERMS_MAX; i++) {
		if (i > 0) {
			*p++ = ',';
		}
		p = put_term(p, a->terms[i].name);
		p = decimal_put_u64(p, a->terms[i].value);
	}
	LIT(p, "}" VOCAB_NEXT_KEY(CATALOG));
	/* every digest is CATALOG_DIGEST_LEN bytes, a catalog's name plain */
	p = put_name(p, cat->digest, CATALOG_DIGEST_LEN);
	LIT(p, VOCAB_NEXT_KEY(CATALOG_NAME));
	p = put_name(p, cat->name, cat->name_len);
	*p++ = '}';
	return (size_t)(p - out);
}

void engines_write(struct jsonw *w, enum engines_id id, const struct decision *d,
		   const struct engine_shape *s, const struct engine_answer *a,
		   const struct catalog *cat)
{
	char *at = jsonw_raw_room(w, answer_bound(d, cat));

	if (at != NULL) {
		jsonw_raw_done(w, write_answer(at, id, d, s, a, cat));
	}
}

void engines_count(const struct api_context *ctx, enum engines_id id,
		   const struct engine_answer *a)
{
	if (ctx->on_engine != NULL) {
		ctx->on_engine(ctx->on_decision_cls, (int)id, a->status == ENGINE_OK);
	}
}

int engines_decide(const struct api_context *ctx, const struct query *q, const struct decision *d,
		   bool fields, enum engines_id *id, struct engine_shape *s,
		   struct engine_answer *a, struct problem *p)
{
	if (engines_find(q, id, p) != 0) {
		return -1;
	}
	if (*id == ENGINES_SEED) {
		return 1;
	}
	if (fields) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, "fields", NULL,
				   "fields cuts the seed's answer; engine=%s answers whole",
				   engines[*id].name);
	}
	if (engines_shape(*id, q, d, 0, s, p) != 0) {
		return -1;
	}
	*a = launches[*id](s);
	engines_count(ctx, *id, a);
	return a->status == ENGINE_OK ? 0 : engines_refused(*id, a, p);
}

int engines_answer(const struct api_context *ctx, struct jsonw *w, const struct query *q,
		   const struct decision *d, const struct catalog *cat, bool fields,
		   struct problem *p)
{
	struct engine_shape s;
	struct engine_answer a;
	enum engines_id id;
	int rc = engines_decide(ctx, q, d, fields, &id, &s, &a, p);

	if (rc == 0) {
		engines_write(w, id, d, &s, &a, cat);
	}
	return rc;
}

struct engine_answer engines_launch(enum engines_id id, const struct engine_shape *s)
{
	return launches[id](s);
}

/* The inputs' names, in engine.h's bit order. */
static const char *input_name(unsigned bit)
{
	switch (bit) {
	case ENGINE_IN_SM_COUNT:
		return VOCAB_M_SM_COUNT;
	case ENGINE_IN_NUM_SEQS:
		return VOCAB_M_NUM_SEQS;
	case ENGINE_IN_NUM_Q_HEADS:
		return VOCAB_M_NUM_Q_HEADS;
	case ENGINE_IN_NUM_KV_HEADS:
		return VOCAB_M_NUM_KV_HEADS;
	case ENGINE_IN_HEAD_DIM:
		return VOCAB_M_HEAD_DIM;
	case ENGINE_IN_SEQ_LEN:
		return VOCAB_M_SEQ_LEN;
	case ENGINE_IN_PAGE_SIZE:
		return VOCAB_M_PAGE_SIZE;
	case ENGINE_IN_BLOCKS_PER_SM:
		return VOCAB_M_BLOCKS_PER_SM;
	case ENGINE_IN_CUDA_GRAPH:
		return VOCAB_M_CUDA_GRAPH;
	case ENGINE_IN_NUM_SPLITS:
		return VOCAB_M_NUM_SPLITS;
	default:
		return NULL;
	}
}

void engines_write_inputs(struct jsonw *w, unsigned bits)
{
	jsonw_array_begin(w);
	for (unsigned bit = 1; bit != 0 && bit <= bits; bit <<= 1) {
		if ((bits & bit) && input_name(bit) != NULL) {
			jsonw_str(w, input_name(bit));
		}
	}
	jsonw_array_end(w);
}
