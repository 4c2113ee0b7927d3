/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * policy/reserve, against the ports themselves: for every engine and its
 * main settings, the witness launched through the port's own
 * *_launch_batch gives exactly the reported bytes and counts; 100,000
 * sampled batches (uniform, mixed, one long beside short ones, skewed)
 * give no more than the reserve; on small bounds every batch (every size
 * and longest, or every multiset of page counts where the mix matters) is
 * launched and the reserve is their exact maximum; the monotone and fixed
 * claims are checked on a grid; bad bounds are refused. Every expected
 * figure here comes from launching the ports, never from reserve.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fa2.h"
#include "fa3.h"
#include "flashinfer.h"
#include "flashmla.h"
#include "reserve.h"
#include "sglang.h"
#include "trtllm.h"
#include "vllm.h"
#include "vllm_triton.h"
#include "vllm_v1.h"

static uint32_t witness[ENGINE_MAX_SEQS], scratch[ENGINE_MAX_SEQS];
static uint32_t batch[ENGINE_MAX_SEQS], by_seq[ENGINE_MAX_SEQS];

struct engine_case {
	const char *name;
	enum reserve_engine e;
	struct engine_shape s;
	const void *o;
	uint32_t B, L;
};

/* The port, called directly (not through reserve.c). */
static struct engine_answer port(const struct engine_case *c, const uint32_t *lens, uint32_t n,
				 uint32_t *out)
{
	const struct engine_batch b = {lens, n};

	switch (c->e) {
	case RESERVE_FA2:
		return fa2_launch_batch(&c->s, &b, out);
	case RESERVE_FA3:
		return fa3_launch_batch(&c->s, &b, out);
	case RESERVE_FLASHINFER:
		return flashinfer_launch_batch(&c->s, &b, c->o, out);
	case RESERVE_VLLM:
		return vllm_launch_batch(&c->s, &b, out);
	case RESERVE_VLLM_V1:
		return vllm_v1_launch_batch(&c->s, &b, c->o, out);
	case RESERVE_VLLM_TRITON:
		return vllm_triton_launch_batch(&c->s, &b, c->o, out);
	case RESERVE_SGLANG:
		return sglang_launch_batch(&c->s, &b, c->o, out);
	case RESERVE_TRTLLM:
		return trtllm_launch_batch(&c->s, &b, c->o, out);
	case RESERVE_FLASHMLA:
		return flashmla_launch_batch(&c->s, &b, c->o, out);
	default:
		cr_assert_fail("no engine %d", (int)c->e);
		return engine_refused("no engine", "engine");
	}
}

/* bytes of a batch, and whether the port answers it */
static bool bytes_of(const struct engine_case *c, const uint32_t *lens, uint32_t n, uint64_t *bytes)
{
	struct engine_answer a = port(c, lens, n, by_seq);

	*bytes = a.workspace_bytes;
	return a.status == ENGINE_OK;
}

static struct reserve_answer reserve_ok(const struct engine_case *c)
{
	struct reserve_answer r = reserve_worst(c->e, &c->s, c->o, c->B, c->L, witness, scratch);

	cr_assert_eq(r.status, ENGINE_OK, "%s B=%u L=%u: refused: %s (%s)", c->name, c->B, c->L,
		     r.refused ? r.refused : "?", r.refused_input ? r.refused_input : "?");
	cr_assert_not_null(r.method_name);
	cr_assert_not_null(r.basis);
	cr_assert_not_null(r.unit);
	cr_assert_not_null(r.layers);
	cr_assert(!r.layers_multiply);
	return r;
}

/* (a) The witness, launched through the port, is exactly the answer. */
static void check_witness(const struct engine_case *c, const struct reserve_answer *r)
{
	cr_assert(r->witness_len >= 1 && r->witness_len <= c->B, "%s: witness of %u", c->name,
		  r->witness_len);
	for (uint32_t i = 0; i < r->witness_len; i++) {
		cr_assert(witness[i] >= 1 && witness[i] <= c->L, "%s: witness[%u] = %u", c->name, i,
			  witness[i]);
		batch[i] = witness[i];
	}
	struct engine_answer a = port(c, batch, r->witness_len, by_seq);
	cr_assert_eq(a.status, ENGINE_OK, "%s: the witness is refused: %s", c->name,
		     a.refused ? a.refused : "?");
	cr_assert_eq(a.workspace_bytes, r->workspace_bytes, "%s: witness %llu, reserve %llu", c->name,
		     (unsigned long long)a.workspace_bytes, (unsigned long long)r->workspace_bytes);
	cr_assert_eq(a.num_splits, r->num_splits, "%s", c->name);
	cr_assert_eq(a.num_splits_bound, r->num_splits_bound, "%s", c->name);
	for (uint32_t i = 0; i < r->witness_len; i++) {
		cr_assert_eq(by_seq[i], scratch[i], "%s: by_seq[%u]", c->name, i);
	}
}

/* xorshift64*, fixed seed: the same batches every run. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static uint32_t rnd_in(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}

/* A length spread over every scale from 1 to L. */
static uint32_t rnd_len(uint32_t L)
{
	uint32_t bits = 0;

	while (bits < 31 && (1u << bits) < L) {
		bits++;
	}
	uint32_t cap = rnd_in(0, bits);
	uint32_t hi = cap >= 31 || (1u << cap) > L ? L : (1u << cap);
	return rnd_in(1, hi);
}

/* One sampled batch of n sequences into batch[], by one of five forms. */
static uint32_t rnd_batch(uint32_t B, uint32_t L, unsigned form)
{
	uint32_t n;

	switch (rnd() % 3) {
	case 0:
		n = rnd_in(1, B);
		break;
	case 1:
		n = rnd_in(1, B < 8 ? B : 8);
		break;
	default:
		n = rnd_in(B > 8 ? B - 8 : 1, B);
		break;
	}
	uint32_t len = rnd_len(L);
	for (uint32_t i = 0; i < n; i++) {
		switch (form) {
		case 0: /* uniform */
			batch[i] = len;
			break;
		case 1: /* mixed, every scale */
			batch[i] = rnd_len(L);
			break;
		case 2: /* one long beside ones */
			batch[i] = i == 0 ? len : 1;
			break;
		case 3: /* near L */
			batch[i] = L - rnd_in(0, L / 16);
			break;
		default: /* mixed below a longest */
			batch[i] = rnd_in(1, len);
			break;
		}
	}
	return n;
}

