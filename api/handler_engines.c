/* SPDX-License-Identifier: AGPL-3.0-only */
#include "handler_engines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "engines.h"
#include "revision.h"
#include "vocab.h"

/* "a b c" as ["a","b","c"] */
static void write_words(struct jsonw *w, const char *key, const char *words)
{
	jsonw_key(w, key);
	jsonw_array_begin(w);
	for (const char *p = words; *p != '\0';) {
		size_t n = strcspn(p, " ");

		if (n > 0) {
			jsonw_strn(w, p, n);
		}
		p += n;
		p += *p == ' ';
	}
	jsonw_array_end(w);
}

/* The seed's note, the other engines' inputs named from their table. */
static void write_seed_note(struct jsonw *w)
{
	size_t n;
	const struct engines_param *x = engines_params(&n);
	char note[1024];
	size_t len = (size_t)snprintf(note, sizeof(note), "%s",
				      "auto and pinned read sm_count and num_q_heads alone, whatever "
				      "the batch; a target that declares legacy reads max(num_seqs, "
				      "max_batch_size). The workspace reads max_rows and head_dim. "
				      "The other engines' inputs (");

	for (size_t i = 0; i < n && len < sizeof(note); i++) {
		len += (size_t)snprintf(note + len, sizeof(note) - len, "%s%s", i > 0 ? ", " : "",
					x[i].name);
	}
	if (len < sizeof(note)) {
		snprintf(note + len, sizeof(note) - len, ") are accepted and never read.");
	}
	jsonw_kv_str(w, "note", note);
}

/* The inputs only the other engines read, as a client builds a form of
 * them: name, type, bounds, default (null: none, or the catalog model's
 * for num_kv_heads) and what it is. */
static void write_params(struct jsonw *w)
{
	size_t n;
	const struct engines_param *x = engines_params(&n);

	jsonw_key(w, "inputs");
	jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		bool flag = x[i].kind == ENGINES_PARAM_BOOL;
		bool choice = x[i].kind == ENGINES_PARAM_CHOICE;

		jsonw_object_begin(w);
		jsonw_kv_str(w, "name", x[i].name);
		jsonw_kv_str(w, "type", flag ? "boolean" : choice ? "string" : "integer");
		if (flag) {
			jsonw_kv_bool(w, "default", x[i].dflt != 0);
		} else if (choice) {
			jsonw_key(w, "enum");
			jsonw_array_begin(w);
			for (uint32_t k = 0; k <= x[i].max; k++) {
				jsonw_str(w, choice_word(x[i].index, k));
			}
			jsonw_array_end(w);
			jsonw_kv_str(w, "default", choice_word(x[i].index, x[i].dflt));
		} else {
			jsonw_kv_u64(w, "minimum", x[i].min);
			jsonw_kv_u64(w, "maximum", x[i].max);
			jsonw_kv_u64_or_null(w, "default", x[i].dflt);
		}
		jsonw_kv_bool(w, "from_model", !x[i].from_query);
		jsonw_kv_bool(w, "from_catalog", !x[i].from_query || x[i].from_catalog);
		jsonw_kv_str(w, "description", x[i].about);
		jsonw_object_end(w);
	}
	jsonw_array_end(w);
}

void handler_engines(struct handler_call *c)
{
	jsonw_object_begin(&c->w);
	jsonw_key(&c->w, "engines");
	jsonw_array_begin(&c->w);
	for (int id = 0; id < ENGINES_COUNT; id++) {
		const struct engines_info *e = engines_info((enum engines_id)id);

		jsonw_object_begin(&c->w);
		jsonw_kv_str(&c->w, "name", e->name);
		jsonw_kv_str(&c->w, "title", e->title);
		jsonw_kv_str_or_null(&c->w, "repository", e->repository);
		write_words(&c->w, "commits", e->commits);
		write_words(&c->w, "files", e->files);
		write_words(&c->w, "functions", e->functions);
		jsonw_key(&c->w, "reads");
		engines_write_inputs(&c->w, e->reads);
		jsonw_key(&c->w, "gpu_reads");
		engines_write_inputs(&c->w, e->gpu_reads);
		/* the seed's legacy reads the batch; its rule (auto, pinned) does not */
		jsonw_kv_bool(&c->w, "reads_num_seqs",
			      id != ENGINES_SEED && (e->reads & ENGINE_IN_NUM_SEQS) != 0);
		jsonw_kv_bool(&c->w, "reads_seq_len", (e->reads & ENGINE_IN_SEQ_LEN) != 0);
		jsonw_kv_u64_or_null(&c->w, "page_size", e->page_size);
		if (id == ENGINES_SEED) {
			jsonw_key(&c->w, "aliases");
			jsonw_array_begin(&c->w);
			jsonw_str(&c->w, ENGINES_SEED_ALIAS);
			jsonw_array_end(&c->w);
			write_seed_note(&c->w);
		}
		if (e->note != NULL) {
			jsonw_kv_str(&c->w, "note", e->note);
		}
		jsonw_object_end(&c->w);
	}
	jsonw_array_end(&c->w);
	/* after the engines, so the answer begins as it always has */
	write_params(&c->w);
	jsonw_object_end(&c->w);
}

