/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_vllm_triton — vllm_triton_launch_batch over N pseudo-random
 * mixed decode batches under one setting of vLLM's configuration, as
 * variable-length binary records on stdout for the second implementation
 * (tests/engines/oracle_batch_vllm_triton.rs) to recompute and compare.
 *
 * usage: sweep_batch_vllm_triton N SEED graph|eager|invariant > records
 *
 *   graph      cudagraph_mode FULL_AND_PIECEWISE, FULL_DECODE_ONLY or FULL:
 *              the threshold snapped to a capture size (max_capture_size
 *              unset half the time, else 1..1024 with its small edges)
 *   eager      NONE or PIECEWISE: the threshold 128 // num_kv_heads
 *   invariant  VLLM_BATCH_INVARIANT under any mode: the 2D kernel always
 *
 * A record, little-endian u32s: num_seqs (n); the inputs num_q_heads,
 * num_kv_heads, head_dim, page_size, num_splits, cudagraph_mode,
 * max_capture_size, batch_invariant; the n seq_lens; then status,
 * num_splits, num_splits_bound, workspace_bytes (low, high); then n by_seq
 * (0 when refused). 4 * (14 + 2n) bytes.
 *
 * The batches: 1 to 1,200 sequences, most of them (seven in ten) 1 to 128,
 * each power of two as likely as the next, so that the 3D kernel (at most
 * 128 // num_kv_heads sequences) runs often; the rest 1 to 1,200. Lengths
 * 1 to 200,000 in mixes that matter (all equal; one long beside many
 * short; all different; a few lengths repeated; two clusters; lengths
 * around the segment edges, 1..600). KV heads 1..256 (past 128 the
 * threshold is 0 without a full graph), GQA groups 1..8 and now and then up
 * to 80, head sizes 1..1024 (below 32 refused), pages mostly multiples of
 * 16 (one in fifty any size, refused unless a multiple). A few batches in
 * a thousand break a bound (no sequence, a zero or over-long length,
 * lengths that wrap the kernels' int32 sums, too many sequences, a
 * num_splits argument, an unknown mode, a scratch past 2^64 bytes), to be
 * refused alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vllm_triton.h"
#include "sweep_rng.h"

static const uint32_t head_dims[] = {16, 31, 32, 64, 80, 96, 112, 128, 192, 256, 512, 576, 1024};
static const uint32_t pages[] = {16, 32, 48, 64, 128, 256, 512, 1024};
static const uint32_t kv_heads[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 32, 40, 64, 128, 129};
static const uint32_t captures[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 24, 100, 255, 256, 512};

/* a length of 1..200,000 tokens, small ones as densely as large ones */
static uint32_t length(void)
{
	switch (next() % 8) {
	case 0:
		return uniform(1, 600); /* the segment edges: 16, 256, 257, ... */
	case 1:
	case 2:
	case 3:
		return logish(1, 200000);
	default:
		return uniform(1, 200000);
	}
}

#define MAX_N (ENGINE_MAX_SEQS + 1)

static uint32_t lens[MAX_N], by_seq[MAX_N];

/* Fills lens[0..n) with one of the mixes; returns n. */
static uint32_t batch(void)
{
	uint32_t n = next() % 10 < 7 ? logish(1, 128) : (next() % 2 ? logish(1, 1200) : uniform(1, 1200));
	if (next() % 4000 == 0) {
		n = next() % 2 ? 0 : ENGINE_MAX_SEQS + 1;
	}
	switch (next() % 5) {
	case 0: { /* all equal */
		uint32_t l = length();
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = l;
		}
		break;
	}
	case 1: { /* one long beside many short, anywhere in the batch */
		uint32_t short_max = logish(1, 4096);
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = uniform(1, short_max);
		}
		if (n > 0) {
			lens[next() % n] = uniform(8192, 200000);
		}
		break;
	}
	case 2: /* all different (as random lengths are) */
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = length();
		}
		break;
	case 3: { /* a few lengths, repeated */
		uint32_t few[3] = {length(), length(), length()};
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = few[next() % 3];
		}
		break;
	}
	default: { /* two clusters: long and short, each spread a little */
		uint32_t hi = uniform(2000, 200000), lo = uniform(1, 1000);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t c = next() % 3 == 0 ? hi : lo;
			lens[i] = c - (uint32_t)(next() % (c / 8 + 1));
		}
		break;
	}
	}
	if (n > 0 && n <= ENGINE_MAX_SEQS && next() % 500 == 0) {
		/* a length the batch refuses, or near the kernels' int32 edges */
		switch (next() % 4) {
		case 0:
			lens[next() % n] = 0;
			break;
		case 1:
			lens[next() % n] = ENGINE_MAX_SEQ_LEN + uniform(1, 1000);
			break;
		case 2: /* the 3D kernel wraps from 2021161081 or so */
			lens[next() % n] = uniform(2021161000u, 2021161200u);
			break;
		default: /* the 2D kernel from 2147483617 */
			lens[next() % n] = uniform(2147483580u, ENGINE_MAX_SEQ_LEN);
			break;
		}
	}
	return n;
}