/* (b) count sampled batches: none over the reserve. */
static void sample(const struct engine_case *c, const struct reserve_answer *r, unsigned count)
{
	unsigned answered = 0, at_reserve = 0;
	uint64_t most = 0;

	for (unsigned i = 0; i < count; i++) {
		uint32_t n = rnd_batch(c->B, c->L, i % 5);
		uint64_t bytes;
		if (!bytes_of(c, batch, n, &bytes)) {
			continue;
		}
		answered++;
		cr_assert(bytes <= r->workspace_bytes,
			  "%s B=%u L=%u: a batch of %u (first %u) needs %llu > reserve %llu", c->name,
			  c->B, c->L, n, batch[0], (unsigned long long)bytes,
			  (unsigned long long)r->workspace_bytes);
		at_reserve += bytes == r->workspace_bytes;
		most = bytes > most ? bytes : most;
	}
	cr_assert(answered > 0, "%s: no sampled batch answered", c->name);
	cr_log_info("%s B=%u L=%u: reserve %llu (%s, witness of %u, work %llu); %u sampled, %u "
		    "answered, %u at the reserve, largest sampled %llu",
		    c->name, c->B, c->L, (unsigned long long)r->workspace_bytes, r->method_name,
		    r->witness_len, (unsigned long long)r->work, count, answered, at_reserve,
		    (unsigned long long)most);
}

#define SAMPLES 100000u

static void check_case(const struct engine_case *c)
{
	struct reserve_answer r = reserve_ok(c);

	check_witness(c, &r);
	sample(c, &r, SAMPLES);
}

/* (e) Every (n, longest), uniform and one long beside ones: where the
 * port's scratch reads the batch's size and longest (its header), these
 * are every batch there is, and the reserve is their exact maximum. */
static void exhaustive_by_longest(const struct engine_case *c)
{
	struct reserve_answer r = reserve_ok(c);
	uint64_t most = 0;
	bool any = false;

	check_witness(c, &r);
	for (uint32_t n = 1; n <= c->B; n++) {
		for (uint32_t len = 1; len <= c->L; len++) {
			for (unsigned form = 0; form < 2; form++) {
				for (uint32_t i = 0; i < n; i++) {
					batch[i] = form == 0 || i == 0 ? len : 1;
				}
				uint64_t bytes;
				if (bytes_of(c, batch, n, &bytes)) {
					any = true;
					most = bytes > most ? bytes : most;
				}
			}
		}
	}
	cr_assert(any);
	cr_assert_eq(most, r.workspace_bytes, "%s B=%u L=%u: every batch's most %llu, reserve %llu",
		     c->name, c->B, c->L, (unsigned long long)most,
		     (unsigned long long)r.workspace_bytes);
	cr_log_info("%s B=%u L=%u: exhaustive over %u x %u, reserve %llu = their most", c->name, c->B,
		    c->L, c->B, c->L, (unsigned long long)most);
}

/* ------------------------------------------------------------ shapes */

static struct engine_shape shape(uint32_t sm, uint32_t q, uint32_t kv, uint32_t hd, uint32_t page)
{
	struct engine_shape s;

	memset(&s, 0, sizeof s);
	s.sm_count = sm;
	s.num_q_heads = q;
	s.num_kv_heads = kv;
	s.head_dim = hd;
	s.page_size = page;
	return s;
}

/* Llama-3.1-8B's attention (32 q heads, 8 KV heads, 128) on an H100. */
static struct engine_shape llama8b_h100(uint32_t page)
{
	return shape(132, 32, 8, 128, page);
}

static struct engine_case make(const char *name, enum reserve_engine e, struct engine_shape s,
			       const void *o, uint32_t B, uint32_t L)
{
	struct engine_case c;

	c.name = name;
	c.e = e;
	c.s = s;
	c.o = o;
	c.B = B;
	c.L = L;
	return c;
}

/* ------------------------------------------------------------ (a), (b) */

Test(reserve_sampled, fa2)
{
	struct engine_case c = make("fa2", RESERVE_FA2, llama8b_h100(256), NULL, 64, 32768);
	check_case(&c);
	c = make("fa2 mqa", RESERVE_FA2, shape(108, 16, 1, 64, 256), NULL, 48, 65536);
	check_case(&c);
	c = make("fa2 num_splits 4", RESERVE_FA2, llama8b_h100(256), NULL, 64, 32768);
	c.s.num_splits = 4;
	check_case(&c);
}

Test(reserve_sampled, fa3)
{
	struct engine_case c = make("fa3", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768);
	check_case(&c);
	c = make("fa3 page 1", RESERVE_FA3, shape(132, 64, 8, 128, 1), NULL, 32, 8192);
	check_case(&c);
	c = make("fa3 mqa", RESERVE_FA3, shape(132, 16, 1, 128, 16), NULL, 64, 65536);
	check_case(&c);
	c = make("fa3 num_splits 8", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768);
	c.s.num_splits = 8;
	check_case(&c);
}

Test(reserve_sampled, flashinfer_cuda_cores)
{
	static const struct flashinfer_options cuda = {false, 0, false};
	struct engine_case c = make("flashinfer", RESERVE_FLASHINFER, llama8b_h100(16), &cuda, 64, 32768);
	c.s.blocks_per_sm = 2;
	check_case(&c);
	c.name = "flashinfer graph";
	c.s.cuda_graph = true;
	check_case(&c);
	c = make("flashinfer gqa 4", RESERVE_FLASHINFER, shape(132, 32, 8, 128, 1), NULL, 128, 4096);
	c.s.blocks_per_sm = 1;
	check_case(&c);
}