/* One engine's split counts over the co-batch, and what they add up to. */
struct sweep {
	uint32_t *counts; /* [n - 1] for co-batch n, then num of scratch */
	uint32_t num;     /* max_batch_size */
	unsigned distinct;
	uint64_t max_bytes;          /* an engine's */
	struct splitk_bytes max_seed; /* the seed's (known false: no head_dim) */
	struct problem problem;      /* refused: set, kind not NONE */
};

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The counts need not step one way (FA2's rise again between its steps),
 * so they are counted sorted, in the sweep's scratch half: n log n where
 * comparing each with every earlier one was n^2 (16M at 4096). */
static unsigned count_distinct(const struct sweep *sw)
{
	uint32_t *v = sw->counts + sw->num;
	unsigned distinct = sw->num > 0;

	memcpy(v, sw->counts, sw->num * sizeof(*v));
	qsort(v, sw->num, sizeof(*v), by_value);
	for (uint32_t i = 1; i < sw->num; i++) {
		distinct += v[i] != v[i - 1];
	}
	return distinct;
}

static bool bytes_above(struct splitk_bytes a, struct splitk_bytes b)
{
	return a.known && (!b.known || a.hi > b.hi || (a.hi == b.hi && a.lo > b.lo));
}

/* The seed's decision at every co-batch n: GET /v1/splits at num_seqs=n,
 * max_rows the widest batch, max_batch_size unset (so legacy's reference
 * batch, max(num_seqs, max_batch_size), is the co-batch itself). */
static int sweep_seed(const struct catalog *cat, const struct query *q, struct slice override,
		      struct sweep *sw)
{
	struct query qn = *q;

	qn.max_batch_size.set = false;
	qn.max_rows = (struct query_u32){true, sw->num};
	qn.override = override;
	sw->max_seed = (struct splitk_bytes){false, 0, 0};
	for (uint32_t n = 1; n <= sw->num; n++) {
		struct decision d;

		qn.num_seqs = (struct query_u32){true, n};
		if (decide_run(cat, &qn, &d, &sw->problem) != 0) {
			return -1;
		}
		sw->counts[n - 1] = d.num_splits;
		if (n == 1 || bytes_above(d.workspace_bytes, sw->max_seed)) {
			sw->max_seed = d.workspace_bytes;
		}
	}
	sw->distinct = count_distinct(sw);
	return 0;
}

/* The setting that holds engine `id` still (hold_how's), set on its shape:
 * FA2 the seed's count, FA3 one split, vLLM batch invariance, SGLang and
 * TensorRT-LLM their deterministic modes. */
static void hold_shape(enum engines_id id, uint32_t seed_count, struct engine_shape *s)
{
	switch (id) {
	case ENGINES_FA2:
		s->num_splits = seed_count;
		break;
	case ENGINES_FA3:
		s->num_splits = 1;
		break;
	case ENGINES_VLLM:
	case ENGINES_VLLM_TRITON:
		s->batch_invariant = true;
		break;
	case ENGINES_SGLANG:
	case ENGINES_TRTLLM:
		s->deterministic = true;
		break;
	default:
		break;
	}
}

/* An engine's launch at every co-batch, as asked or held still (hold:
 * hold_shape with the seed's count). A refusal at any batch refuses the
 * sweep. */
static int sweep_engine(enum engines_id id, const struct query *q, const struct decision *d,
			bool hold, uint32_t seed_count, struct sweep *sw)
{
	struct engine_shape s;

	sw->max_bytes = 0;
	if (engines_shape(id, q, d, 0, &s, &sw->problem) != 0) {
		return -1;
	}
	if (hold) {
		hold_shape(id, seed_count, &s);
	}
	for (uint32_t n = 1; n <= sw->num; n++) {
		struct engine_answer a;

		s.num_seqs = n;
		a = engines_launch(id, &s);
		if (a.status != ENGINE_OK) {
			engines_refused(id, &a, &sw->problem);
			if (n > 1) {
				size_t len = strlen(sw->problem.detail);

				snprintf(sw->problem.detail + len, sizeof(sw->problem.detail) - len,
					 " (at num_seqs %u; it answers up to %u)", n, n - 1);
			}
			return -1;
		}
		sw->counts[n - 1] = a.num_splits;
		sw->max_bytes = a.workspace_bytes > sw->max_bytes ? a.workspace_bytes : sw->max_bytes;
	}
	sw->distinct = count_distinct(sw);
	return 0;
}

static void write_counts(struct jsonw *w, const struct sweep *sw)
{
	jsonw_key(w, "num_splits_by_num_seqs");
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < sw->num; i++) {
		jsonw_u64(w, sw->counts[i]);
	}
	jsonw_array_end(w);
	jsonw_kv_u64(w, "distinct", sw->distinct);
	jsonw_kv_bool(w, "batch_invariant", sw->distinct == 1);
}

