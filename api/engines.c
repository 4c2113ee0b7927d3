/* SPDX-License-Identifier: AGPL-3.0-only */
#include "engines.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "decimal.h"
#include "fa2.h"
#include "fa3.h"
#include "flashinfer.h"
#include "flashmla.h"
#include "names.h"
#include "reserve.h"
#include "sglang.h"
#include "trtllm.h"
#include "vllm.h"
#include "vllm_triton.h"
#include "vllm_v1.h"
#include "vocab.h"

/* What the seed's answer reads: the policy's inputs and the workspace's,
 * the rows of engine_inputs.h its decision resolves (DECISION). */
#define SEED_READ_DECISION(e) | ENGINE_IN_##e
#define SEED_READ_MODEL(e)
#define SEED_READ_QUERY(e)
#define SEED_READ_OPTION(e)
#define SEED_READ_ARG(e)
#define SEED_READ_ROW(a, e, name, kind, from, bounds, zero, about) SEED_READ_##from(e)
#define SEED_READS (0u ENGINE_INPUTS(SEED_READ_ROW, ~))

/* An engine from its port's header, the settings of its own it reads
 * (engine_inputs.h's OPTION rows, which its options struct carries) and
 * its page_size where the query gives none. */
#define PORT(id, prefix, name, options, page, note)                                          \
	[id] = {name,          prefix##_TITLE,     prefix##_REPO,                              \
		prefix##_COMMIT, prefix##_FILES,   prefix##_FUNCTIONS,                        \
		prefix##_READS | (options), prefix##_GPU_READS, page, note}

/* vLLM V1's settings (struct vllm_v1_options; Triton's are the first
 * three after compute_capability) */
#define VLLM_V1_OPTIONS                                                                     \
	(ENGINE_IN_COMPUTE_CAPABILITY | ENGINE_IN_CUDAGRAPH_MODE | ENGINE_IN_MAX_CAPTURE_SIZE | \
	 ENGINE_IN_BATCH_INVARIANT | ENGINE_IN_MAX_MODEL_LEN)
#define VLLM_TRITON_OPTIONS \
	(ENGINE_IN_CUDAGRAPH_MODE | ENGINE_IN_MAX_CAPTURE_SIZE | ENGINE_IN_BATCH_INVARIANT)

static const struct engines_info engines[ENGINES_COUNT] = {
	[ENGINES_SEED] = {"atlas",
			  "Atlas's decode split (atlas_kernels' attn_splitk.rs, the seed: auto, "
			  "legacy or pinned by ATLAS_ATTN_DECODE_SPLITK)",
			  NULL, "", "attn_splitk.rs",
			  "resolve_policy num_splits auto_splits legacy_splits workspace_slots",
			  SEED_READS, 0, 0, NULL},
	PORT(ENGINES_FA2, FA2, "fa2", 0u, 256, NULL),
	PORT(ENGINES_FA3, FA3, "fa3", 0u, 16, NULL),
	PORT(ENGINES_FLASHINFER, FLASHINFER, "flashinfer", 0u, 16, NULL),
	[ENGINES_VLLM] = {"vllm",
			  VLLM_V1_TITLE ", its FlashAttention from " VLLM_V1_FA_REPO
				      " (the second commit)",
			  VLLM_V1_REPO, VLLM_V1_COMMIT " " VLLM_V1_FA_COMMIT, VLLM_V1_FILES,
			  VLLM_V1_FUNCTIONS, VLLM_V1_READS | VLLM_V1_OPTIONS, VLLM_V1_GPU_READS, 16,
			  NULL},
	PORT(ENGINES_VLLM_V0, VLLM, "vllm-v0", 0u, 16,
	     "vllm-v0 is vLLM V0's paged attention (paged_attn.py, paged_attention_v2.cu), "
	     "removed from vLLM since: no V1 backend runs it. engine=vllm answers vLLM V1"),
	PORT(ENGINES_VLLM_TRITON, VLLM_TRITON, "vllm-triton", VLLM_TRITON_OPTIONS, 16, NULL),
	/* SGLang's CUDA-graph path needs the captured batch sizes, which the
	 * API does not take yet: its answers are the eager path's */
	[ENGINES_SGLANG] = {"sglang", SGLANG_TITLE, SGLANG_REPO, SGLANG_COMMIT, SGLANG_FILES,
			    SGLANG_FUNCTIONS,
			    (SGLANG_READS & ~(unsigned)ENGINE_IN_CUDA_GRAPH) | ENGINE_IN_MAX_KV_SPLITS |
				    ENGINE_IN_DETERMINISTIC | ENGINE_IN_MAX_MODEL_LEN,
			    SGLANG_GPU_READS, 1, NULL},
	PORT(ENGINES_TRTLLM, TRTLLM, "trtllm", ENGINE_IN_DETERMINISTIC, 32, NULL),
	PORT(ENGINES_FLASHMLA, FLASHMLA, "flashmla", ENGINE_IN_HEAD_DIM_V, 64, NULL),
};

/* The launch functions apart from the table's strings, so the table reads
 * as the headers' macros: a port with a uniform launch of its own; the
 * others launch num_seqs sequences of seq_len as a batch. */
static struct engine_answer (*const launches[ENGINES_COUNT])(const struct engine_shape *) = {
	[ENGINES_FA2] = fa2_launch,
	[ENGINES_FA3] = fa3_launch,
	[ENGINES_FLASHINFER] = flashinfer_launch,
	[ENGINES_VLLM_V0] = vllm_launch,
};

/* Each port's settings of its own, from the shape's OPTION rows: the one
 * place they are built, for its batch launch and for its reserve. */
static struct flashinfer_options flashinfer_opts(const struct engine_shape *s)
{
	return (struct flashinfer_options){s->tensor_cores, s->fixed_split_size,
					   s->disable_split_kv};
}

static struct vllm_v1_options vllm_v1_opts(const struct engine_shape *s)
{
	return (struct vllm_v1_options){s->compute_capability,
					(enum vllm_v1_cudagraph_mode)s->cudagraph_mode,
					s->max_capture_size, s->batch_invariant, s->max_model_len};
}

static struct vllm_triton_options vllm_triton_opts(const struct engine_shape *s)
{
	return (struct vllm_triton_options){(enum vllm_triton_cudagraph_mode)s->cudagraph_mode,
					    s->max_capture_size, s->batch_invariant};
}

static struct sglang_options sglang_opts(const struct engine_shape *s)
{
	return (struct sglang_options){.max_kv_splits = s->max_kv_splits != 0 ? s->max_kv_splits
									      : 8,
				       .deterministic = s->deterministic,
				       .max_model_len = s->max_model_len};
}

/* SGLang's eager path (engines[]'s note): cuda_graph off whatever the query */
static struct engine_shape sglang_eager(const struct engine_shape *s)
{
	struct engine_shape eager = *s;

	eager.cuda_graph = false;
	return eager;
}

static struct trtllm_options trtllm_opts(const struct engine_shape *s)
{
	return (struct trtllm_options){s->deterministic};
}

static struct flashmla_options flashmla_opts(const struct engine_shape *s)
{
	return (struct flashmla_options){s->head_dim_v, 0};
}

/* Each port over a mixed batch (engine.h's <port>_launch_batch), a port
 * with settings of its own given them. */
static struct engine_answer flashinfer_batch(const struct engine_shape *s,
					     const struct engine_batch *b, uint32_t *by_seq)
{
	const struct flashinfer_options o = flashinfer_opts(s);

	return flashinfer_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer vllm_v1_batch(const struct engine_shape *s,
					  const struct engine_batch *b, uint32_t *by_seq)
{
	const struct vllm_v1_options o = vllm_v1_opts(s);

	return vllm_v1_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer vllm_triton_batch(const struct engine_shape *s,
					      const struct engine_batch *b, uint32_t *by_seq)
{
	const struct vllm_triton_options o = vllm_triton_opts(s);

	return vllm_triton_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer sglang_batch(const struct engine_shape *s,
					 const struct engine_batch *b, uint32_t *by_seq)
{
	const struct engine_shape eager = sglang_eager(s);
	const struct sglang_options o = sglang_opts(s);

	return sglang_launch_batch(&eager, b, &o, by_seq);
}

static struct engine_answer trtllm_batch(const struct engine_shape *s,
					 const struct engine_batch *b, uint32_t *by_seq)
{
	const struct trtllm_options o = trtllm_opts(s);

	return trtllm_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer flashmla_batch(const struct engine_shape *s,
					   const struct engine_batch *b, uint32_t *by_seq)
{
	const struct flashmla_options o = flashmla_opts(s);

	return flashmla_launch_batch(s, b, &o, by_seq);
}

static struct engine_answer (*const batch_launches[ENGINES_COUNT])(const struct engine_shape *,
								   const struct engine_batch *,
								   uint32_t *) = {
	[ENGINES_FA2] = fa2_launch_batch,
	[ENGINES_FA3] = fa3_launch_batch,
	[ENGINES_FLASHINFER] = flashinfer_batch,
	[ENGINES_VLLM] = vllm_v1_batch,
	[ENGINES_VLLM_V0] = vllm_launch_batch,
	[ENGINES_VLLM_TRITON] = vllm_triton_batch,
	[ENGINES_SGLANG] = sglang_batch,
	[ENGINES_TRTLLM] = trtllm_batch,
	[ENGINES_FLASHMLA] = flashmla_batch,
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
#define SET_BIT_CHOICE(v) ((v) != 0)
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

/* num_seqs sequences of seq_len through the port's batch path: a port
 * with no uniform launch of its own, or a setting only that path reads */
static struct engine_answer uniform_batch(enum engines_id id, const struct engine_shape *s,
					  uint32_t *by_seq)
{
	uint32_t lens[ENGINE_MAX_SEQS], counts[ENGINE_MAX_SEQS];
	struct engine_batch b = {lens, s->num_seqs};

	if (by_seq == NULL) {
		by_seq = counts; /* the ports write each count; the caller wants none */
	}
	if (s->num_seqs > ENGINE_MAX_SEQS) {
		return engine_refused(launches[id] == NULL
					      ? "this engine's batch holds at most 4096 sequences "
						"(ENGINE_MAX_SEQS): give fewer"
					      : "with a setting of the mixed-batch path (tensor_cores, "
						"fixed_split_size, disable_split_kv) a batch holds at "
						"most 4096 sequences: give fewer",
				      VOCAB_M_NUM_SEQS);
	}
	for (uint32_t i = 0; i < s->num_seqs; i++) {
		lens[i] = s->seq_len;
	}
	return engines_launch_batch(id, s, &b, by_seq);
}

/* num_seqs sequences of seq_len: the port's own uniform launch, unless
 * it has none or a setting only its batch path reads is set */
static struct engine_answer uniform_launch(enum engines_id id, const struct engine_shape *s,
					   uint32_t *by_seq)
{
	unsigned set = 0u ENGINE_INPUTS(SET_BIT_ROW, ~);

	if (launches[id] != NULL && (set & BATCH_ONLY_BITS & engines[id].reads) == 0) {
		return launches[id](s);
	}
	return uniform_batch(id, s, by_seq);
}

struct engine_answer engines_launch_query(enum engines_id id, const struct query *q,
					  const struct engine_shape *s, uint32_t *by_seq)
{
	uint32_t lens[ENGINE_MAX_SEQS];
	struct engine_batch b = {lens, 0};

	if (q->seq_lens.n > 0) {
		b.num_seqs = (uint32_t)query_list_get(&q->seq_lens, lens, ENGINE_MAX_SEQS);
		return engines_launch_batch(id, s, &b, by_seq);
	}
	return uniform_launch(id, s, by_seq);
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
	if (names_equal(q->engine.p, q->engine.len, ENGINES_SEED_ALIAS)) {
		return 0;
	}
	names_near_init(&near, q->engine.p, q->engine.len, NAMES_SAME);
	for (int e = 0; e < ENGINES_COUNT; e++) {
		names_near_offer(&near, engines[e].name);
	}
	names_near_offer(&near, ENGINES_SEED_ALIAS);
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
/* A CHOICE is given as a NAME is (vocab.h's VOCAB_KIND_CHOICE). */
#define QUERY_GIVEN_CHOICE QUERY_GIVEN_NAME
/* Whether an absent input is one to ask for: a count with no default. */
#define SHAPE_ASKS_U32(dflt) ((dflt) == 0)
#define SHAPE_ASKS_BOOL(dflt) false
#define SHAPE_ASKS_CHOICE(dflt) false

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

#define SHAPE_SET_U32(e, name, bounds) \
	out->name = SHAPE_VALUE_U32(q->name, ENGINE_BOUND_DEFAULT(bounds));
#define SHAPE_SET_BOOL(e, name, bounds) \
	out->name = SHAPE_VALUE_BOOL(q->name, ENGINE_BOUND_DEFAULT(bounds));
#define SHAPE_SET_CHOICE(e, name, bounds)                                            \
	if (choice_index(&q->name, ENGINE_INDEX_##e, &out->name, p) != 0) {          \
		return -1;                                                           \
	}
#define SHAPE_QUERY(e, name, kind, bounds) SHAPE_SET_##kind(e, name, bounds)
#define SHAPE_MODEL(e, name, kind, bounds)
#define SHAPE_OPTION SHAPE_QUERY
#define SHAPE_DECISION(e, name, kind, bounds)
#define SHAPE_ARG(e, name, kind, bounds)
#define SHAPE_ROW(a, e, name, kind, from, bounds, zero, about) SHAPE_##from(e, name, kind, bounds)

unsigned engines_reads(enum engines_id id, const struct query *q)
{
	/* FlashInfer's tensor-core plan reads no occupancy figure (its
	 * num_blocks_per_sm is PrefillPlan's constant 2: flashinfer.h) */
	if (id == ENGINES_FLASHINFER && q->tensor_cores) {
		return FLASHINFER_TC_READS;
	}
	return engines[id].reads;
}

/* The bit of each engine-only input the query gives (QUERY_GIVEN). */
#define GIVEN_BIT(e, name, kind, bounds) | (QUERY_GIVEN_##kind(q->name) ? ENGINE_IN_##e : 0u)
#define GIVEN_QUERY GIVEN_BIT
#define GIVEN_MODEL GIVEN_QUERY
#define GIVEN_OPTION GIVEN_QUERY
#define GIVEN_DECISION(e, name, kind, bounds)
#define GIVEN_ARG(e, name, kind, bounds)
#define GIVEN_ROW(a, e, name, kind, from, bounds, zero, about) GIVEN_##from(e, name, kind, bounds)

unsigned engines_unread(enum engines_id id, const struct query *q)
{
	unsigned given = 0u ENGINE_INPUTS(GIVEN_ROW, ~);

	return given & ~engines_reads(id, q);
}

int engines_shape(enum engines_id id, const struct query *q, const struct decision *d,
		  uint32_t num_splits, struct engine_shape *out, struct problem *p)
{
	const struct engines_info *e = &engines[id];
	uint32_t kv = engines_kv_heads(q, d);
	unsigned reads = engines_reads(id, q);
	unsigned gpu_reads = id == ENGINES_FLASHINFER && q->tensor_cores ? FLASHINFER_TC_GPU_READS
									 : e->gpu_reads;

	memset(out, 0, sizeof(*out));
	/* asked for in this order: what the query alone can give, then what
	 * the catalog's model would have, then what only a running GPU knows;
	 * a mixed batch says each sequence's length itself, and page_size is
	 * the engine's own where absent */
	unsigned asks = reads & ~gpu_reads & ~(unsigned)ENGINE_IN_PAGE_SIZE;

	if (q->seq_lens.n > 0 || q->reserve) {
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
	if (!q->page_size.set) {
		out->page_size = e->page_size;
	}
	/* the catalog's, where the query does not say */
	if (!q->compute_capability.set && d->target != NULL) {
		out->compute_capability = d->target->compute_capability;
	}
	if (!q->max_model_len.set && d->model != NULL) {
		out->max_model_len = d->model->max_model_len;
	}
	if (out->compute_capability > ENGINES_MAX_COMPUTE_CAPABILITY) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_COMPUTE_CAPABILITY, NULL,
				   "compute_capability is major * 10 + minor (90 for 9.0, 121 for "
				   "12.1): at most %u",
				   ENGINES_MAX_COMPUTE_CAPABILITY);
	}
	if ((reads & ENGINE_IN_COMPUTE_CAPABILITY) && out->compute_capability == 0) {
		return missing(id, VOCAB_M_COMPUTE_CAPABILITY,
			       d->target != NULL ? "the catalog's target does not say it (90 for 9.0)"
						 : "sm_count was given without a target (90 for 9.0)",
			       p);
	}
	return 0;
}

int engines_refused(enum engines_id id, const struct engine_answer *a, struct problem *p)
{
	return problem_set(p, PROBLEM_UNSUPPORTED_SHAPE, a->refused_input, NULL, "%s: %s",
			   engines[id].name, a->refused);
}

/* The inputs' names, in the table's (and so the bits') order. */
#define NAME_ROW(a, e, name, kind, from, bounds, zero, about) [ENGINE_INDEX_##e] = #name,
static const char *const input_names[ENGINE_INPUTS_COUNT] = {ENGINE_INPUTS(NAME_ROW, ~)};

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
	/* the warnings: the note, and one for each input at most */
	n += 2 * 256 + ENGINE_INPUTS_COUNT * (ENGINES_WARNING_MAX + 64);
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

/* a CHOICE's word (static, plain) */
static char *put_word(char *p, const char *word)
{
	size_t len = strlen(word);

	*p++ = '"';
	memcpy(p, word, len);
	p += len;
	*p++ = '"';
	return p;
}

/* A warning's text: plain, but for the quotes it may hold. */
static char *put_text(char *p, const char *s)
{
	*p++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			*p++ = '\\';
		}
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/* The warning of input i (enum engine_input_index) given to engine id,
 * which does not read it. */
static void unread_warning(char *out, size_t cap, enum engines_id id, unsigned i)
{
	snprintf(out, cap, "%s is not read by %s: its answer is the same without it",
		 input_names[i], engines[id].name);
}

/* The warnings of an engine's answer: its note, and each input the query
 * gives that the engine does not read (as the seed's answer warns of its
 * own). Written only where there is one, so an answer with none is the
 * bytes it was. */
static char *put_warnings(char *p, enum engines_id id, unsigned unread)
{
	bool first = true;

	if (engines[id].note == NULL && unread == 0) {
		return p;
	}
	LIT(p, VOCAB_NEXT_KEY(WARNINGS) "[");
	if (engines[id].note != NULL) {
		p = put_text(p, engines[id].note);
		first = false;
	}
	for (unsigned i = 0; i < ENGINE_INPUTS_COUNT; i++) {
		if (unread & (1u << i)) {
			if (!first) {
				*p++ = ',';
			}
			first = false;
			char text[ENGINES_WARNING_MAX + 64];

			unread_warning(text, sizeof(text), id, i);
			p = put_text(p, text);
		}
	}
	*p++ = ']';
	return p;
}

/* Each member of VOCAB_ENGINE_MEMBERS (vocab.h), in its order: a literal
 * its key and no writer call (a batch of them was 2.7 times the seed's
 * through jsonw). The engine-only inputs are PUT_INPUT, one a row. */
#define PUT(m) PUT_##m
#define PUT_INPUT(e, name, kind, bounds)                              \
	LIT(p, ",\"" #name "\":");                                     \
	PUT_VALUE_##kind(e, name, bounds)
#define PUT_VALUE_U32(e, name, bounds) p = put_U32(p, s->name, ENGINE_BOUND_DEFAULT(bounds));
#define PUT_VALUE_BOOL(e, name, bounds) p = put_BOOL(p, s->name, 0);
#define PUT_VALUE_CHOICE(e, name, bounds) p = put_word(p, choice_word(ENGINE_INDEX_##e, s->name));
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
#define PUT_WARNINGS p = put_warnings(p, id, unread);
#define PUT_CATALOG                         \
	LIT(p, VOCAB_NEXT_KEY(CATALOG));    \
	p = put_name(p, cat->digest, CATALOG_DIGEST_LEN);
#define PUT_CATALOG_NAME                         \
	LIT(p, VOCAB_NEXT_KEY(CATALOG_NAME));    \
	p = put_name(p, cat->name, cat->name_len);

/* The answer in place. */
static size_t write_answer(char *out, enum engines_id id, const struct query *q,
			   const struct decision *d, const struct engine_shape *s,
			   const struct engine_answer *a, const uint32_t *by_seq,
			   const struct catalog *cat)
{
	char *p = out;
	const char *name = engines[id].name;
	unsigned unread = engines_unread(id, q);

	VOCAB_ENGINE_MEMBERS(PUT, PUT_INPUT)
	*p++ = '}';
	return (size_t)(p - out);
}

void engines_write(struct jsonw *w, enum engines_id id, const struct query *q,
		   const struct decision *d, const struct engine_shape *s,
		   const struct engine_answer *a, const uint32_t *by_seq,
		   const struct catalog *cat)
{
	char *at = jsonw_raw_room(w, answer_bound(d, cat));

	if (at != NULL) {
		jsonw_raw_done(w, write_answer(at, id, q, d, s, a, by_seq, cat));
	}
}

const char *engines_path_name(enum engines_path path)
{
	static const char *const names[ENGINES_PATH_COUNT] = {"uniform", "mixed", "tensor_cores",
							       "reserve"};

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
	/* engines_answer answers a reserve; what asks here (OFREP) wants a launch */
	if (q->reserve) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_RESERVE, NULL,
				   "reserve answers with a batch and its bytes (GET /v1/reserve, or a "
				   "query of POST /v1/splits), not as a flag");
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

/* ---- the reserve: the worst case over every batch of a serve ---- */

/* Each port's reserve (policy/reserve.h), its options from the shape as
 * its batch launch takes them (batch_launches above). */
struct reserve_answer engines_reserve(enum engines_id id, const struct engine_shape *s,
				      uint32_t max_batch_size, uint32_t max_model_len,
				      uint32_t *witness, uint32_t *by_seq)
{
	const struct flashinfer_options fi = flashinfer_opts(s);
	const struct vllm_v1_options v1 = vllm_v1_opts(s);
	const struct vllm_triton_options vt = vllm_triton_opts(s);
	const struct sglang_options sg = sglang_opts(s);
	const struct trtllm_options tr = trtllm_opts(s);
	const struct flashmla_options fm = flashmla_opts(s);
	const struct engine_shape eager = sglang_eager(s);

	switch (id) {
	case ENGINES_FA2:
		return reserve_worst(RESERVE_FA2, s, NULL, max_batch_size, max_model_len, witness,
				     by_seq);
	case ENGINES_FA3:
		return reserve_worst(RESERVE_FA3, s, NULL, max_batch_size, max_model_len, witness,
				     by_seq);
	case ENGINES_FLASHINFER:
		return reserve_worst(RESERVE_FLASHINFER, s, &fi, max_batch_size, max_model_len,
				     witness, by_seq);
	case ENGINES_VLLM:
		return reserve_worst(RESERVE_VLLM_V1, s, &v1, max_batch_size, max_model_len,
				     witness, by_seq);
	case ENGINES_VLLM_V0:
		return reserve_worst(RESERVE_VLLM, s, NULL, max_batch_size, max_model_len, witness,
				     by_seq);
	case ENGINES_VLLM_TRITON:
		return reserve_worst(RESERVE_VLLM_TRITON, s, &vt, max_batch_size, max_model_len,
				     witness, by_seq);
	case ENGINES_SGLANG:
		return reserve_worst(RESERVE_SGLANG, &eager, &sg, max_batch_size, max_model_len,
				     witness, by_seq);
	case ENGINES_TRTLLM:
		return reserve_worst(RESERVE_TRTLLM, s, &tr, max_batch_size, max_model_len,
				     witness, by_seq);
	case ENGINES_FLASHMLA:
		return reserve_worst(RESERVE_FLASHMLA, s, &fm, max_batch_size, max_model_len,
				     witness, by_seq);
	default:
		break;
	}
	return reserve_worst(RESERVE_ENGINES, s, NULL, max_batch_size, max_model_len, witness,
			     by_seq);
}

int engines_reserve_bounds(enum engines_id id, const struct query *q, const struct decision *d,
			   uint32_t max_batch_size, uint32_t max_model_len, struct problem *p)
{
	if (max_batch_size == 0 || max_batch_size > ENGINE_MAX_SEQS) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_MAX_BATCH_SIZE, NULL,
				   "a reserve's max_batch_size is 1 to %u sequences (ENGINE_MAX_SEQS, "
				   "the most a batch holds here)",
				   ENGINE_MAX_SEQS);
	}
	if (max_model_len == 0) {
		return missing(id, VOCAB_M_MAX_MODEL_LEN,
			       d->model != NULL ? "the serve's context length, which the catalog's "
						  "model does not say"
						: "the serve's context length",
			       p);
	}
	if (max_model_len > ENGINE_MAX_SEQ_LEN) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_MAX_MODEL_LEN, NULL,
				   "max_model_len is at most %u tokens: the engines keep lengths in "
				   "int32",
				   ENGINE_MAX_SEQ_LEN);
	}
	if (q->seq_lens.n > 0) {
		uint32_t lens[ENGINE_MAX_SEQS];
		size_t n = query_list_get(&q->seq_lens, lens, ENGINE_MAX_SEQS);

		for (size_t i = 0; i < n; i++) {
			if (lens[i] > max_model_len) {
				return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_MAX_MODEL_LEN,
						   NULL,
						   "max_model_len %u is shorter than sequence %zu of "
						   "seq_lens (%u tokens): the serve could not hold it",
						   max_model_len, i, lens[i]);
			}
		}
		if (n > max_batch_size) {
			return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_MAX_BATCH_SIZE, NULL,
					   "max_batch_size %u is fewer than the %zu sequences of "
					   "seq_lens: the serve could not batch them",
					   max_batch_size, n);
		}
	}
	return 0;
}

/* A shape input the engine reads, as its answer says it. */
#define RESERVE_PUT_IF(e, name, kind)                                                    \
	if ((reads & ENGINE_IN_##e) && ENGINE_IN_##e != ENGINE_IN_SEQ_LEN &&             \
	    ENGINE_IN_##e != ENGINE_IN_MAX_MODEL_LEN) {                                   \
		RESERVE_VALUE_##kind(e, name)                                            \
	}
#define RESERVE_VALUE_U32(e, name) jsonw_kv_u64_or_null(w, #name, s->name);
#define RESERVE_VALUE_BOOL(e, name) jsonw_kv_bool(w, #name, s->name);
#define RESERVE_VALUE_CHOICE(e, name) \
	jsonw_kv_str(w, #name, choice_word(ENGINE_INDEX_##e, s->name));
#define RESERVE_ROW_QUERY(e, name, kind) RESERVE_PUT_IF(e, name, kind)
#define RESERVE_ROW_OPTION(e, name, kind) RESERVE_PUT_IF(e, name, kind)
#define RESERVE_ROW_MODEL(e, name, kind)
#define RESERVE_ROW_DECISION(e, name, kind)
#define RESERVE_ROW_ARG(e, name, kind)
#define RESERVE_ROW(a, e, name, kind, from, bounds, zero, about) RESERVE_ROW_##from(e, name, kind)

void engines_write_reserve(struct jsonw *w, enum engines_id id, const struct query *q,
			   const struct decision *d, const struct engine_shape *s,
			   const struct engine_reserve *r, const struct catalog *cat)
{
	unsigned reads = engines_reads(id, q), unread = engines_unread(id, q);
	const struct reserve_answer *a = &r->answer;

	jsonw_object_begin(w);
	jsonw_kv_str(w, VOCAB_M_ENGINE, engines[id].name);
	jsonw_kv_str_or_null(w, VOCAB_M_TARGET, d->target ? d->target->names.name : NULL);
	jsonw_kv_u64(w, VOCAB_M_SM_COUNT, s->sm_count);
	jsonw_kv_str_or_null(w, VOCAB_M_MODEL, d->model ? d->model->names.name : NULL);
	jsonw_kv_u64(w, VOCAB_M_NUM_Q_HEADS, s->num_q_heads);
	jsonw_kv_u64(w, VOCAB_M_NUM_KV_HEADS, s->num_kv_heads);
	jsonw_kv_u64(w, VOCAB_M_HEAD_DIM, s->head_dim);
	ENGINE_INPUTS(RESERVE_ROW, ~)
	jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, r->max_batch_size);
	jsonw_kv_u64(w, VOCAB_M_MAX_MODEL_LEN, r->max_model_len);
	jsonw_kv_u64(w, VOCAB_M_WORKSPACE_BYTES, a->workspace_bytes);
	jsonw_kv_str(w, "method", a->method_name);
	jsonw_kv_str(w, "basis", a->basis);
	jsonw_kv_str(w, "unit", a->unit);
	jsonw_kv_bool(w, "layers_multiply", a->layers_multiply);
	jsonw_kv_str(w, "layers", a->layers);
	jsonw_key(w, VOCAB_M_SEQ_LENS);
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < a->witness_len; i++) {
		jsonw_u64(w, r->witness[i]);
	}
	jsonw_array_end(w);
	jsonw_kv_u64(w, VOCAB_M_NUM_SPLITS, a->num_splits);
	jsonw_key(w, VOCAB_M_NUM_SPLITS_BY_SEQ);
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < a->witness_len; i++) {
		jsonw_u64(w, r->by_seq[i]);
	}
	jsonw_array_end(w);
	jsonw_kv_u64(w, VOCAB_M_NUM_SPLITS_BOUND, a->num_splits_bound);
	jsonw_kv_u64(w, "work", a->work);
	if (engines[id].note != NULL || unread != 0) {
		jsonw_key(w, VOCAB_M_WARNINGS);
		jsonw_array_begin(w);
		if (engines[id].note != NULL) {
			jsonw_str(w, engines[id].note);
		}
		for (unsigned i = 0; i < ENGINE_INPUTS_COUNT; i++) {
			if (unread & (1u << i)) {
				char text[ENGINES_WARNING_MAX + 64];

				unread_warning(text, sizeof(text), id, i);
				jsonw_str(w, text);
			}
		}
		jsonw_array_end(w);
	}
	if (cat != NULL) {
		jsonw_kv_str(w, VOCAB_M_CATALOG, cat->digest);
		jsonw_kv_str(w, VOCAB_M_CATALOG_NAME, cat->name);
	}
	jsonw_object_end(w);
}

int engines_reserve_query(enum engines_id id, const struct query *q, const struct decision *d,
			  uint32_t max_batch_size, struct engine_shape *s, struct engine_reserve *r,
			  struct problem *p)
{
	if (engines_shape(id, q, d, 0, s, p) != 0 ||
	    engines_reserve_bounds(id, q, d, max_batch_size, s->max_model_len, p) != 0) {
		return -1;
	}
	r->max_batch_size = max_batch_size;
	r->max_model_len = s->max_model_len;
	r->answer = engines_reserve(id, s, max_batch_size, s->max_model_len, r->witness, r->by_seq);
	if (r->answer.status != ENGINE_OK) {
		return problem_set(p, PROBLEM_UNSUPPORTED_SHAPE, r->answer.refused_input, NULL,
				   "%s: no reserve: %s", engines[id].name, r->answer.refused);
	}
	return 0;
}

/* A query with reserve: the engine's worst case over every batch of
 * max_batch_size sequences of max_model_len tokens at most. */
static int answer_reserve(const struct api_context *ctx, struct jsonw *w, const struct query *q,
			  const struct decision *d, const struct catalog *cat, bool fields,
			  struct problem *p)
{
	struct engine_shape s;
	struct engine_reserve *r;
	enum engines_id id;
	int rc;

	if (engines_find(q, &id, p) != 0) {
		return -1;
	}
	if (id == ENGINES_SEED) {
		return 1; /* the seed's answer is its arena, at max_rows */
	}
	if (fields) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, "fields", NULL,
				   "fields cuts the seed's answer; engine=%s answers whole",
				   engines[id].name);
	}
	if (q->seq_lens.n > 0) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, VOCAB_M_SEQ_LENS, NULL,
				   "reserve answers the worst of every batch within max_batch_size "
				   "and max_model_len; seq_lens names one batch: send one of them");
	}
	if (!q->max_batch_size.set) {
		return missing(id, VOCAB_M_MAX_BATCH_SIZE,
			       "the most sequences a decode batch of the serve holds", p);
	}
	r = malloc(sizeof(*r));
	if (r == NULL) {
		return problem_set(p, PROBLEM_INTERNAL, NULL, NULL, "out of memory");
	}
	rc = engines_reserve_query(id, q, d, q->max_batch_size.v, &s, r, p);
	struct engine_answer counted;

	engine_answer_init(&counted);
	counted.status = rc == 0 ? ENGINE_OK : ENGINE_REFUSED;
	engines_count(ctx, id, ENGINES_PATH_RESERVE, &counted);
	if (rc == 0) {
		engines_write_reserve(w, id, q, d, &s, r, cat);
	}
	free(r);
	return rc;
}