Test(reserve_sampled, flashinfer_tensor_cores)
{
	static const struct flashinfer_options tc = {true, 0, false};
	static const struct flashinfer_options fss = {true, 64, false};
	static const struct flashinfer_options off = {true, 0, true};
	struct engine_case c = make("flashinfer tc", RESERVE_FLASHINFER, llama8b_h100(16), &tc, 64, 32768);
	check_case(&c);
	c.name = "flashinfer tc graph";
	c.s.cuda_graph = true;
	check_case(&c);
	c = make("flashinfer tc fixed_split_size", RESERVE_FLASHINFER, llama8b_h100(16), &fss, 64, 32768);
	check_case(&c);
	c.name = "flashinfer tc fixed_split_size graph";
	c.s.cuda_graph = true;
	check_case(&c);
	c = make("flashinfer tc disable_split_kv", RESERVE_FLASHINFER, llama8b_h100(16), &off, 64, 32768);
	check_case(&c);
}

Test(reserve_sampled, vllm)
{
	struct engine_case c = make("vllm", RESERVE_VLLM, llama8b_h100(16), NULL, 64, 32768);
	check_case(&c);
	c = make("vllm 8k", RESERVE_VLLM, llama8b_h100(16), NULL, 64, 8192);
	check_case(&c);
}

Test(reserve_sampled, vllm_v1)
{
	static struct vllm_v1_options h100, eager, a100, a100_eager, invariant;

	h100.compute_capability = 90;
	eager = h100;
	eager.cudagraph_mode = VLLM_V1_CUDAGRAPH_NONE;
	a100.compute_capability = 80;
	a100.max_model_len = 32768;
	a100_eager = a100;
	a100_eager.cudagraph_mode = VLLM_V1_CUDAGRAPH_PIECEWISE;
	invariant = h100;
	invariant.batch_invariant = true;
	struct engine_case c = make("vllm_v1 h100", RESERVE_VLLM_V1, llama8b_h100(16), &h100, 64, 32768);
	check_case(&c);
	c.name = "vllm_v1 h100 eager";
	c.o = &eager;
	check_case(&c);
	c = make("vllm_v1 h100 graphs past 64", RESERVE_VLLM_V1, llama8b_h100(16), &h100, 96, 32768);
	h100.max_capture_size = 64;
	check_case(&c);
	c = make("vllm_v1 a100", RESERVE_VLLM_V1, shape(108, 32, 8, 128, 16), &a100, 64, 32768);
	check_case(&c);
	c.name = "vllm_v1 a100 piecewise";
	c.o = &a100_eager;
	check_case(&c);
	c = make("vllm_v1 batch invariant", RESERVE_VLLM_V1, llama8b_h100(16), &invariant, 64, 32768);
	check_case(&c);
}

Test(reserve_sampled, vllm_triton)
{
	static const struct vllm_triton_options eager = {VLLM_TRITON_CG_NONE, 0, false};
	struct engine_case c = make("vllm_triton", RESERVE_VLLM_TRITON, llama8b_h100(16), NULL, 64, 32768);
	check_case(&c);
	c.name = "vllm_triton eager";
	c.o = &eager;
	check_case(&c);
}

Test(reserve_sampled, sglang)
{
	static const struct sglang_options dflt = {8, 0, false, 0, false, 0, 0, 0};
	static const struct sglang_options graph = {8, 0, false, 0, false, 0, 64, 160};
	static const struct sglang_options determ = {8, 0, true, 0, false, 32768, 0, 0};
	struct engine_case c = make("sglang", RESERVE_SGLANG, llama8b_h100(16), &dflt, 64, 32768);
	check_case(&c);
	c = make("sglang graph", RESERVE_SGLANG, llama8b_h100(16), &graph, 64, 32768);
	c.s.cuda_graph = true;
	check_case(&c);
	c = make("sglang deterministic", RESERVE_SGLANG, llama8b_h100(16), &determ, 64, 32768);
	check_case(&c);
}

Test(reserve_sampled, trtllm)
{
	static const struct trtllm_options determ = {true};
	struct engine_case c = make("trtllm", RESERVE_TRTLLM, llama8b_h100(64), NULL, 64, 32768);
	check_case(&c);
	c.name = "trtllm deterministic";
	c.o = &determ;
	check_case(&c);
}

Test(reserve_sampled, flashmla)
{
	struct engine_case c = make("flashmla", RESERVE_FLASHMLA, shape(132, 128, 1, 576, 64), NULL, 64,
				    32768);
	check_case(&c);
}

/* ------------------------------------------------------------ (e) exact */

Test(reserve_exact, every_size_and_longest)
{
	static struct vllm_v1_options h100, a100;
	struct engine_case c;

	h100.compute_capability = 90;
	h100.cudagraph_mode = VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE;
	h100.max_capture_size = 8;
	a100.compute_capability = 80;
	a100.cudagraph_mode = VLLM_V1_CUDAGRAPH_NONE;

	/* few SMs, so that the heuristics split and stop splitting within
	 * the bounds */
	c = make("fa2", RESERVE_FA2, shape(16, 8, 2, 128, 256), NULL, 24, 6000);
	exhaustive_by_longest(&c);
	c = make("fa3", RESERVE_FA3, shape(16, 8, 2, 128, 16), NULL, 12, 3000);
	exhaustive_by_longest(&c);
	c = make("vllm", RESERVE_VLLM, shape(16, 64, 8, 128, 16), NULL, 12, 9000);
	exhaustive_by_longest(&c);
	c = make("vllm_v1 fa3", RESERVE_VLLM_V1, shape(16, 8, 2, 128, 16), &h100, 16, 3000);
	exhaustive_by_longest(&c);
	c = make("vllm_v1 fa2", RESERVE_VLLM_V1, shape(16, 8, 2, 128, 16), &a100, 16, 3000);
	exhaustive_by_longest(&c);
	c = make("trtllm", RESERVE_TRTLLM, shape(16, 8, 2, 128, 64), NULL, 16, 4000);
	exhaustive_by_longest(&c);
	/* one KV head on many SMs: the count grows with the longest */
	c = make("trtllm mqa", RESERVE_TRTLLM, shape(132, 8, 1, 128, 64), NULL, 3, 40000);
	exhaustive_by_longest(&c);
	c = make("fa3 mqa", RESERVE_FA3, shape(132, 8, 1, 128, 16), NULL, 3, 30000);
	exhaustive_by_longest(&c);
}

