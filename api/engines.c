/* SPDX-License-Identifier: AGPL-3.0-only */
#include "engines.h"

#include <stddef.h>
#include <string.h>

#include "decimal.h"
#include "fa2.h"
#include "fa3.h"
#include "flashinfer.h"
#include "names.h"
#include "vocab.h"
#include "vllm.h"

/* What the seed's answer reads: the policy's inputs and the workspace's,
 * the rows of engine_inputs.h its decision resolves (DECISION). */
#define SEED_READ_DECISION(e) | ENGINE_IN_##e
#define SEED_READ_MODEL(e)
#define SEED_READ_QUERY(e)
#define SEED_READ_OPTION(e)
#define SEED_READ_ARG(e)
#define SEED_READ_ROW(a, e, name, kind, from, bounds, zero, about) SEED_READ_##from(e)
#define SEED_READS (0u ENGINE_INPUTS(SEED_READ_ROW, ~))

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

/* Each port over a mixed batch (engine.h's <port>_launch_batch); a port
 * with settings of its own takes them from the shape's OPTION rows. */
static struct engine_answer flashinfer_batch(const struct engine_shape *s,
					     const struct engine_batch *b, uint32_t *by_seq)
{
	const struct flashinfer_options o = {s->tensor_cores, s->fixed_split_size,
					     s->disable_split_kv};

	return flashinfer_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer (*const batch_launches[ENGINES_COUNT])(const struct engine_shape *,
								   const struct engine_batch *,
								   uint32_t *) = {
	[ENGINES_FA2] = fa2_launch_batch,
	[ENGINES_FA3] = fa3_launch_batch,
	[ENGINES_FLASHINFER] = flashinfer_batch,
	[ENGINES_VLLM] = vllm_launch_batch,
};

/* The settings only a port's batch path reads (OPTION rows), as bits. */
#define BATCH_ONLY_OPTION(e) | ENGINE_IN_##e
#define BATCH_ONLY_QUERY(e)
#define BATCH_ONLY_MODEL(e)
#define BATCH_ONLY_DECISION(e)
#define BATCH_ONLY_ARG(e)
#define BATCH_ONLY_ROW(a, e, name, kind, from, bounds, zero, about) BATCH_ONLY_##from(e)
#define BATCH_ONLY_BITS (0u ENGINE_INPUTS(BATCH_ONLY_ROW, ~))

#define SET_BIT_U32(v) ((v) != 0)
#define SET_BIT_BOOL(v) (v)
#define SET_BIT_ROW(a, e, name, kind, from, bounds, zero, about) \
	| (SET_BIT_##kind(s->name) ? ENGINE_IN_##e : 0u)

struct engine_answer engines_launch_batch(enum engines_id id, const struct engine_shape *s,
					  const struct engine_batch *b, uint32_t *by_seq)
{
	if (batch_launches[id] == NULL) {
		return engine_refused("mixed batches (seq_lens) are not ported for this engine yet: "
				      "give num_seqs and seq_len",
				      VOCAB_M_SEQ_LENS);
	}
	return batch_launches[id](s, b, by_seq);
}

struct engine_answer engines_launch_query(enum engines_id id, const struct query *q,
					  const struct engine_shape *s, uint32_t *by_seq)
{
	uint32_t lens[ENGINE_MAX_SEQS];
	struct engine_batch b = {lens, 0};
	unsigned set = 0u ENGINE_INPUTS(SET_BIT_ROW, ~);

	if (q->seq_lens.n > 0) {
		b.num_seqs = (uint32_t)query_list_get(&q->seq_lens, lens, ENGINE_MAX_SEQS);
		return engines_launch_batch(id, s, &b, by_seq);
	}
	if ((set & BATCH_ONLY_BITS & engines[id].reads) == 0) {
		return launches[id](s);
	}
	/* a setting only the batch path reads: num_seqs sequences of seq_len */
	if (s->num_seqs > ENGINE_MAX_SEQS) {
		return engine_refused("with a setting of the mixed-batch path (tensor_cores, "
				      "fixed_split_size, disable_split_kv) a batch holds at most "
				      "4096 sequences: give fewer",
				      VOCAB_M_NUM_SEQS);
	}
	for (uint32_t i = 0; i < s->num_seqs; i++) {
		lens[i] = s->seq_len;
	}
	b.num_seqs = s->num_seqs;
	return engines_launch_batch(id, s, &b, by_seq);
}

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

/* What an absent input reads as, by kind: a U32 its default (0: none),
 * a BOOL false (a flag's default is false: absent and false are one). */
#define SHAPE_VALUE_U32(m, dflt) ((m).set ? (m).v : (uint32_t)(dflt))
#define SHAPE_VALUE_BOOL(m, dflt) (m)
/* Whether an absent input is one to ask for: a count with no default. */
#define SHAPE_ASKS_U32(dflt) ((dflt) == 0)
#define SHAPE_ASKS_BOOL(dflt) false

#define NEED_QUERY(e, name, kind, bounds, about)                                        \
	if (SHAPE_ASKS_##kind(ENGINE_BOUND_DEFAULT(bounds)) && (bits & ENGINE_IN_##e) &&     \
	    !QUERY_GIVEN_##kind(q->name)) {                                                 \
		return missing(id, #name, about, p);                                        \
	}
#define NEED_MODEL(e, name, kind, bounds, about)
#define NEED_OPTION(e, name, kind, bounds, about)
#define NEED_DECISION(e, name, kind, bounds, about)
#define NEED_ARG(e, name, kind, bounds, about)
#define NEED_ROW(a, e, name, kind, from, bounds, zero, about) \
	NEED_##from(e, name, kind, bounds, about)

/* The first engine-only input among `bits` (enum engine_input) that the
 * engine needs and the query leaves out, in the table's order: -1 with
 * its missing-parameter problem, why being the row's words; or 0. */
static int need_given(enum engines_id id, const struct query *q, unsigned bits, struct problem *p)
{
	ENGINE_INPUTS(NEED_ROW, ~)
	return 0;
}

#define SHAPE_QUERY(e, name, kind, bounds) \
	out->name = SHAPE_VALUE_##kind(q->name, ENGINE_BOUND_DEFAULT(bounds));
#define SHAPE_MODEL(e, name, kind, bounds)
#define SHAPE_OPTION SHAPE_QUERY
#define SHAPE_DECISION(e, name, kind, bounds)
#define SHAPE_ARG(e, name, kind, bounds)
#define SHAPE_ROW(a, e, name, kind, from, bounds, zero, about) SHAPE_##from(e, name, kind, bounds)

int engines_shape(enum engines_id id, const struct query *q, const struct decision *d,
		  uint32_t num_splits, struct engine_shape *out, struct problem *p)
{
	const struct engines_info *e = &engines[id];
	uint32_t kv = engines_kv_heads(q, d);
	unsigned reads = e->reads, gpu_reads = e->gpu_reads;

	memset(out, 0, sizeof(*out));
	/* FlashInfer's tensor-core plan reads no occupancy figure (its
	 * num_blocks_per_sm is PrefillPlan's constant 2: flashinfer.h) */
	if (id == ENGINES_FLASHINFER && q->tensor_cores) {
		reads = FLASHINFER_TC_READS;
		gpu_reads = FLASHINFER_TC_GPU_READS;
	}
	/* asked for in this order: what the query alone can give, then what
	 * the catalog's model would have, then what only a running GPU knows */
	/* a mixed batch says each sequence's length itself */
	unsigned asks = reads & ~gpu_reads;

	if (q->seq_lens.n > 0) {
		asks &= ~(unsigned)ENGINE_IN_SEQ_LEN;
	}
	if (need_given(id, q, asks, p) != 0) {
		return -1;
	}
	if ((reads & ENGINE_IN_NUM_KV_HEADS) && kv == 0) {
		return missing(id, VOCAB_M_NUM_KV_HEADS,
			       d->model != NULL ? "the catalog's model does not say it"
						: "num_q_heads was given without a model",
			       p);
	}
	if ((reads & ENGINE_IN_HEAD_DIM) && d->head_dim == 0) {
		return missing(id, VOCAB_M_HEAD_DIM,
			       d->model != NULL ? "the catalog's model does not say it"
						: "num_q_heads was given without a model",
			       p);
	}
	if (need_given(id, q, gpu_reads, p) != 0) {
		return -1;
	}
	/* the decision's (DECISION rows), the model's (MODEL), the caller's
	 * (ARG); then every row the query gives (QUERY), from the table */
	out->sm_count = d->sm_count;
	out->num_seqs = d->shape.num_seqs;
	out->num_q_heads = d->num_q_heads;
	out->num_kv_heads = kv;
	out->head_dim = d->head_dim;
	out->num_splits = num_splits;
	ENGINE_INPUTS(SHAPE_ROW, ~)
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
	n += (size_t)d->by_seq_n * 11; /* num_splits_by_seq: "4294967295," each */
	return n + ENGINE_TERMS_MAX * (ENGINES_TERM_NAME_MAX + 24);
}

/* An engine-only input's value: a count, or null for none given where
 * the row has no default; a flag. */
static char *put_U32(char *p, uint32_t v, uint32_t dflt)
{
	if (v == 0 && dflt == 0) {
		LIT(p, "null");
		return p;
	}
	return decimal_put_u64(p, v);
}

static char *put_BOOL(char *p, bool v, uint32_t dflt)
{
	(void)dflt;
	if (v) {
		LIT(p, "true");
	} else {
		LIT(p, "false");
	}
	return p;
}

/* Each member of VOCAB_ENGINE_MEMBERS (vocab.h), in its order: a literal
 * its key and no writer call (a batch of them was 2.7 times the seed's
 * through jsonw). The engine-only inputs are PUT_INPUT, one a row. */
#define PUT(m) PUT_##m
#define PUT_INPUT(e, name, kind, bounds)                              \
	LIT(p, ",\"" #name "\":");                                     \
	p = put_##kind(p, s->name, ENGINE_BOUND_DEFAULT(bounds));
/* a setting of a port's path (OPTION): said where set and read */
#define PUT_INPUT_OPTION(e, name, kind, bounds)                                   \
	if (s->name && (engines[id].reads & ENGINE_IN_##e)) {                     \
		PUT_INPUT(e, name, kind, bounds)                                  \
	}
#define PUT_ENGINE                          \
	LIT(p, "{" VOCAB_KEY(ENGINE));      \
	p = put_name(p, name, strlen(name));
#define PUT_TARGET                                                  \
	LIT(p, VOCAB_NEXT_KEY(TARGET));                             \
	p = put_name(p, d->target ? d->target->names.name : NULL,   \
		     d->target ? d->target->names.name_len : 0);
#define PUT_MODEL                                                 \
	LIT(p, VOCAB_NEXT_KEY(MODEL));                            \
	p = put_name(p, d->model ? d->model->names.name : NULL,   \
		     d->model ? d->model->names.name_len : 0);
#define PUT_COUNT(m, v)                   \
	LIT(p, VOCAB_NEXT_KEY(m));        \
	p = decimal_put_u64(p, (v));
#define PUT_SM_COUNT PUT_COUNT(SM_COUNT, s->sm_count)
#define PUT_NUM_Q_HEADS PUT_COUNT(NUM_Q_HEADS, s->num_q_heads)
#define PUT_NUM_KV_HEADS PUT_COUNT(NUM_KV_HEADS, s->num_kv_heads)
#define PUT_HEAD_DIM PUT_COUNT(HEAD_DIM, s->head_dim)
#define PUT_NUM_SEQS PUT_COUNT(NUM_SEQS, s->num_seqs)
#define PUT_NUM_SPLITS PUT_COUNT(NUM_SPLITS, a->num_splits)
#define PUT_NUM_SPLITS_BOUND PUT_COUNT(NUM_SPLITS_BOUND, a->num_splits_bound)
/* a mixed batch's (seq_lens): each sequence's count, in its order */
#define PUT_NUM_SPLITS_BY_SEQ                                             \
	if (d->by_seq_n > 0 && by_seq != NULL) {                          \
		LIT(p, VOCAB_NEXT_KEY(NUM_SPLITS_BY_SEQ) "[");            \
		for (uint32_t i = 0; i < d->by_seq_n; i++) {              \
			if (i > 0) {                                      \
				*p++ = ',';                               \
			}                                                 \
			p = decimal_put_u64(p, by_seq[i]);                \
		}                                                         \
		*p++ = ']';                                               \
	}
#define PUT_WORKSPACE_BYTES PUT_COUNT(WORKSPACE_BYTES, a->workspace_bytes)
#define PUT_TERMS                                                                 \
	LIT(p, VOCAB_NEXT_KEY(TERMS) "{");                                        \
	for (unsigned i = 0; i < a->n_terms && i < ENGINE_TERMS_MAX; i++) {       \
		if (i > 0) {                                                      \
			*p++ = ',';                                               \
		}                                                                 \
		p = put_term(p, a->terms[i].name);                                \
		p = decimal_put_u64(p, a->terms[i].value);                        \
	}                                                                         \
	*p++ = '}';
/* every digest is CATALOG_DIGEST_LEN bytes, a catalog's name plain */
#define PUT_CATALOG                         \
	LIT(p, VOCAB_NEXT_KEY(CATALOG));    \
	p = put_name(p, cat->digest, CATALOG_DIGEST_LEN);
#define PUT_CATALOG_NAME                         \
	LIT(p, VOCAB_NEXT_KEY(CATALOG_NAME));    \
	p = put_name(p, cat->name, cat->name_len);

/* The answer in place. */
static size_t write_answer(char *out, enum engines_id id, const struct decision *d,
			   const struct engine_shape *s, const struct engine_answer *a,
			   const uint32_t *by_seq, const struct catalog *cat)
{
	char *p = out;
	const char *name = engines[id].name;

	VOCAB_ENGINE_MEMBERS(PUT, PUT_INPUT)
	*p++ = '}';
	return (size_t)(p - out);
}

void engines_write(struct jsonw *w, enum engines_id id, const struct decision *d,
		   const struct engine_shape *s, const struct engine_answer *a,
		   const uint32_t *by_seq, const struct catalog *cat)
{
	char *at = jsonw_raw_room(w, answer_bound(d, cat));

	if (at != NULL) {
		jsonw_raw_done(w, write_answer(at, id, d, s, a, by_seq, cat));
	}
}

const char *engines_path_name(enum engines_path path)
{
	static const char *const names[ENGINES_PATH_COUNT] = {"uniform", "mixed", "tensor_cores"};

	return (unsigned)path < ENGINES_PATH_COUNT ? names[path] : "uniform";
}

void engines_count(const struct api_context *ctx, enum engines_id id, enum engines_path path,
		   const struct engine_answer *a)
{
	if (ctx->on_engine != NULL) {
		ctx->on_engine(ctx->on_decision_cls, (int)id, (int)path, a->status == ENGINE_OK);
	}
}

int engines_decide(const struct api_context *ctx, const struct query *q, const struct decision *d,
		   bool fields, enum engines_id *id, struct engine_shape *s,
		   struct engine_answer *a, uint32_t *by_seq, struct problem *p)
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
	*a = engines_launch_query(*id, q, s, by_seq);
	engines_count(ctx, *id,
		      s->tensor_cores && (engines[*id].reads & ENGINE_IN_TENSOR_CORES)
			      ? ENGINES_PATH_TENSOR_CORES
		      : q->seq_lens.n > 0 ? ENGINES_PATH_MIXED
					  : ENGINES_PATH_UNIFORM,
		      a);
	return a->status == ENGINE_OK ? 0 : engines_refused(*id, a, p);
}

int engines_answer(const struct api_context *ctx, struct jsonw *w, const struct query *q,
		   const struct decision *d, const struct catalog *cat, bool fields,
		   struct problem *p)
{
	struct engine_shape s;
	struct engine_answer a;
	enum engines_id id;
	uint32_t by_seq[ENGINE_MAX_SEQS];
	int rc = engines_decide(ctx, q, d, fields, &id, &s, &a, by_seq, p);

	if (rc == 0) {
		engines_write(w, id, d, &s, &a, by_seq, cat);
	}
	return rc;
}

struct engine_answer engines_launch(enum engines_id id, const struct engine_shape *s)
{
	return launches[id](s);
}

/* The inputs' names, in the table's (and so the bits') order. */
#define NAME_ROW(a, e, name, kind, from, bounds, zero, about) [ENGINE_INDEX_##e] = #name,
static const char *const input_names[ENGINE_INPUTS_COUNT] = {ENGINE_INPUTS(NAME_ROW, ~)};

void engines_write_inputs(struct jsonw *w, unsigned bits)
{
	jsonw_array_begin(w);
	for (unsigned i = 0; i < ENGINE_INPUTS_COUNT; i++) {
		if (bits & (1u << i)) {
			jsonw_str(w, input_names[i]);
		}
	}
	jsonw_array_end(w);
}

/* The inputs a query gives only for the other engines (the MODEL and
 * QUERY rows), as GET /v1/engines describes them. */
#define PARAM_U32 ENGINES_PARAM_U32
#define PARAM_BOOL ENGINES_PARAM_BOOL
#define PARAM(e, name, kind, bounds, about, given, option)                            \
	{#name, about, PARAM_##kind, ENGINE_BOUND_MIN(bounds), ENGINE_BOUND_MAX(bounds), \
	 ENGINE_BOUND_DEFAULT(bounds), ENGINE_IN_##e, given, option,                     \
	 offsetof(struct query, name)},
#define PARAM_QUERY(e, name, kind, bounds, about) PARAM(e, name, kind, bounds, about, true, false)
#define PARAM_MODEL(e, name, kind, bounds, about) PARAM(e, name, kind, bounds, about, false, false)
#define PARAM_OPTION(e, name, kind, bounds, about) PARAM(e, name, kind, bounds, about, true, true)
#define PARAM_DECISION(e, name, kind, bounds, about)
#define PARAM_ARG(e, name, kind, bounds, about)
#define PARAM_ROW(a, e, name, kind, from, bounds, zero, about) \
	PARAM_##from(e, name, kind, bounds, about)
static const struct engines_param params[] = {ENGINE_INPUTS(PARAM_ROW, ~)};

const struct engines_param *engines_params(size_t *n)
{
	*n = sizeof(params) / sizeof(params[0]);
	return params;
}

void engines_write_given(struct jsonw *w, const struct engines_param *x, const struct query *q)
{
	const char *member = (const char *)q + x->offset;

	if (x->kind == ENGINES_PARAM_BOOL) {
		jsonw_kv_bool(w, x->name, *(const bool *)(const void *)member);
		return;
	}
	const struct query_u32 *u = (const struct query_u32 *)(const void *)member;

	jsonw_kv_u64_or_null(w, x->name, u->set ? u->v : x->dflt);
}
