/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_trtllm — trtllm_launch_batch over N pseudo-random mixed
 * decode batches, multi-block (the default) or FORCE_DETERMINISTIC, as
 * variable-length binary records on stdout for the second implementation
 * (tests/engines/oracle_batch_trtllm.rs) to recompute and compare.
 *
 * usage: sweep_batch_trtllm N SEED multi|det > records
 *
 * A record, little-endian u32s: num_seqs (n); the inputs sm_count,
 * num_q_heads, num_kv_heads, head_dim, page_size, blocks_per_sm,
 * cuda_graph, num_splits, deterministic; the n seq_lens; then status,
 * num_splits, num_splits_bound, workspace_bytes (low, high); then n by_seq
 * (0 when refused). 4 * (15 + 2n) bytes.
 *
 * The batches span what the issue asks: 1 to 1,200 sequences (half of
 * the batches 1 to 64, each power of two as likely as the next; a quarter
 * 1 to 1,200 the same way; a quarter uniform), lengths 1 to 200,000 (and
 * now and then up to INT32_MAX, for the counts only long histories give)
 * in mixes that matter (all equal; one long beside many short; all
 * different; a few lengths repeated; two clusters). The shapes cross
 * every branch: SM counts 1..300 and now and then up to 200,000 (where
 * the 6000 sub-sequences bind before the wave does), GQA groups 1 (plain
 * MHA, to the masked-MHA kernel) to 40 (past XQA's 32), head sizes on and
 * off XQA's multiples of 16 and past 256, KV blocks in and out of 16..128,
 * KV heads now and then past the grid's 65535, a num_splits argument XQA
 * does not have, and blocks_per_sm and cuda_graph as noise. One batch in
 * fifty is one request of 2^20 tokens or more on one KV head
 * (long_alone), where float's rounding of the sqrt cap can decide. A few batches
 * in a thousand break a bound (no sequence, a zero or over-long length,
 * more than ENGINE_MAX_SEQS sequences, a zero or huge SM count), to be
 * refused alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "trtllm.h"
#include "sweep_rng.h"

static const uint32_t head_dims[] = {16, 32, 64, 72, 80, 96, 112, 128, 144, 160, 192, 200, 240,
				     256, 264, 272, 512};
static const uint32_t xqa_dims[] = {64, 128, 256};
static const uint32_t pages[] = {1, 8, 16, 32, 64, 128, 256, 512};
static const uint32_t xqa_pages[] = {16, 32, 64, 128};
static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56, 144, 188};

/* a length of 1..200,000 tokens, small ones as densely as large ones */
static uint32_t length(void)
{
	if (next() % 200 == 0) {
		return logish(200001, ENGINE_MAX_SEQ_LEN);
	}
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
		/* a length the batch refuses, or every length a long history */
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

static void shape(struct engine_shape *s, struct trtllm_options *o, int det)
{
	memset(s, 0, sizeof *s);
	s->sm_count = next() % 4 == 0 ? PICK(sms) : uniform(1, 300);
	if (next() % 8 == 0) {
		s->sm_count = logish(300, 200000);
	}
	if (next() % 2000 == 0) {
		s->sm_count = next() % 2 ? 0 : uniform(1u << 30, 0xffffffffu);
	}
	s->num_kv_heads = next() % 2 ? logish(1, 64) : PICK(((const uint32_t[]){1, 2, 4, 8, 16}));
	if (next() % 1000 == 0) {
		s->num_kv_heads = uniform(60000, 70000);
	}
	uint32_t group = next() % 8 == 0 ? uniform(1, 40) : uniform(2, 8);
	if (next() % 32 == 0) {
		group = 1; /* plain MHA */
	}
	s->num_q_heads = s->num_kv_heads * group;
	if (next() % 64 == 0) {
		s->num_q_heads += uniform(1, s->num_kv_heads); /* a group that does not divide */
	}
	s->head_dim = next() % 4 != 0 ? PICK(xqa_dims) : (next() % 2 ? uniform(1, 300) : PICK(head_dims));
	s->page_size = next() % 8 == 0 ? (next() % 2 ? uniform(1, 1024) : PICK(pages)) : PICK(xqa_pages);
	s->blocks_per_sm = uniform(0, 8);
	s->cuda_graph = next() % 2;
	s->num_splits = next() % 50 == 0 ? logish(1, 256) : 0;
	/* the shape's own num_seqs and seq_len are not read: noise */
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();
	o->deterministic = det;
}

/* One request of a history long enough (2^20 tokens up to INT32_MAX)
 * that float's rounding of sqrt(count * 8) can decide the count, on one
 * KV head with SMs enough that XQA pays and the wave rarely binds: the
 * cross-check of the float steps where they matter. */
static void long_alone(struct engine_shape *s, uint32_t *n)
{
	*n = 1;
	lens[0] = logish(1u << 20, ENGINE_MAX_SEQ_LEN);
	if (next() % 2 == 0) {
		/* a count c whose 8c lies next to (k + 0.5)^2, where float's
		 * sqrt can round to k + 0.5 and std::round then up */
		const uint64_t k = uniform(2, 11584);
		const uint64_t c = (2 * k + 1) * (2 * k + 1) / 32 + uniform(0, 2);
		const uint64_t len = c * 128 + uniform(0, 127);
		lens[0] = len > ENGINE_MAX_SEQ_LEN ? ENGINE_MAX_SEQ_LEN : (uint32_t)len;
	}
	s->num_kv_heads = 1;
	s->num_q_heads = uniform(2, 8);
	s->head_dim = PICK(xqa_dims);
	s->page_size = PICK(xqa_pages);
	s->num_splits = 0;
	const uint64_t most = 4 * (uint64_t)(lens[0] / 128);
	s->sm_count = uniform(1, most > 0x7fffffffu ? 0x7fffffffu : (uint32_t)most);
}

static unsigned char out[4 * (15 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "multi") != 0 && strcmp(argv[3], "det") != 0)) {
		fprintf(stderr, "usage: %s N SEED multi|det\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	const int det = argv[3][0] == 'd';
	rng_state = strtoull(argv[2], NULL, 10) ^ (det ? 0x646574u : 0);

	for (unsigned long long k = 0; k < count; k++) {
		struct engine_shape s;
		struct trtllm_options o;
		shape(&s, &o, det);
		uint32_t n = batch();
		if (next() % 50 == 0) {
			long_alone(&s, &n);
		}
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		const struct engine_answer a = trtllm_launch_batch(&s, &b, &o, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[10] = {n, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim,
					 s.page_size, s.blocks_per_sm, s.cuda_graph, s.num_splits,
					 o.deterministic};
		for (int i = 0; i < 10; i++, p += 4) {
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
			perror("sweep_batch_trtllm: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
