/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_vllm_v1 — vllm_v1_launch_batch over N pseudo-random mixed
 * decode batches in one of four settings, as variable-length binary
 * records on stdout for the second implementation
 * (tests/engines/oracle_batch_vllm_v1.rs) to recompute and compare.
 *
 * usage: sweep_batch_vllm_v1 N SEED fa3-graph|fa3-eager|fa2|wide > records
 *
 * A record, little-endian u32s: num_seqs (n); the inputs sm_count,
 * num_q_heads, num_kv_heads, head_dim, page_size, num_splits,
 * compute_capability, cudagraph_mode, max_capture_size, batch_invariant,
 * max_model_len, options_given (0: NULL was passed); the n seq_lens; then
 * status, num_splits, num_splits_bound, workspace_bytes (low, high); then
 * n by_seq (0 when refused). 4 * (18 + 2n) bytes.
 *
 * The batches: 1 to 1,200 sequences (half of them 1 to 64, each power of
 * two as likely as the next; a quarter 1 to 1,200 the same way; a quarter
 * uniform), lengths 1 to 200,000 in mixes that matter (all equal; one long
 * beside many short; all different; a few lengths repeated; two
 * clusters). A few batches in a thousand break a bound (no sequence, a
 * zero or over-long length, lengths at the edge of upstream's int sums).
 *
 * The settings, one per code path:
 * fa3-graph: compute capability 9.x, FULL_AND_PIECEWISE or
 *   FULL_DECODE_ONLY, capture sizes mostly up to 512 (some others): the
 *   padded batch and max_num_splits 32, or past the capture sizes the
 *   heuristic; batch invariance now and then.
 * fa3-eager: 9.x, NONE or PIECEWISE: get_num_splits' bound.
 * fa2: 8.x, 11.x, 12.x, or 10.x under batch invariance, every mode, a
 *   max_model_len mostly at or above the longest sequence (sometimes 0 or
 *   below it): the capture's count under a full graph, or the batch's.
 * wide: every input varied: compute capabilities refused or not, odd
 *   head sizes and block sizes, groups that do not divide, SM counts to
 *   2^32 - 1, q heads past INT32_MAX, a non-zero num_splits, an unknown
 *   cudagraph_mode, NULL options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vllm_v1.h"
#include "sweep_rng.h"

static const uint32_t hopper_sms[] = {132, 114, 78, 66, 144, 108};
static const uint32_t other_sms[] = {108, 84, 82, 46, 58, 142, 148, 188, 170, 68, 28};
static const uint32_t head_dims[] = {128, 64, 96, 80, 112, 192, 256, 72, 160, 40};
static const uint32_t odd_head_dims[] = {100, 257, 264, 512, 4, 130};
static const uint32_t pages[] = {16, 32, 64, 128, 256, 48, 512, 8, 24, 1};
/* (q, kv) per GPU of common models: Llama-3.1-8B, 70B at TP 8 and 4,
 * Qwen, Mistral, MHA models, MQA */
static const uint32_t heads[][2] = {{32, 8}, {8, 1}, {16, 2}, {64, 8}, {28, 4}, {40, 8},
				     {32, 32}, {16, 16}, {64, 1}, {128, 8}, {12, 2}, {96, 8},
				     {4, 1}, {256, 2}, {32, 4}, {48, 48}};
static const uint32_t ccs_fa2[] = {80, 86, 87, 89, 120, 121, 110};
static const uint32_t ccs_odd[] = {0, 70, 75, 100, 103, 90, 89, 120};
static const uint32_t captures[] = {512, 256, 64, 8, 1, 3, 100, 300, 1000, 2048, 0};

/* a length of 1..200,000 tokens, small ones as densely as large ones */
static uint32_t length(void)
{
	return next() % 2 ? logish(1, 200000) : uniform(1, 200000);
}

#define MAX_N (ENGINE_MAX_SEQS + 1)

static uint32_t lens[MAX_N], by_seq[MAX_N];

/* Fills lens[0..n) with one of the mixes; returns n. */
static uint32_t batch(void)
{
	/* half the batches small enough to leave the grid room to split */
	uint32_t n = next() % 2 ? logish(1, 64) : (next() % 2 ? logish(1, 1200) : uniform(1, 1200));
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
	if (n > 0 && n <= ENGINE_MAX_SEQS && next() % 1000 == 0) {
		/* a length the batch refuses, or lengths whose blocks overflow
		 * upstream's int total (case 2 by far, case 3 at its edge) */
		switch (next() % 4) {
		case 0:
			lens[next() % n] = 0;
			break;
		case 1:
			lens[next() % n] = ENGINE_MAX_SEQ_LEN + uniform(1, 1000);
			break;
		case 2:
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = uniform(ENGINE_MAX_SEQ_LEN / 4, ENGINE_MAX_SEQ_LEN);
			}
			break;
		default: {
			/* n equal lengths of about INT32_MAX / n blocks of 128 (the
			 * prepare kernel's int sum at its edge), or one length within
			 * a block of INT32_MAX (seqlen + kBlockN - 1) */
			if (next() % 2) {
				lens[next() % n] = ENGINE_MAX_SEQ_LEN - uniform(0, 300);
				break;
			}
			int64_t blocks = 2147483647 / n + (int64_t)(next() % 5) - 2;
			uint64_t len = blocks < 1 ? 1 : (uint64_t)blocks * 128 - next() % 128;
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = len > ENGINE_MAX_SEQ_LEN ? ENGINE_MAX_SEQ_LEN : (uint32_t)len;
			}
			break;
		}
		}
	}
	return n;
}