int engines_answer(const struct api_context *ctx, struct jsonw *w, const struct query *q,
		   const struct decision *d, const struct catalog *cat, bool fields,
		   struct problem *p)
{
	if (q->reserve) {
		return answer_reserve(ctx, w, q, d, cat, fields, p);
	}
	struct engine_shape s;
	struct engine_answer a;
	enum engines_id id;
	uint32_t by_seq[ENGINE_MAX_SEQS];
	int rc = engines_decide(ctx, q, d, fields, &id, &s, &a, by_seq, p);

	if (rc == 0) {
		engines_write(w, id, q, d, &s, &a, by_seq, cat);
	}
	return rc;
}

struct engine_answer engines_launch(enum engines_id id, const struct engine_shape *s)
{
	return uniform_launch(id, s, NULL);
}


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
#define PARAM_CHOICE ENGINES_PARAM_CHOICE
/* the catalog's when absent: a target's or a model's field of that name */
#define FROM_CATALOG(e) (ENGINE_IN_##e & (ENGINE_IN_COMPUTE_CAPABILITY | ENGINE_IN_MAX_MODEL_LEN))
#define PARAM(e, name, kind, bounds, about, given, option)                                  \
	{#name,                   about,                    PARAM_##kind,                      \
	 ENGINE_BOUND_MIN(bounds), ENGINE_BOUND_MAX(bounds), ENGINE_BOUND_DEFAULT(bounds),     \
	 ENGINE_INDEX_##e,         ENGINE_IN_##e,            given,                             \
	 FROM_CATALOG(e) != 0,     option,                   offsetof(struct query, name)},
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