/* Every multiset of page counts 1..P for n = 1..B sequences: FlashInfer's
 * plans read each request's pages, so these are every batch there is. */
static uint64_t multisets_most(const struct engine_case *c, uint32_t P, uint32_t page, bool *any)
{
	uint32_t pages[8];
	uint64_t most = 0;

	for (uint32_t n = 1; n <= c->B; n++) {
		for (uint32_t i = 0; i < n; i++) {
			pages[i] = 1;
		}
		for (;;) {
			for (uint32_t i = 0; i < n; i++) {
				batch[i] = pages[i] * page;
			}
			uint64_t bytes;
			if (bytes_of(c, batch, n, &bytes)) {
				*any = true;
				most = bytes > most ? bytes : most;
			}
			/* the next non-increasing sequence of page counts */
			int32_t i = (int32_t)n - 1;
			while (i >= 0 && pages[i] == (i == 0 ? P : pages[i - 1])) {
				i--;
			}
			if (i < 0) {
				break;
			}
			pages[i]++;
			for (uint32_t j = (uint32_t)i + 1; j < n; j++) {
				pages[j] = 1;
			}
		}
	}
	return most;
}

Test(reserve_exact, flashinfer_every_mix)
{
	static const struct flashinfer_options cuda = {false, 0, false};
	static const struct flashinfer_options tc = {true, 0, false};
	const struct {
		const char *name;
		const struct flashinfer_options *o;
		uint32_t sm, bps, B, P;
	} rows[] = {
		{"cuda cores, grid 6", &cuda, 3, 2, 6, 12},
		{"cuda cores, grid 8, few pages", &cuda, 4, 2, 7, 3},
		{"cuda cores, grid 4, B 2", &cuda, 2, 2, 2, 40},
		{"tensor cores, 6 CTAs", &tc, 3, 0, 6, 12},
		{"tensor cores, 10 CTAs", &tc, 5, 0, 7, 5},
	};

	for (unsigned k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		struct engine_case c = make(rows[k].name, RESERVE_FLASHINFER, shape(rows[k].sm, 2, 1, 128, 16),
					    rows[k].o, rows[k].B, rows[k].P * 16);
		c.s.blocks_per_sm = rows[k].bps;
		struct reserve_answer r = reserve_ok(&c);
		bool any = false;
		check_witness(&c, &r);
		uint64_t most = multisets_most(&c, rows[k].P, 16, &any);
		cr_assert(any);
		cr_assert_eq(most, r.workspace_bytes, "%s: every mix's most %llu, reserve %llu",
			     c.name, (unsigned long long)most, (unsigned long long)r.workspace_bytes);
		cr_log_info("flashinfer %s: every mix of %u sequences of 1..%u pages, reserve %llu = "
			    "their most",
			    c.name, c.B, rows[k].P, (unsigned long long)most);
	}
}

/* ------------------------------------------------------------ (c) grid */

static const uint32_t grid_n[] = {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64};
static const uint32_t grid_len[] = {1,    2,    15,   16,   17,    127,   128,   129,  255,
				    256,  257,  511,  512,  513,   1000,  4096,  4097, 8191,
				    8192, 8193, 16384, 20000, 32767, 32768};
#define GRID_N (sizeof grid_n / sizeof grid_n[0])
#define GRID_LEN (sizeof grid_len / sizeof grid_len[0])

/* The grid's batch (n, len) of one form: 0 uniform, 1 a mix whose every
 * length is at most len (one of them len), reproducible from (n, len). */
static void grid_batch(uint32_t n, uint32_t len, unsigned form)
{
	for (uint32_t i = 0; i < n; i++) {
		if (form == 0 || i == 0) {
			batch[i] = len;
		} else {
			batch[i] = 1 + (uint32_t)((i * 2654435761u + len) % len);
		}
	}
}

/* Claims: bytes(n, len) <= bytes(n', len') for n <= n', len <= len', on
 * the uniform grid and on the mixed one (every length of the smaller
 * batch at most the larger's, which the mixed form gives only for equal
 * n: it is compared with the uniform batch of the larger). by_n_only:
 * the bytes read the batch's size alone (every form of a size equal). */
static void grid_monotone(const struct engine_case *c, bool by_n_only)
{
	uint64_t bytes[GRID_N][GRID_LEN];
	bool ok[GRID_N][GRID_LEN];
	unsigned pairs = 0;

	for (unsigned i = 0; i < GRID_N; i++) {
		for (unsigned j = 0; j < GRID_LEN; j++) {
			ok[i][j] = false;
			if (grid_n[i] > c->B || grid_len[j] > c->L) {
				continue;
			}
			grid_batch(grid_n[i], grid_len[j], 0);
			ok[i][j] = bytes_of(c, batch, grid_n[i], &bytes[i][j]);
			uint64_t mixed;
			grid_batch(grid_n[i], grid_len[j], 1);
			if (ok[i][j] && bytes_of(c, batch, grid_n[i], &mixed)) {
				/* a mix below the uniform batch of its longest */
				cr_assert(mixed <= bytes[i][j], "%s: mixed (%u, %u) %llu > uniform %llu",
					  c->name, grid_n[i], grid_len[j], (unsigned long long)mixed,
					  (unsigned long long)bytes[i][j]);
				if (by_n_only) {
					cr_assert_eq(mixed, bytes[i][j], "%s: (%u, %u)", c->name,
						     grid_n[i], grid_len[j]);
				}
			}
		}
	}
	for (unsigned i = 0; i < GRID_N; i++) {
		for (unsigned j = 0; j < GRID_LEN; j++) {
			for (unsigned i2 = i; i2 < GRID_N && ok[i][j]; i2++) {
				for (unsigned j2 = j; j2 < GRID_LEN; j2++) {
					if (!ok[i2][j2]) {
						continue;
					}
					pairs++;
					cr_assert(bytes[i][j] <= bytes[i2][j2],
						  "%s: (%u, %u) %llu > (%u, %u) %llu", c->name, grid_n[i],
						  grid_len[j], (unsigned long long)bytes[i][j], grid_n[i2],
						  grid_len[j2], (unsigned long long)bytes[i2][j2]);
					if (by_n_only && i2 == i) {
						cr_assert_eq(bytes[i][j], bytes[i2][j2], "%s", c->name);
					}
				}
			}
		}
	}
	cr_assert(pairs > 0);
	cr_log_info("%s: monotone over %u grid pairs", c->name, pairs);
}