/* How an engine that moves is held still on this path, by engine. */
static const char *const invariant_how[ENGINES_COUNT] = {
	[ENGINES_SEED] = "override=auto (ATLAS_ATTN_DECODE_SPLITK=auto): the seed's own rule, a "
			 "split count from configuration (sm_count, num_q_heads) alone",
	[ENGINES_FA2] = "flash_attn_with_kvcache(..., num_splits=N) with N the seed's count for "
			"this target and model: set_params_splitkv launches the count it is given "
			"(at most 128) instead of num_splits_heuristic",
	[ENGINES_FA3] = "num_splits=1: on the paged path a fixed num_splits is only the upper "
			"bound and the per-batch split still moves with the batch "
			"(flash-attention #1897; a batch_invariant flag is proposed in #2450, not "
			"in 0251105a); 1 is what SGLang's --enable-deterministic-inference uses",
	[ENGINES_VLLM] = "VLLM_BATCH_INVARIANT=1: the FLASH_ATTN backend launches one split for "
			 "every sequence whatever the batch (flash_attn.py's num_splits=1; on "
			 "Blackwell it also selects FA2 over the unported FA4)",
	[ENGINES_VLLM_TRITON] = "VLLM_BATCH_INVARIANT=1: the 2D kernel always, one segment a "
				"sequence (use_3d's batch-invariant condition); the 3D kernel's "
				"scratch is allocated all the same",
	[ENGINES_SGLANG] = "--enable-deterministic-inference: a fixed split size "
			   "(SGLANG_TRITON_DECODE_SPLIT_TILE_SIZE, 256 tokens), ceil(seq_len / 256) "
			   "splits a sequence whatever the batch; the scratch is sized by "
			   "max_model_len",
	[ENGINES_TRTLLM] = "FORCE_DETERMINISTIC=1: no multi-block mode, one block a sequence, "
			   "and XQA always (no fallback to the masked-MHA kernel)",
};
/* The setting, as a query parameter (FA2's is the seed's count). */
static const char *const hold_setting[ENGINES_COUNT] = {
	[ENGINES_SEED] = "override=auto",
	[ENGINES_FA3] = "num_splits=1",
	[ENGINES_VLLM] = "batch_invariant=true",
	[ENGINES_VLLM_TRITON] = "batch_invariant=true",
	[ENGINES_SGLANG] = "deterministic=true",
	[ENGINES_TRTLLM] = "deterministic=true",
};
static const char *const invariant_none[ENGINES_COUNT] = {
	[ENGINES_FLASHINFER] = "no knob at fb28d724: the CUDA-core decode plan splits the KV so that "
			       "batch * kv_heads fills blocks_per_sm * SMs; the fixed_split_size and "
			       "disable_split_kv of flashinfer #1675 act on the tensor-core path",
	[ENGINES_VLLM_V0] = "no knob: forward_decode chooses v1 or v2 and its partitions from the "
			    "shape (max_seq_len, num_seqs * num_heads)",
	[ENGINES_FLASHMLA] = "no knob at 9241ae3e: get_mla_metadata spreads the batch's KV over "
			     "the SM parts, so a sequence's splits move with its neighbours and its "
			     "place in the batch; FlashMLA has no deterministic mode",
};

