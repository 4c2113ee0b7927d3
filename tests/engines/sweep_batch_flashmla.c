/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_flashmla — flashmla_launch_batch over N pseudo-random mixed
 * decode batches in one of two settings, as variable-length binary records
 * on stdout for the second implementation
 * (tests/engines/oracle_batch_flashmla.rs) to recompute and compare.
 *
 * usage: sweep_batch_flashmla N SEED dsv3|wide > records
 *
 * A record, little-endian u32s: num_seqs (n); the inputs sm_count,
 * num_q_heads, num_kv_heads, head_dim, page_size, num_splits, head_dim_v,
 * seqlen_q; the n seq_lens; then status, num_splits, num_splits_bound,
 * workspace_bytes (low, high); then n by_seq (0 when refused).
 * 4 * (14 + 2n) bytes.
 *
 * The batches: 1 to 1,200 sequences (half of them 1 to 64, each power of
 * two as likely as the next; a quarter 1 to 1,200 the same way; a quarter
 * uniform), lengths 1 to 200,000 in mixes that matter (all equal; one long
 * beside many short; all different; a few lengths repeated; two
 * clusters). A few batches in a thousand break a bound (no sequence, a
 * zero or over-long length, lengths whose blocks overflow upstream's int
 * total, more than ENGINE_MAX_SEQS sequences), to be refused alike.
 *
 * dsv3: DeepSeek-V3's decode as served: head_dim 576, head_dim_v 0 or 512,
 *   pages of 64, one KV head, 128 q heads or a tensor-parallel share of
 *   them (64, 32, 16, 8), Hopper SM counts (132, 114, 78, ...) or 1..400
 *   (past 160 parts, refused), seqlen_q 1 mostly, 2..4 (MTP) now and then.
 * wide: every input varied: head_dim (576, 512, others), head_dim_v,
 *   page sizes, 1..16 KV heads and groups that do not divide, seqlen_q
 *   0..8, SM counts up to 2^32 - 1, q heads past INT32_MAX, a non-zero
 *   num_splits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "flashmla.h"
#include "sweep_rng.h"

static const uint32_t hopper_sms[] = {132, 114, 78, 66, 144, 108};
static const uint32_t dsv3_q_heads[] = {128, 64, 32, 16, 8};
static const uint32_t head_dims[] = {576, 512, 128, 575, 577, 1024};
static const uint32_t head_dims_v[] = {0, 512, 576, 128, 511};
static const uint32_t pages[] = {64, 1, 16, 32, 63, 65, 128, 256};

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
			/* n equal requests of about INT32_MAX / n blocks with their 5 */
			int64_t blocks = 2147483647 / n - 5 + (int64_t)(next() % 5) - 2;
			uint64_t len = blocks < 1 ? 1 : (uint64_t)blocks * 64 - next() % 64;
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = len > ENGINE_MAX_SEQ_LEN ? ENGINE_MAX_SEQ_LEN : (uint32_t)len;
			}
			break;
		}
		}
	}
	return n;
}

static void shape(struct engine_shape *s, struct flashmla_options *o, int wide)
{
	memset(s, 0, sizeof *s);
	memset(o, 0, sizeof *o);
	/* ignored members: noise */
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();
	s->blocks_per_sm = (uint32_t)next();
	s->cuda_graph = next() % 2;
	if (!wide) {
		s->sm_count = next() % 2 ? PICK(hopper_sms) : uniform(1, next() % 8 ? 200 : 400);
		s->num_q_heads = PICK(dsv3_q_heads);
		s->num_kv_heads = 1;
		s->head_dim = 576;
		s->page_size = 64;
		o->head_dim_v = next() % 2 ? 512 : 0;
		o->seqlen_q = next() % 8 == 0 ? uniform(2, 4) : (next() % 2 ? 1 : 0);
		return;
	}
	s->sm_count = next() % 2 ? PICK(hopper_sms) : uniform(next() % 64 ? 1 : 0, 700);
	if (next() % 500 == 0) {
		s->sm_count = uniform(0x7ffffff0u, 0xffffffffu);
	}
	s->num_kv_heads = next() % 2 ? 1 : uniform(next() % 64 ? 1 : 0, 16);
	s->num_q_heads = s->num_kv_heads * (next() % 2 ? PICK(dsv3_q_heads) : uniform(1, 300));
	if (next() % 64 == 0) {
		s->num_q_heads += uniform(1, 7); /* a group that may not divide */
	}
	if (next() % 500 == 0) {
		s->num_q_heads = uniform(0x7fffff00u, 0xffffffffu);
		s->num_kv_heads = next() % 2 ? 1 : s->num_q_heads;
	}
	/* each check passed most of the time, so that most batches answer */
	s->head_dim = next() % 8 ? 576 : PICK(head_dims);
	s->page_size = next() % 8 ? 64 : PICK(pages);
	s->num_splits = next() % 20 == 0 ? uniform(1, 64) : 0;
	o->head_dim_v = next() % 8 ? 512 * (uint32_t)(next() % 2) : PICK(head_dims_v);
	o->seqlen_q = uniform(0, 8);
	if (next() % 500 == 0) {
		o->seqlen_q = uniform(1u << 24, 0xffffffffu);
	}
}

static unsigned char out[4 * (14 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "dsv3") != 0 && strcmp(argv[3], "wide") != 0)) {
		fprintf(stderr, "usage: %s N SEED dsv3|wide\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	const int wide = argv[3][0] == 'w';
	rng_state = strtoull(argv[2], NULL, 10) ^ (wide ? 0x77696465u : 0x64737633u);

	for (unsigned long long k = 0; k < count; k++) {
		struct engine_shape s;
		struct flashmla_options o;
		shape(&s, &o, wide);
		const uint32_t n = batch();
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		/* now and then no options at all: recorded as their defaults */
		const int no_options = !wide && next() % 16 == 0;
		if (no_options) {
			o.head_dim_v = 0;
			o.seqlen_q = 0;
		}
		const struct engine_answer a =
			flashmla_launch_batch(&s, &b, no_options ? NULL : &o, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[9] = {n, s.sm_count, s.num_q_heads, s.num_kv_heads, s.head_dim,
					s.page_size, s.num_splits, o.head_dim_v, o.seqlen_q};
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
			perror("sweep_batch_flashmla: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