enum setting { GRAPH, EAGER, INVARIANT };

static void shape(struct engine_shape *s, struct vllm_triton_options *o, enum setting set)
{
	memset(s, 0, sizeof *s);
	s->num_kv_heads = next() % 2 ? logish(1, 256) : PICK(kv_heads);
	if (next() % 4000 == 0) {
		s->num_kv_heads = 0;
	}
	uint32_t group = next() % 8 == 0 ? uniform(1, 80) : uniform(1, 8);
	s->num_q_heads = s->num_kv_heads * group;
	if (next() % 64 == 0) {
		s->num_q_heads += uniform(1, s->num_kv_heads + 1); /* a group that does not divide */
	}
	s->head_dim = next() % 2 ? PICK(head_dims) : uniform(next() % 20 ? 32 : 1, 600);
	if (next() % 2000 == 0) { /* a scratch past 2^64 bytes, or not quite */
		s->num_kv_heads = 1;
		s->num_q_heads = uniform(1u << 28, 0xffffffffu);
		s->head_dim = uniform(1u << 28, 0xffffffffu);
	}
	s->page_size = next() % 50 == 0 ? uniform(1, 1024) : PICK(pages);
	if (next() % 4000 == 0) {
		s->page_size = 0;
	}
	s->num_splits = next() % 200 == 0 ? logish(1, 256) : 0;
	/* not read: noise */
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();
	s->sm_count = (uint32_t)next();
	s->blocks_per_sm = (uint32_t)next();
	s->cuda_graph = next() % 2;

	o->max_capture_size = 0;
	o->batch_invariant = set == INVARIANT;
	switch (set) {
	case GRAPH: {
		static const enum vllm_triton_cudagraph_mode full[] = {
			VLLM_TRITON_CG_FULL_AND_PIECEWISE, VLLM_TRITON_CG_FULL_DECODE_ONLY,
			VLLM_TRITON_CG_FULL};
		o->cudagraph_mode = full[next() % 3];
		if (next() % 2) {
			o->max_capture_size = next() % 2 ? PICK(captures) : logish(1, 1024);
		}
		break;
	}
	case EAGER:
		o->cudagraph_mode = next() % 2 ? VLLM_TRITON_CG_NONE : VLLM_TRITON_CG_PIECEWISE;
		break;
	default:
		o->cudagraph_mode = (enum vllm_triton_cudagraph_mode)uniform(0, 4);
		if (next() % 2) {
			o->max_capture_size = logish(1, 1024);
		}
		break;
	}
	if (next() % 4000 == 0) {
		o->cudagraph_mode = (enum vllm_triton_cudagraph_mode)uniform(5, 1000);
	}
}

static unsigned char out[4 * (14 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	static const char *const names[] = {"graph", "eager", "invariant"};
	int set = -1;

	for (int i = 0; argc == 4 && i < 3; i++) {
		if (strcmp(argv[3], names[i]) == 0) {
			set = i;
		}
	}
	if (set < 0) {
		fprintf(stderr, "usage: %s N SEED graph|eager|invariant\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10) ^ (0x7674u + (unsigned)set);

	for (unsigned long long k = 0; k < count; k++) {
		struct engine_shape s;
		struct vllm_triton_options o;
		shape(&s, &o, (enum setting)set);
		const uint32_t n = batch();
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		const struct engine_answer a = vllm_triton_launch_batch(&s, &b, &o, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[9] = {n, s.num_q_heads, s.num_kv_heads, s.head_dim, s.page_size,
					s.num_splits, (uint32_t)o.cudagraph_mode, o.max_capture_size,
					o.batch_invariant};
		for (int i = 0; i < 9; i++, p += 4) {
			put32(p, in[i]);
		}
		for (uint32_t i = 0; i < n; i++, p += 4) {
			put32(p, lens[i]);
		}
		const uint64_t ws = ok ? a.workspace_bytes : 0;
		const uint32_t tail[5] = {(uint32_t)a.status, ok ? a.num_splits : 0,
					  ok ? a.num_splits_bound : 0, (uint32_t)ws, (uint32_t)(ws >> 32)};
		for (int i = 0; i < 5; i++, p += 4) {
			put32(p, tail[i]);
		}
		for (uint32_t i = 0; i < n; i++, p += 4) {
			put32(p, ok ? by_seq[i] : 0);
		}
		if (fwrite(out, (size_t)(p - out), 1, stdout) != 1) {
			perror("sweep_batch_vllm_triton: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