/* Fixed: every answered batch of the grid has the same bytes. */
static void grid_fixed(const struct engine_case *c)
{
	uint64_t first = 0;
	unsigned answered = 0;

	for (unsigned i = 0; i < GRID_N; i++) {
		for (unsigned j = 0; j < GRID_LEN; j++) {
			for (unsigned form = 0; form < 2; form++) {
				uint64_t bytes;
				if (grid_n[i] > c->B || grid_len[j] > c->L) {
					continue;
				}
				grid_batch(grid_n[i], grid_len[j], form);
				if (!bytes_of(c, batch, grid_n[i], &bytes)) {
					continue;
				}
				if (answered++ == 0) {
					first = bytes;
				}
				cr_assert_eq(bytes, first, "%s: (%u, %u) %llu, not %llu", c->name,
					     grid_n[i], grid_len[j], (unsigned long long)bytes,
					     (unsigned long long)first);
			}
		}
	}
	cr_assert(answered > 0);
	cr_log_info("%s: one buffer over %u grid batches", c->name, answered);
}

Test(reserve_grid, monotone_engines)
{
	static const struct flashinfer_options fss = {true, 64, false};
	static const struct flashinfer_options tc = {true, 0, false};
	static const struct sglang_options dflt = {8, 0, false, 0, false, 0, 0, 0};
	struct engine_case c;

	c = make("fa2 num_splits 4", RESERVE_FA2, llama8b_h100(256), NULL, 64, 32768);
	c.s.num_splits = 4;
	grid_monotone(&c, true);
	c = make("fa3 num_splits 8", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768);
	c.s.num_splits = 8;
	grid_monotone(&c, true);
	/* the heuristic: its count grows with the longest up to 128 splits
	 * where one KV head leaves the SMs idle */
	c = make("fa3", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768);
	grid_monotone(&c, false);
	c = make("fa3 mqa", RESERVE_FA3, shape(132, 16, 1, 128, 16), NULL, 64, 32768);
	grid_monotone(&c, false);
	c = make("fa3 mqa page 64 d 64", RESERVE_FA3, shape(114, 8, 1, 64, 64), NULL, 64, 32768);
	grid_monotone(&c, false);
	c = make("flashinfer tc fixed_split_size", RESERVE_FLASHINFER, llama8b_h100(16), &fss, 64, 32768);
	grid_monotone(&c, false);
	c = make("flashinfer tc graph", RESERVE_FLASHINFER, llama8b_h100(16), &tc, 64, 32768);
	c.s.cuda_graph = true;
	grid_monotone(&c, true);
	c = make("sglang", RESERVE_SGLANG, llama8b_h100(16), &dflt, 64, 32768);
	grid_monotone(&c, true);
	c = make("flashmla", RESERVE_FLASHMLA, shape(132, 128, 1, 576, 64), NULL, 64, 32768);
	grid_monotone(&c, true);
}

Test(reserve_grid, fixed_buffers)
{
	static const struct flashinfer_options cuda = {false, 0, false};
	static const struct sglang_options graph = {8, 0, false, 0, false, 0, 64, 160};
	struct engine_case c;

	c = make("vllm_triton", RESERVE_VLLM_TRITON, llama8b_h100(16), NULL, 64, 32768);
	grid_fixed(&c);
	c = make("sglang graph", RESERVE_SGLANG, llama8b_h100(16), &graph, 64, 32768);
	c.s.cuda_graph = true;
	grid_fixed(&c);
	/* FlashInfer's CUDA-core graph: a split launch (n * 8 < 264) holds one
	 * buffer; n >= 33 does not split */
	c = make("flashinfer graph", RESERVE_FLASHINFER, llama8b_h100(16), &cuda, 32, 32768);
	c.s.blocks_per_sm = 2;
	c.s.cuda_graph = true;
	grid_fixed(&c);
}

/* The proofs' steps for the searched engines, on the grid: FA3's scratch
 * is its count for the longest times n; vLLM's never falls as the longest
 * grows at a fixed n; vLLM V1 under a full graph reads no length. */
