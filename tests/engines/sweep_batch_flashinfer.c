/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_flashinfer — flashinfer_launch_batch over N pseudo-random
 * mixed decode batches on one of FlashInfer's two decode paths, as
 * variable-length binary records on stdout for the second implementation
 * (tests/engines/oracle_batch_flashinfer.rs) to recompute and compare.
 *
 * usage: sweep_batch_flashinfer N SEED cuda|tc > records
 *
 * A record, little-endian u32s: num_seqs (n); the inputs sm_count,
 * num_q_heads, num_kv_heads, head_dim, page_size, blocks_per_sm,
 * cuda_graph, num_splits, tensor_cores, fixed_split_size,
 * disable_split_kv; the n seq_lens; then status, num_splits,
 * num_splits_bound, workspace_bytes (low, high); then n by_seq (0 when
 * refused). 4 * (17 + 2n) bytes.
 *
 * The batches span what issue 49 asks: 1 to 1,200 sequences (half of the
 * batches 1 to 64, which leave the grid room to split, each power of two
 * as likely as the next; a quarter 1 to 1,200 the same way; a quarter
 * uniform), lengths 1 to 200,000 in mixes that matter
 * (all equal; one long beside many short; all different; a few lengths
 * repeated; two clusters), and on the path's options: the tensor-core
 * path's fixed_split_size (unset half the time) and disable_split_kv, the
 * CUDA-core path's (a fixed_split_size it must refuse, a disable_split_kv
 * it ignores); SM counts 1..300, GQA groups 1..8 and now and then up to
 * 80 (every cta_tile_q), head sizes 32..1024 with the merge's and the
 * shared-memory probe's edges, page sizes 1..1024, blocks_per_sm 0..8,
 * cuda_graph. A few batches in a thousand break a bound (no sequence, a
 * zero or over-long length, more pages than the int32 indptr holds, more
 * than ENGINE_MAX_SEQS sequences), to be refused alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "flashinfer.h"
#include "sweep_rng.h"

static const uint32_t head_dims[] = {32, 64, 80, 96, 128, 192, 256, 352, 353, 384, 448, 512, 576, 1024};
static const uint32_t merge_dims[] = {64, 128, 256, 512};
static const uint32_t pages[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024};
static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56};
static const uint32_t fixed_sizes[] = {1, 2, 16, 64, 128, 256, 512, 2048, 4096};

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
		/* a length the batch refuses, or one that overflows the indptr */
		switch (next() % 3) {
		case 0:
			lens[next() % n] = 0;
			break;
		case 1:
			lens[next() % n] = ENGINE_MAX_SEQ_LEN + uniform(1, 1000);
			break;
		default:
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = uniform(ENGINE_MAX_SEQ_LEN / 4, ENGINE_MAX_SEQ_LEN);
			}
			break;
		}
	}
	return n;
}

static void shape(struct engine_shape *s, struct flashinfer_options *o, int tc)
{
	memset(s, 0, sizeof *s);
	s->sm_count = next() % 4 == 0 ? PICK(sms) : uniform(1, 300);
	if (next() % 2000 == 0) {
		s->sm_count = next() % 2 ? 0 : uniform(1u << 30, 0xffffffffu);
	}
	s->num_kv_heads = next() % 2 ? logish(1, 64) : PICK(((const uint32_t[]){1, 2, 4, 8, 16}));
	uint32_t group = next() % 8 == 0 ? uniform(1, 80) : uniform(1, 8);
	s->num_q_heads = s->num_kv_heads * group;
	if (next() % 64 == 0) {
		s->num_q_heads += uniform(1, s->num_kv_heads); /* a group that does not divide */
	}
	/* the merge's sizes half the time, so that split launches answer */
	s->head_dim = next() % 2 ? PICK(merge_dims) : (next() % 2 ? uniform(32, 600) : PICK(head_dims));
	s->page_size = next() % 8 == 0 ? uniform(1, 1024) : PICK(pages);
	s->blocks_per_sm = uniform(0, 8);
	s->cuda_graph = next() % 2;
	s->num_splits = next() % 20 == 0 ? logish(1, 256) : 0;
	/* the shape's own num_seqs and seq_len are not read: noise */
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();

	o->tensor_cores = tc;
	o->disable_split_kv = next() % 5 == 0;
	o->fixed_split_size = 0;
	if (tc ? next() % 2 == 0 : next() % 20 == 0) {
		o->fixed_split_size = next() % 2 ? PICK(fixed_sizes) : logish(1, 100000);
		if (next() % 500 == 0) {
			o->fixed_split_size = uniform(0x80000000u, 0xffffffffu);
		}
	}
}

static unsigned char out[4 * (17 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "cuda") != 0 && strcmp(argv[3], "tc") != 0)) {
		fprintf(stderr, "usage: %s N SEED cuda|tc\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10) ^ (argv[3][0] == 't' ? 0x7463u : 0);
	const int tc = argv[3][0] == 't';

	for (unsigned long long k = 0; k < count; k++) {
		struct engine_shape s;
		struct flashinfer_options o;
		shape(&s, &o, tc);
		const uint32_t n = batch();
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		const struct engine_answer a = flashinfer_launch_batch(&s, &b, &o, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[12] = {n, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim,
					 s.page_size, s.blocks_per_sm, s.cuda_graph, s.num_splits,
					 o.tensor_cores, o.fixed_split_size, o.disable_split_kv};
		for (int i = 0; i < 12; i++, p += 4) {
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
			perror("sweep_batch_flashinfer: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