enum setting { FA3_GRAPH, FA3_EAGER, FA2, WIDE };

static void shape(struct engine_shape *s, struct vllm_v1_options *o, enum setting w,
		  uint32_t longest)
{
	memset(s, 0, sizeof *s);
	memset(o, 0, sizeof *o);
	/* ignored members: noise */
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();
	s->blocks_per_sm = (uint32_t)next();
	s->cuda_graph = next() % 2;

	size_t const k = next() % (sizeof(heads) / sizeof(heads[0]));
	s->num_q_heads = heads[k][0];
	s->num_kv_heads = heads[k][1];
	s->head_dim = next() % 2 ? 128 : PICK(head_dims);
	s->page_size = next() % 2 ? 16 : PICK(pages);
	if (w != WIDE && s->page_size % 16 != 0) {
		s->page_size = 16;
	}
	o->max_capture_size = next() % 2 ? 0 : (next() % 2 ? 512 : PICK(captures));
	o->batch_invariant = next() % 10 == 0;
	switch (w) {
	case FA3_GRAPH:
	case FA3_EAGER:
		s->sm_count = next() % 4 ? PICK(hopper_sms) : uniform(1, 300);
		o->compute_capability = next() % 8 ? 90 : uniform(90, 99);
		if (w == FA3_GRAPH) {
			o->cudagraph_mode = next() % 4 ? VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE
						       : VLLM_V1_CUDAGRAPH_FULL_DECODE_ONLY;
		} else {
			o->cudagraph_mode = next() % 2 ? VLLM_V1_CUDAGRAPH_NONE
						       : VLLM_V1_CUDAGRAPH_PIECEWISE;
		}
		break;
	case FA2:
		s->sm_count = next() % 4 ? PICK(other_sms) : uniform(1, 300);
		o->compute_capability = PICK(ccs_fa2);
		if (next() % 6 == 0) {
			o->compute_capability = 100;
			o->batch_invariant = true;
		}
		o->cudagraph_mode = (enum vllm_v1_cudagraph_mode)(next() % 4);
		o->max_model_len = next() % 10 == 0 ? 0
				 : next() % 10 == 0 ? uniform(1, longest)
						    : uniform(longest, 262144 > longest ? 262144 : longest);
		break;
	case WIDE:
		s->sm_count = next() % 2 ? PICK(hopper_sms) : uniform(next() % 64 ? 1 : 0, 700);
		if (next() % 300 == 0) {
			s->sm_count = uniform(0x3ffffff0u, 0xffffffffu);
		}
		if (next() % 8 == 0) {
			s->num_kv_heads = uniform(next() % 64 ? 1 : 0, 16);
			s->num_q_heads = s->num_kv_heads * uniform(1, 300);
		}
		if (next() % 64 == 0) {
			s->num_q_heads += uniform(1, 7); /* a group that may not divide */
		}
		if (next() % 300 == 0) {
			s->num_q_heads = uniform(0x7fffff00u, 0xffffffffu);
			s->num_kv_heads = next() % 2 ? 1 : s->num_q_heads;
		}
		if (next() % 16 == 0) {
			s->head_dim = PICK(odd_head_dims);
		}
		if (next() % 300 == 0) {
			s->page_size = 16u * uniform(0x07ffff00u, 0x0fffffffu);
		}
		s->num_splits = next() % 30 == 0 ? uniform(1, 64) : 0;
		o->compute_capability = next() % 3 == 0 ? PICK(ccs_odd)
				      : next() % 2 ? PICK(ccs_fa2) : uniform(90, 99);
		o->cudagraph_mode = (enum vllm_v1_cudagraph_mode)(next() % 50 == 0 ? 7 : next() % 4);
		o->max_model_len = next() % 3 == 0 ? 0 : (uint32_t)next();
		if (next() % 2) {
			o->max_model_len = uniform(longest, longest > 0x7fffff00u ? longest : longest + 256);
		}
		break;
	}
}

static unsigned char out[4 * (18 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	static const char *const names[] = {"fa3-graph", "fa3-eager", "fa2", "wide"};
	int w = -1;
	for (int i = 0; argc == 4 && i < 4; i++) {
		if (strcmp(argv[3], names[i]) == 0) {
			w = i;
		}
	}
	if (w < 0) {
		fprintf(stderr, "usage: %s N SEED fa3-graph|fa3-eager|fa2|wide\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10) ^ (0x766c6c6d00000000ull + (uint64_t)w);

	for (unsigned long long k = 0; k < count; k++) {
		const uint32_t n = batch();
		uint32_t longest = 1;
		for (uint32_t i = 0; i < n && i < MAX_N; i++) {
			if (lens[i] > longest && lens[i] <= ENGINE_MAX_SEQ_LEN) {
				longest = lens[i];
			}
		}
		struct engine_shape s;
		struct vllm_v1_options o;
		shape(&s, &o, (enum setting)w, longest);
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		/* now and then no options at all: recorded as zeros */
		const int given = !(w == WIDE && next() % 16 == 0);
		if (!given) {
			memset(&o, 0, sizeof o);
		}
		const struct engine_answer a = vllm_v1_launch_batch(&s, &b, given ? &o : NULL, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[13] = {n, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim,
					 s.page_size, s.num_splits, o.compute_capability,
					 (uint32_t)o.cudagraph_mode, o.max_capture_size,
					 o.batch_invariant, o.max_model_len, (uint32_t)given};
		for (int i = 0; i < 13; i++, p += 4) {
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
			perror("sweep_batch_vllm_v1: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