Test(reserve_grid, search_steps)
{
	struct engine_case c = make("fa3", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768);
	for (unsigned j = 0; j < GRID_LEN; j++) {
		uint64_t one;
		grid_batch(1, grid_len[j], 0);
		cr_assert(bytes_of(&c, batch, 1, &one));
		for (unsigned i = 0; i < GRID_N; i++) {
			uint64_t bytes;
			grid_batch(grid_n[i], grid_len[j], 1);
			cr_assert(bytes_of(&c, batch, grid_n[i], &bytes));
			cr_assert_eq(bytes, one * grid_n[i], "fa3 (%u, %u)", grid_n[i], grid_len[j]);
		}
	}
	c = make("vllm", RESERVE_VLLM, llama8b_h100(16), NULL, 64, 32768);
	for (unsigned i = 0; i < GRID_N; i++) {
		uint64_t last = 0;
		for (unsigned j = 0; j < GRID_LEN; j++) {
			uint64_t bytes;
			grid_batch(grid_n[i], grid_len[j], 1);
			cr_assert(bytes_of(&c, batch, grid_n[i], &bytes));
			cr_assert(bytes >= last, "vllm (%u, %u)", grid_n[i], grid_len[j]);
			last = bytes;
		}
	}
	static struct vllm_v1_options h100;
	h100.compute_capability = 90;
	c = make("vllm_v1", RESERVE_VLLM_V1, llama8b_h100(16), &h100, 64, 32768);
	for (unsigned i = 0; i < GRID_N; i++) {
		uint64_t first = 0;
		for (unsigned j = 0; j < GRID_LEN; j++) {
			uint64_t bytes;
			grid_batch(grid_n[i], grid_len[j], 1);
			cr_assert(bytes_of(&c, batch, grid_n[i], &bytes));
			if (j == 0) {
				first = bytes;
			}
			cr_assert_eq(bytes, first, "vllm_v1 full graph (%u, %u)", grid_n[i], grid_len[j]);
		}
	}
}

/* ------------------------------------------------------------ (d) */

Test(reserve_refused, bad_bounds)
{
	const struct engine_shape s = llama8b_h100(256);
	const struct {
		enum reserve_engine e;
		uint32_t B, L;
		bool arrays;
		const char *input;
	} rows[] = {
		{RESERVE_FA2, 0, 1024, true, "max_batch_size"},
		{RESERVE_FA2, ENGINE_MAX_SEQS + 1, 1024, true, "max_batch_size"},
		{RESERVE_FA2, UINT32_MAX, 1024, true, "max_batch_size"},
		{RESERVE_FA2, 16, 0, true, "max_model_len"},
		{RESERVE_FA2, 16, ENGINE_MAX_SEQ_LEN + 1u, true, "max_model_len"},
		{RESERVE_FA2, 16, UINT32_MAX, true, "max_model_len"},
		{RESERVE_FA2, 16, 1024, false, "witness"},
		{RESERVE_ENGINES, 16, 1024, true, "engine"},
		{(enum reserve_engine)77, 16, 1024, true, "engine"},
	};

	for (unsigned k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		struct reserve_answer r = reserve_worst(rows[k].e, &s, NULL, rows[k].B, rows[k].L,
							rows[k].arrays ? witness : NULL, scratch);
		cr_assert_eq(r.status, ENGINE_REFUSED, "row %u", k);
		cr_assert_not_null(r.refused, "row %u", k);
		cr_assert_str_eq(r.refused_input, rows[k].input, "row %u", k);
		cr_assert_eq(r.workspace_bytes, 0);
		cr_assert_eq(r.witness_len, 0);
	}
	/* the edges themselves are answered */
	struct reserve_answer r = reserve_worst(RESERVE_FLASHMLA, &s, NULL, ENGINE_MAX_SEQS,
						ENGINE_MAX_SEQ_LEN, witness, scratch);
	(void)r; /* FlashMLA refuses this shape (head_dim 128): its own reason */
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "head_dim");
	r = reserve_worst(RESERVE_SGLANG, &s, NULL, ENGINE_MAX_SEQS, 1, witness, scratch);
	cr_assert_eq(r.status, ENGINE_OK, "%s", r.refused ? r.refused : "");
	cr_assert_eq(r.witness_len, ENGINE_MAX_SEQS);
}

Test(reserve_refused, no_batch_answered)
{
	/* FA2 takes pages of 256 and more: page_size 16 refuses every batch */
	struct engine_shape s = llama8b_h100(16);
	struct reserve_answer r = reserve_worst(RESERVE_FA2, &s, NULL, 8, 1024, witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "page_size");
	/* vLLM V1 needs its compute capability */
	r = reserve_worst(RESERVE_VLLM_V1, &s, NULL, 8, 1024, witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "compute_capability");
	/* FA3's int total_k, num_seqs * page_size, past 2^31 - 1 for 1100
	 * sequences of 2^21-token pages: the corner the proof needs is
	 * refused, so the reserve is, though one sequence is answered */
	s = llama8b_h100(1u << 21);
	r = reserve_worst(RESERVE_FA3, &s, NULL, 1100, 100, witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "num_seqs");
	r = reserve_worst(RESERVE_FA3, &s, NULL, 1, 100, witness, scratch);
	cr_assert_eq(r.status, ENGINE_OK, "%s", r.refused ? r.refused : "");
	/* TensorRT-LLM hands every batch this small to masked MHA */
	s = shape(132, 32, 8, 128, 64);
	r = reserve_worst(RESERVE_TRTLLM, &s, NULL, 1, 100, witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "seq_lens");
}

Test(reserve_refused, a_search_past_its_cap)
{
	const struct engine_shape s = shape(132, 32, 8, 128, 64);
	struct reserve_answer r = reserve_worst(RESERVE_TRTLLM, &s, NULL, ENGINE_MAX_SEQS, 1u << 20,
						witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "max_batch_size");
	cr_assert(r.work <= RESERVE_WORK_MAX);
	cr_assert(strstr(r.refused, "RESERVE_WORK_MAX") != NULL);
}

/* FlashInfer's CUDA-core bound is refused where its uint32_t products
 * could wrap: 4096 sequences of 2^31 - 1 tokens over 64 KV heads. */
Test(reserve_refused, flashinfer_wrap)
{
	struct engine_shape s = shape(132, 64, 64, 128, 1);
	s.blocks_per_sm = 1;
	struct reserve_answer r = reserve_worst(RESERVE_FLASHINFER, &s, NULL, ENGINE_MAX_SEQS,
						ENGINE_MAX_SEQ_LEN, witness, scratch);
	cr_assert_eq(r.status, ENGINE_REFUSED);
	cr_assert_str_eq(r.refused_input, "max_model_len");
}