/* engine id's setting that holds it still, as a query parameter would say it */
static void hold_text(enum engines_id id, uint32_t seed_count, char *out, size_t cap)
{
	if (id == ENGINES_FA2) {
		snprintf(out, cap, "num_splits=%u", seed_count);
	} else {
		snprintf(out, cap, "%s", hold_setting[id] != NULL ? hold_setting[id] : "");
	}
}

struct compare {
	struct handler_call *c;
	const struct catalog *cat;
	struct decision seed; /* at co-batch 1 */
	uint32_t reserve_num; /* a batch's reserve: max_batch_size, else its sequences */
	uint32_t seed_count;  /* the seed's count held still: its own, or auto's */
	struct sweep sw;
};

/* The setting that holds engine `id` still, swept as the engine was. */
static void write_invariant(struct compare *cmp, enum engines_id id)
{
	struct jsonw *w = &cmp->c->w;
	char setting[48];
	int rc;

	if (invariant_how[id] == NULL) {
		jsonw_key(w, "invariant");
		jsonw_null(w);
		jsonw_kv_str(w, "invariant_note", invariant_none[id]);
		return;
	}
	if (id == ENGINES_SEED) {
		rc = sweep_seed(cmp->cat, &cmp->c->q, (struct slice){"auto", 4}, &cmp->sw);
	} else {
		rc = sweep_engine(id, &cmp->c->q, &cmp->seed, true, cmp->seed_count, &cmp->sw);
	}
	jsonw_key(w, "invariant");
	jsonw_object_begin(w);
	hold_text(id, cmp->seed_count, setting, sizeof(setting));
	jsonw_kv_str(w, "setting", setting);
	jsonw_kv_str(w, "how", invariant_how[id]);
	if (rc != 0) {
		jsonw_key(w, "problem");
		problem_write(w, &cmp->sw.problem);
	} else {
		write_counts(w, &cmp->sw);
		if (id == ENGINES_SEED) {
			jsonw_kv_bytes(w, "max_workspace_bytes", cmp->sw.max_seed);
		} else {
			jsonw_kv_u64(w, "max_workspace_bytes", cmp->sw.max_bytes);
		}
	}
	jsonw_object_end(w);
}

/* The seed's warnings at one sequence (an override that does not parse,
 * a clamp): what the comparison's seed entry was answered under. */
static void write_seed_warnings(struct jsonw *w, const struct decision *d)
{
	jsonw_key(w, VOCAB_M_WARNINGS);
	jsonw_array_begin(w);
	for (size_t i = 0; i < d->num_warnings; i++) {
		jsonw_str(w, d->warnings[i]);
	}
	jsonw_array_end(w);
}

/* With max_model_len given: the engine's reserve over every batch of at
 * most `num` sequences of at most max_model_len tokens (engines.h), or the
 * problem that refused it; the seed's is its arena at max_rows = num. */
static void write_reserve(struct compare *cmp, enum engines_id id, uint32_t num)
{
	struct jsonw *w = &cmp->c->w;
	const struct query *q = &cmp->c->q;
	struct problem p;

	if (!q->max_model_len.set) {
		return;
	}
	jsonw_key(w, "reserve");
	if (id == ENGINES_SEED) {
		struct query qr = *q;
		struct decision d;

		qr.seq_lens.n = 0;
		qr.max_batch_size = (struct query_u32){true, num};
		qr.num_seqs = (struct query_u32){true, num};
		qr.max_rows = (struct query_u32){true, num};
		if (engines_reserve_bounds(id, q, &cmp->seed, num, q->max_model_len.v, &p) != 0 ||
		    decide_run(cmp->cat, &qr, &d, &p) != 0) {
			jsonw_object_begin(w);
			jsonw_key(w, "problem");
			problem_write(w, &p);
			jsonw_object_end(w);
			return;
		}
		jsonw_object_begin(w);
		jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, num);
		jsonw_kv_u64(w, "max_model_len", q->max_model_len.v);
		jsonw_kv_bytes(w, VOCAB_M_WORKSPACE_BYTES, d.workspace_bytes);
		jsonw_kv_str(w, "method", "fixed");
		jsonw_kv_str(w, "basis", "the seed's arena, sized once at max_rows = max_batch_size: "
					  "max_rows * num_q_heads * num_splits slots of head_dim + 2 "
					  "floats, whatever the lengths");
		jsonw_object_end(w);
		return;
	}
	struct engine_reserve *r = malloc(sizeof(*r));
	struct engine_shape s;

	jsonw_object_begin(w);
	if (r == NULL) {
		problem_set(&p, PROBLEM_INTERNAL, NULL, NULL, "out of memory");
	}
	if (r == NULL || engines_reserve_query(id, q, &cmp->seed, num, &s, r, &p) != 0) {
		jsonw_key(w, "problem");
		problem_write(w, &p);
	} else {
		jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, r->max_batch_size);
		jsonw_kv_u64(w, "max_model_len", r->max_model_len);
		jsonw_kv_u64(w, VOCAB_M_WORKSPACE_BYTES, r->answer.workspace_bytes);
		jsonw_kv_str(w, "method", r->answer.method_name);
		jsonw_kv_str(w, "basis", r->answer.basis);
		jsonw_kv_bool(w, "layers_multiply", r->answer.layers_multiply);
		jsonw_key(w, VOCAB_M_SEQ_LENS);
		jsonw_array_begin(w);
		for (uint32_t i = 0; i < r->answer.witness_len; i++) {
			jsonw_u64(w, r->witness[i]);
		}
		jsonw_array_end(w);
	}
	jsonw_object_end(w);
	free(r);
}