bool engines_given(const struct engines_param *x, const struct query *q)
{
	const char *member = (const char *)q + x->offset;

	switch (x->kind) {
	case ENGINES_PARAM_BOOL:
		return *(const bool *)(const void *)member;
	case ENGINES_PARAM_CHOICE:
		return ((const struct slice *)(const void *)member)->p != NULL;
	case ENGINES_PARAM_U32:
		break;
	}
	return ((const struct query_u32 *)(const void *)member)->set;
}

void engines_write_given(struct jsonw *w, const struct engines_param *x, const struct query *q)
{
	const char *member = (const char *)q + x->offset;

	if (x->kind == ENGINES_PARAM_BOOL) {
		jsonw_kv_bool(w, x->name, *(const bool *)(const void *)member);
		return;
	}
	if (x->kind == ENGINES_PARAM_CHOICE) {
		const struct slice *v = (const struct slice *)(const void *)member;

		jsonw_key(w, x->name);
		if (v->p != NULL) {
			jsonw_strn(w, v->p, v->len);
		} else {
			jsonw_str(w, choice_word(x->index, x->dflt));
		}
		return;
	}
	const struct query_u32 *u = (const struct query_u32 *)(const void *)member;

	jsonw_kv_u64_or_null(w, x->name, u->set ? u->v : x->dflt);
}