/* The README's question: Llama-3.1-8B on an H100, 64 sequences, 32k
 * context, every engine answers (FlashMLA aside: not an MLA model). */
Test(reserve_answers, llama8b_h100_64_by_32k)
{
	static const struct flashinfer_options tc = {true, 0, false};
	static struct vllm_v1_options v1;
	v1.compute_capability = 90;
	struct engine_case cases[] = {
		make("fa2", RESERVE_FA2, llama8b_h100(256), NULL, 64, 32768),
		make("fa3", RESERVE_FA3, llama8b_h100(16), NULL, 64, 32768),
		make("flashinfer", RESERVE_FLASHINFER, llama8b_h100(16), NULL, 64, 32768),
		make("flashinfer tc", RESERVE_FLASHINFER, llama8b_h100(16), &tc, 64, 32768),
		make("vllm", RESERVE_VLLM, llama8b_h100(16), NULL, 64, 32768),
		make("vllm_v1", RESERVE_VLLM_V1, llama8b_h100(16), &v1, 64, 32768),
		make("vllm_triton", RESERVE_VLLM_TRITON, llama8b_h100(16), NULL, 64, 32768),
		make("sglang", RESERVE_SGLANG, llama8b_h100(16), NULL, 64, 32768),
		make("trtllm", RESERVE_TRTLLM, llama8b_h100(64), NULL, 64, 32768),
	};
	cases[2].s.blocks_per_sm = 2;
	for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct reserve_answer r = reserve_ok(&cases[k]);
		check_witness(&cases[k], &r);
		cr_log_info("%-14s %12llu bytes (%s, witness of %u, longest %u)", cases[k].name,
			    (unsigned long long)r.workspace_bytes, r.method_name, r.witness_len,
			    witness[0]);
	}
}

/* FlashInfer refuses every split launch at head_dim 96 (its merge has no
 * kernel for it): the most any answered batch holds is 0, on every path
 * that can also run whole. */
Test(reserve_answers, flashinfer_merge_refuses_every_split)
{
	static const struct flashinfer_options paths[] = {
		{false, 0, false}, {true, 0, false}, {true, 4, false}};

	for (unsigned k = 0; k < sizeof paths / sizeof paths[0]; k++) {
		struct engine_case c = make("flashinfer head_dim 96", RESERVE_FLASHINFER,
					    shape(8, 8, 2, 96, 16), &paths[k], 6, 1000);
		c.s.blocks_per_sm = 1;
		struct reserve_answer r = reserve_ok(&c);
		check_witness(&c, &r);
		cr_assert_eq(r.workspace_bytes, 0, "path %u", k);
		sample(&c, &r, 20000);
	}
}

/* vLLM V1's FA2 under full graphs needs the max_model_len the graphs were
 * captured with; left 0, the reserve takes its own. */
Test(reserve_answers, vllm_v1_graphs_take_the_reserves_max_model_len)
{
	static struct vllm_v1_options unset, given;
	unset.compute_capability = 80;
	given = unset;
	given.max_model_len = 32768;
	struct engine_case c = make("vllm_v1 a100", RESERVE_VLLM_V1, shape(108, 32, 8, 128, 16), &unset,
				    64, 32768);
	struct reserve_answer a = reserve_ok(&c);
	c.o = &given;
	struct reserve_answer b = reserve_ok(&c);
	check_witness(&c, &b);
	cr_assert_eq(a.workspace_bytes, b.workspace_bytes);
	cr_assert_eq(a.witness_len, b.witness_len);
}

/* The most any batch holds, over every batch of a small bound: every
 * (size, longest) pair, uniform and one long beside ones, where the
 * scratch reads the size and longest; every multiset of page counts for
 * FlashInfer, whose plans read each request's pages. *any: one answered. */
static uint64_t every_batch_most(const struct engine_case *c, bool *any)
{
	uint64_t most = 0, bytes;

	*any = false;
	if (c->e == RESERVE_FLASHINFER) {
		const uint32_t P = (c->L + c->s.page_size - 1) / c->s.page_size;
		uint32_t pages[8];
		for (uint32_t n = 1; n <= c->B; n++) {
			for (uint32_t i = 0; i < n; i++) {
				pages[i] = 1;
			}
			for (;;) {
				for (uint32_t i = 0; i < n; i++) {
					const uint32_t len = pages[i] * c->s.page_size;
					batch[i] = len > c->L ? c->L : len;
				}
				if (bytes_of(c, batch, n, &bytes)) {
					*any = true;
					most = bytes > most ? bytes : most;
				}
				int32_t i = (int32_t)n - 1;
				while (i >= 0 && pages[i] == (i == 0 ? P : pages[i - 1])) {
					i--;
				}
				if (i < 0) {
					break;
				}
				pages[i]++;
				for (uint32_t j = (uint32_t)i + 1; j < n; j++) {
					pages[j] = 1;
				}
			}
		}
		return most;
	}
	for (uint32_t n = 1; n <= c->B; n++) {
		for (uint32_t len = 1; len <= c->L; len++) {
			for (unsigned form = 0; form < 2; form++) {
				for (uint32_t i = 0; i < n; i++) {
					batch[i] = form == 0 || i == 0 ? len : 1;
				}
				if (bytes_of(c, batch, n, &bytes)) {
					*any = true;
					most = bytes > most ? bytes : most;
				}
			}
		}
	}
	return most;
}

static uint32_t pick(const uint32_t *from, unsigned count)
{
	return from[rnd() % count];
}

/* 1,500 random small shapes and settings, every engine but FlashMLA
 * (one shape only): the reserve is every batch's most exactly, and a
 * refused reserve is one no batch is answered for. */