static void write_entry(struct compare *cmp, enum engines_id id)
{
	struct jsonw *w = &cmp->c->w;
	int rc;

	jsonw_object_begin(w);
	jsonw_kv_str(w, VOCAB_M_ENGINE, engines_info(id)->name);
	if (id == ENGINES_SEED) {
		char label[SPLITK_LABEL_MAX];

		rc = sweep_seed(cmp->cat, &cmp->c->q, cmp->c->q.override, &cmp->sw);
		splitk_label(cmp->seed.res.resolved.policy, label);
		jsonw_kv_str(w, VOCAB_M_POLICY, label);
		write_seed_warnings(w, &cmp->seed);
	} else {
		rc = sweep_engine(id, &cmp->c->q, &cmp->seed, false, 0, &cmp->sw);
	}
	if (rc != 0) {
		jsonw_key(w, "problem");
		problem_write(w, &cmp->sw.problem);
		write_reserve(cmp, id, cmp->sw.num);
		jsonw_object_end(w);
		return;
	}
	write_counts(w, &cmp->sw);
	if (id == ENGINES_SEED) {
		jsonw_kv_bytes(w, "max_workspace_bytes", cmp->sw.max_seed);
		/* the count FA2 is given to hold still: the seed's, or auto's where
		 * the seed itself moves (legacy) */
		cmp->seed_count = cmp->sw.distinct == 1
					  ? cmp->sw.counts[0]
					  : splitk_auto_splits(cmp->seed.sm_count, cmp->seed.num_q_heads);
	} else {
		jsonw_kv_u64(w, "max_workspace_bytes", cmp->sw.max_bytes);
	}
	if (cmp->sw.distinct != 1) {
		write_invariant(cmp, id);
	}
	write_reserve(cmp, id, cmp->sw.num);
	jsonw_object_end(w);
}

/* The engine-only inputs a query gives (x, n of them), those that every
 * engine reads (`all`) or those only some do. */
static void write_given(struct jsonw *w, const struct engines_param *x, size_t n,
			const struct query *q, unsigned every, bool all)
{
	for (size_t i = 0; i < n; i++) {
		bool given = engines_given(&x[i], q);

		if (x[i].from_query && ((every & x[i].bit) != 0) == all && (!x[i].option || given)) {
			engines_write_given(w, &x[i], q);
		}
	}
}

/* The inputs every engine was asked with, as the answer's head. */
static void write_head(struct compare *cmp, uint32_t num)
{
	struct jsonw *w = &cmp->c->w;
	const struct decision *d = &cmp->seed;
	const struct query *q = &cmp->c->q;
	size_t n;
	const struct engines_param *x = engines_params(&n);
	unsigned every = ~0u;

	for (int id = ENGINES_SEED + 1; id < ENGINES_COUNT; id++) {
		every &= engines_info((enum engines_id)id)->reads;
	}
	jsonw_kv_str_or_null(w, VOCAB_M_TARGET, d->target ? d->target->names.name : NULL);
	jsonw_kv_u64(w, VOCAB_M_SM_COUNT, d->sm_count);
	jsonw_kv_str_or_null(w, VOCAB_M_MODEL, d->model ? d->model->names.name : NULL);
	jsonw_kv_u64(w, VOCAB_M_NUM_Q_HEADS, d->num_q_heads);
	jsonw_kv_u64_or_null(w, VOCAB_M_NUM_KV_HEADS, engines_kv_heads(q, d));
	jsonw_kv_u64_or_null(w, VOCAB_M_HEAD_DIM, d->head_dim);
	/* the engine-only inputs the query gives, from their table: those
	 * every engine reads, the co-batch swept, then those some read */
	write_given(w, x, n, q, every, true);
	jsonw_kv_u64(w, VOCAB_M_MAX_BATCH_SIZE, num);
	write_given(w, x, n, q, every, false);
	jsonw_key(w, VOCAB_M_OVERRIDE);
	if (q->override.p != NULL) {
		jsonw_strn(w, q->override.p, q->override.len);
	} else {
		jsonw_null(w);
	}
}

/* ---- over a mixed batch (seq_lens) ---- */

/* One engine's counts over the batch: in it (by_seq), each sequence
 * launched alone with the same settings (alone), and whether any moved. */
struct batch_counts {
	uint32_t *by_seq, *alone; /* alone: ALONE_REFUSED where the engine refuses it */
	uint64_t workspace_bytes;
	struct splitk_bytes seed_bytes; /* the seed's workspace */
	bool moved;
	uint32_t refused_alone; /* sequences the engine refuses alone */
	struct problem alone_problem; /* the first of those refusals */
};

/* A sequence the engine answers in the batch but refuses alone (TensorRT-
 * LLM hands a short lone request to a kernel whose count needs GPU
 * figures): its count alone is unknown, written null. */
#define ALONE_REFUSED UINT32_MAX

static void write_list(struct jsonw *w, const char *key, const uint32_t *v, uint32_t n)
{
	jsonw_key(w, key);
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < n; i++) {
		jsonw_u64(w, v[i]);
	}
	jsonw_array_end(w);
}

static void write_batch_counts(struct jsonw *w, const struct batch_counts *bc, uint32_t n,
			       bool seed)
{
	write_list(w, VOCAB_M_NUM_SPLITS_BY_SEQ, bc->by_seq, n);
	jsonw_key(w, "alone_by_seq");
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < n; i++) {
		if (bc->alone[i] == ALONE_REFUSED) {
			jsonw_null(w);
		} else {
			jsonw_u64(w, bc->alone[i]);
		}
	}
	jsonw_array_end(w);
	jsonw_key(w, "moved");
	jsonw_array_begin(w);
	for (uint32_t i = 0; i < n; i++) {
		if (bc->alone[i] != ALONE_REFUSED && bc->by_seq[i] != bc->alone[i]) {
			jsonw_u64(w, i);
		}
	}
	jsonw_array_end(w);
	/* unknown where no sequence moved but some cannot be asked alone */
	if (!bc->moved && bc->refused_alone > 0) {
		jsonw_key(w, "batch_invariant");
		jsonw_null(w);
	} else {
		jsonw_kv_bool(w, "batch_invariant", !bc->moved);
	}
	if (bc->refused_alone > 0) {
		jsonw_key(w, "alone_refused");
		problem_write(w, &bc->alone_problem);
	}
	if (seed) {
		jsonw_kv_bytes(w, VOCAB_M_WORKSPACE_BYTES, bc->seed_bytes);
	} else {
		jsonw_kv_u64(w, VOCAB_M_WORKSPACE_BYTES, bc->workspace_bytes);
	}
}

/* The seed over the batch under `override`: its count at the batch's size
 * for every sequence, and at one sequence alone. */
static int batch_seed(const struct catalog *cat, const struct query *q, struct slice override,
		      uint32_t n, struct batch_counts *bc, struct problem *p)
{
	struct query qb = *q, q1 = *q;
	struct decision d;
	uint32_t in_batch;

	qb.override = override;
	q1.override = override;
	q1.seq_lens.n = 0;
	q1.num_seqs = (struct query_u32){true, 1};
	if (decide_run(cat, &qb, &d, p) != 0) {
		return -1;
	}
	in_batch = d.num_splits;
	bc->seed_bytes = d.workspace_bytes;
	if (decide_run(cat, &q1, &d, p) != 0) {
		return -1;
	}
	bc->moved = false;
	bc->refused_alone = 0;
	for (uint32_t i = 0; i < n; i++) {
		bc->by_seq[i] = in_batch;
		bc->alone[i] = d.num_splits;
		bc->moved = bc->moved || in_batch != d.num_splits;
	}
	return 0;
}