Test(reserve_exact, random_small_shapes)
{
	static const uint32_t sms[] = {1, 2, 3, 4, 7, 8, 16, 20, 33, 64, 108, 132};
	static const uint32_t kvs[] = {1, 2, 4, 8};
	static const uint32_t groups[] = {1, 2, 3, 4, 6, 8, 16};
	static const uint32_t head_dims[] = {64, 96, 128, 256};
	static const uint32_t pages_fa2[] = {256, 512};
	static const uint32_t pages_any[] = {1, 3, 16, 64};
	static const uint32_t pages_16[] = {16, 32, 64};
	static const uint32_t pages_xqa[] = {16, 32, 64, 128};
	unsigned answered = 0, refused = 0;

	for (unsigned it = 0; it < 1500; it++) {
		struct flashinfer_options fi = {rnd() % 2 == 0, 0, false};
		struct vllm_v1_options v1;
		struct sglang_options sg = {1 + (uint32_t)(rnd() % 8), 0, false, 0, false, 0, 0, 0};
		const void *o = NULL;
		enum reserve_engine e = (enum reserve_engine)(rnd() % 8);
		struct engine_shape s = shape(pick(sms, 12), 1, pick(kvs, 4), pick(head_dims, 4), 16);

		s.num_q_heads = s.num_kv_heads * pick(groups, 7);
		s.blocks_per_sm = 1 + (uint32_t)(rnd() % 2);
		s.cuda_graph = rnd() % 3 == 0;
		memset(&v1, 0, sizeof v1);
		v1.compute_capability = rnd() % 2 ? 90 : 80;
		v1.cudagraph_mode = (enum vllm_v1_cudagraph_mode)(rnd() % 4);
		v1.max_capture_size = 1 + (uint32_t)(rnd() % 12);
		uint32_t B = 1 + (uint32_t)(rnd() % 10), L = 1 + (uint32_t)(rnd() % 3000);
		switch (e) {
		case RESERVE_FA2:
			s.page_size = pick(pages_fa2, 2);
			L = 1 + (uint32_t)(rnd() % 8000);
			break;
		case RESERVE_FA3:
			s.page_size = pick(pages_any, 4);
			break;
		case RESERVE_FLASHINFER:
			s.page_size = pick(pages_16, 3);
			if (fi.tensor_cores && rnd() % 3 == 0) {
				fi.fixed_split_size = 1 + (uint32_t)(rnd() % 4);
			}
			fi.disable_split_kv = fi.tensor_cores && rnd() % 5 == 0;
			L = 1 + (uint32_t)(rnd() % (s.page_size * 12));
			B = B > 6 ? 6 : B;
			o = &fi;
			break;
		case RESERVE_VLLM_V1:
			s.page_size = pick(pages_16, 3);
			v1.max_model_len = rnd() % 2 ? 0 : L + (uint32_t)(rnd() % 100);
			o = &v1;
			break;
		case RESERVE_TRTLLM:
			s.page_size = pick(pages_xqa, 4);
			L = 1 + (uint32_t)(rnd() % 6000);
			break;
		case RESERVE_SGLANG:
			if (s.cuda_graph) {
				sg.cuda_graph_bs = B + (uint32_t)(rnd() % 3);
				sg.cuda_graph_max_bs = sg.cuda_graph_bs + (uint32_t)(rnd() % 5);
			}
			o = &sg;
			break;
		default:
			s.page_size = pick(pages_16, 3);
			break;
		}
		struct engine_case c = make("random", e, s, o, B, L);
		struct reserve_answer r = reserve_worst(e, &c.s, o, B, L, witness, scratch);
		if (e == RESERVE_VLLM_V1 && v1.max_model_len == 0) {
			v1.max_model_len = L; /* as the reserve takes it (reserve.h) */
		}
		bool any;
		uint64_t most = every_batch_most(&c, &any);
		if (r.status != ENGINE_OK) {
			refused++;
			cr_assert(!any, "engine %d sm %u q %u kv %u d %u page %u graph %d B %u L %u: "
				  "refused (%s) though a batch holds %llu",
				  e, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim, s.page_size,
				  s.cuda_graph, B, L, r.refused, (unsigned long long)most);
			continue;
		}
		answered++;
		check_witness(&c, &r);
		cr_assert_eq(r.workspace_bytes, most,
			     "engine %d sm %u q %u kv %u d %u page %u graph %d B %u L %u: reserve %llu, "
			     "every batch's most %llu",
			     e, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim, s.page_size,
			     s.cuda_graph, B, L, (unsigned long long)r.workspace_bytes,
			     (unsigned long long)most);
	}
	cr_log_info("random small shapes: 1500, %u answered and equal to every batch's most, %u "
		    "refused where no batch is answered",
		    answered, refused);
}

/* Bounds at the engines' int32 limit, where some lengths are refused for
 * their length alone: the reserve still holds every answered batch. */
Test(reserve_sampled, int32_lengths)
{
	static struct vllm_v1_options h100, a100;
	static const struct flashinfer_options tc = {true, 0, false};
	h100.compute_capability = 90;
	a100.compute_capability = 80;
	a100.cudagraph_mode = VLLM_V1_CUDAGRAPH_NONE;
	const uint32_t L = ENGINE_MAX_SEQ_LEN;
	struct engine_case cases[] = {
		make("fa2", RESERVE_FA2, llama8b_h100(256), NULL, 32, L),
		make("flashinfer tc", RESERVE_FLASHINFER, llama8b_h100(16), &tc, 32, L),
		make("vllm", RESERVE_VLLM, llama8b_h100(16), NULL, 32, L),
		make("vllm_v1 h100", RESERVE_VLLM_V1, llama8b_h100(16), &h100, 600, L),
		make("vllm_v1 a100 eager", RESERVE_VLLM_V1, shape(108, 32, 8, 128, 16), &a100, 32, L),
		make("vllm_triton", RESERVE_VLLM_TRITON, llama8b_h100(16), NULL, 32, L),
		make("sglang", RESERVE_SGLANG, llama8b_h100(16), NULL, 32, L),
		make("trtllm", RESERVE_TRTLLM, llama8b_h100(64), NULL, 16, L),
	};
	for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		check_case(&cases[k]);
	}
}