/* An engine over the batch as asked or held still (hold_shape), and each
 * sequence alone. A refusal refuses the entry. */
static int batch_engine(enum engines_id id, const struct query *q, const struct decision *d,
			bool hold, uint32_t seed_count, const uint32_t *lens, uint32_t n,
			struct batch_counts *bc, struct problem *p)
{
	struct engine_shape s;
	struct engine_batch b = {lens, n};
	struct engine_answer a;

	if (engines_shape(id, q, d, 0, &s, p) != 0) {
		return -1;
	}
	if (hold) {
		hold_shape(id, seed_count, &s);
	}
	s.num_seqs = n;
	a = engines_launch_batch(id, &s, &b, bc->by_seq);
	if (a.status != ENGINE_OK) {
		return engines_refused(id, &a, p);
	}
	bc->workspace_bytes = a.workspace_bytes;
	bc->moved = false;
	bc->refused_alone = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct engine_batch one = {&lens[i], 1};

		s.num_seqs = 1;
		a = engines_launch_batch(id, &s, &one, &bc->alone[i]);
		if (a.status != ENGINE_OK) {
			bc->alone[i] = ALONE_REFUSED;
			if (bc->refused_alone++ == 0) {
				struct problem *ap = &bc->alone_problem;

				engines_refused(id, &a, ap);
				size_t len = strlen(ap->detail);

				snprintf(ap->detail + len, sizeof(ap->detail) - len,
					 " (sequence %u alone, of %u tokens)", i, lens[i]);
			}
			continue;
		}
		bc->moved = bc->moved || bc->alone[i] != bc->by_seq[i];
	}
	return 0;
}

static void write_batch_entry(struct compare *cmp, enum engines_id id, const uint32_t *lens,
			      uint32_t n, struct batch_counts *bc)
{
	struct jsonw *w = &cmp->c->w;
	struct problem p;
	int rc;

	jsonw_object_begin(w);
	jsonw_kv_str(w, VOCAB_M_ENGINE, engines_info(id)->name);
	if (id == ENGINES_SEED) {
		rc = batch_seed(cmp->cat, &cmp->c->q, cmp->c->q.override, n, bc, &p);
	} else {
		rc = batch_engine(id, &cmp->c->q, &cmp->seed, false, 0, lens, n, bc, &p);
	}
	if (rc != 0) {
		jsonw_key(w, "problem");
		problem_write(w, &p);
		write_reserve(cmp, id, cmp->reserve_num);
		jsonw_object_end(w);
		return;
	}
	write_batch_counts(w, bc, n, id == ENGINES_SEED);
	if (id == ENGINES_SEED) {
		cmp->seed_count = !bc->moved ? bc->by_seq[0]
					     : splitk_auto_splits(cmp->seed.sm_count,
								  cmp->seed.num_q_heads);
	}
	if (bc->moved || bc->refused_alone > 0) {
		jsonw_key(w, "invariant");
		if (invariant_how[id] == NULL) {
			jsonw_null(w);
			jsonw_kv_str(w, "invariant_note", invariant_none[id]);
		} else {
			char setting[48];

			jsonw_object_begin(w);
			hold_text(id, cmp->seed_count, setting, sizeof(setting));
			if (id == ENGINES_SEED) {
				rc = batch_seed(cmp->cat, &cmp->c->q, (struct slice){"auto", 4}, n, bc,
						&p);
			} else {
				rc = batch_engine(id, &cmp->c->q, &cmp->seed, true, cmp->seed_count,
						  lens, n, bc, &p);
			}
			jsonw_kv_str(w, "setting", setting);
			jsonw_kv_str(w, "how", invariant_how[id]);
			if (rc != 0) {
				jsonw_key(w, "problem");
				problem_write(w, &p);
			} else {
				write_batch_counts(w, bc, n, id == ENGINES_SEED);
			}
			jsonw_object_end(w);
		}
	}
	write_reserve(cmp, id, cmp->reserve_num);
	jsonw_object_end(w);
}

/* GET /v1/compare with seq_lens: every engine over this batch, each
 * sequence in it and alone, which moved, and what holds it still. */
static void compare_batch(struct compare *cmp)
{
	struct handler_call *c = cmp->c;
	uint32_t *lens = malloc(3 * (size_t)ENGINE_MAX_SEQS * sizeof(*lens));
	struct batch_counts bc;
	uint32_t n;

	if (lens == NULL) {
		problem_set(&c->problem, PROBLEM_INTERNAL, NULL, NULL, "out of memory");
		handler_fail(c);
		return;
	}
	n = (uint32_t)query_list_get(&c->q.seq_lens, lens, ENGINE_MAX_SEQS);
	cmp->reserve_num = c->q.max_batch_size.set ? c->q.max_batch_size.v : n;
	bc.by_seq = lens + ENGINE_MAX_SEQS;
	bc.alone = lens + 2 * (size_t)ENGINE_MAX_SEQS;
	jsonw_object_begin(&c->w);
	write_head(cmp, n);
	write_list(&c->w, VOCAB_M_SEQ_LENS, lens, n);
	jsonw_key(&c->w, "engines");
	jsonw_array_begin(&c->w);
	for (int id = 0; id < ENGINES_COUNT; id++) {
		write_batch_entry(cmp, (enum engines_id)id, lens, n, &bc);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_str(&c->w, VOCAB_M_CATALOG, cmp->cat->digest);
	jsonw_kv_str(&c->w, VOCAB_M_CATALOG_NAME, cmp->cat->name);
	jsonw_object_end(&c->w);
	free(lens);
}

void handler_compare(struct handler_call *c)
{
	struct compare cmp = {.c = c};
	struct query q1 = c->q;
	uint32_t num = c->q.max_batch_size.set ? c->q.max_batch_size.v : HANDLER_COMPARE_DEFAULT_BATCH;

	if (revision_choose(c, c->q.catalog, c->q.revision, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	cmp.cat = c->ctx->catalog;
	if (num > HANDLER_COMPARE_MAX_BATCH) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, VOCAB_M_MAX_BATCH_SIZE, NULL,
			    "max_batch_size is at most %u here (the co-batches swept)",
			    HANDLER_COMPARE_MAX_BATCH);
		handler_fail(c);
		return;
	}
	/* the target, model and numbers read once, as a decision at one sequence */
	q1.num_seqs = (struct query_u32){true, 1};
	q1.max_batch_size.set = false;
	q1.seq_lens.n = 0;
	/* seq_lens' own rule (decide.c's mixed_batch), for every engine at
	 * once: the decision below reads the batch without it */
	if (c->q.seq_lens.n > 0 && c->q.seq_len.set) {
		problem_set(&c->problem, PROBLEM_INVALID_PARAMETER, VOCAB_M_SEQ_LENS, NULL,
			    "seq_lens gives each sequence's length; seq_len (every sequence's) "
			    "cannot stand beside it: send one of them");
		handler_fail(c);
		return;
	}
	if (decide_run(cmp.cat, &q1, &cmp.seed, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	/* the reserves' bounds, once for every engine (a seq_lens within them) */
	if (c->q.max_model_len.set &&
	    engines_reserve_bounds(ENGINES_SEED, &c->q, &cmp.seed,
				   c->q.seq_lens.n > 0 && !c->q.max_batch_size.set
					   ? (uint32_t)c->q.seq_lens.n
					   : num,
				   c->q.max_model_len.v, &c->problem) != 0) {
		handler_fail(c);
		return;
	}
	if (c->q.seq_lens.n > 0) {
		compare_batch(&cmp);
		return;
	}
	cmp.sw.num = num;
	cmp.sw.counts = malloc(2 * (size_t)num * sizeof(*cmp.sw.counts));
	if (cmp.sw.counts == NULL) {
		problem_set(&c->problem, PROBLEM_INTERNAL, NULL, NULL, "out of memory");
		handler_fail(c);
		return;
	}
	jsonw_object_begin(&c->w);
	write_head(&cmp, num);
	jsonw_key(&c->w, "engines");
	jsonw_array_begin(&c->w);
	for (int id = 0; id < ENGINES_COUNT; id++) {
		write_entry(&cmp, (enum engines_id)id);
	}
	jsonw_array_end(&c->w);
	jsonw_kv_str(&c->w, VOCAB_M_CATALOG, cmp.cat->digest);
	jsonw_kv_str(&c->w, VOCAB_M_CATALOG_NAME, cmp.cat->name);
	jsonw_object_end(&c->w);
	free(cmp.sw.counts);
}
