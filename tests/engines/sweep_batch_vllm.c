/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_vllm — vllm_launch_batch (policy/vllm.h) over N
 * pseudo-random decode batches, as tests/engines/sweep_batch.c's records
 * (64 + 8 * num_seqs bytes each, the same layout), for tests/engines/
 * harness_batch.rs with oracle_vllm.rs's launch_batch to recompute.
 *
 * sweep_batch.c's batches (1 to 1,200 sequences of 1 to 200,000 tokens:
 * random, one long beside many short, all different, all equal, two
 * groups, at a multiple or one off it, the batch sizes where a kernel
 * changes course; one batch in 2,000 with a length of 0), but shapes drawn
 * where vLLM's kernels exist, so that most batches are answered: block
 * sizes 8, 16 and 32 in seven shapes of eight (the others any size from 1
 * to 1,024), the kernels' head sizes in seven of eight, q heads from 1 to
 * 128 so that num_seqs * num_heads falls on both sides of 512, a group
 * that does not divide in one of 64, num_splits given in one of 50. The
 * short lengths include 8,192 and 8,193 (v1's limit) and 512 and 513 (one
 * partition). vLLM has no option, so there is one setting: the code path
 * (v1 or v2) follows each batch.
 *
 * usage: sweep_batch_vllm N SEED > records
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vllm.h"
#include "sweep_rng.h"

#define MAX_BATCH 1200u
#define MAX_LEN 200000u

static uint32_t length(void)
{
	return next() % 2 ? logish(1, MAX_LEN) : uniform(1, MAX_LEN);
}

static const uint32_t head_dims[] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
static const uint32_t pages[] = {8, 16, 32};
/* the partition, v1's limit and the pages, each a length's multiple */
static const uint32_t tiles[] = {512, 8192, 8, 16, 32, 1024, 4096};
static const uint32_t sizes[] = {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 512, 513, 1200};

/* A shape where vLLM's kernels mostly exist, for the batch's inputs. */
static struct engine_shape shape(void)
{
	struct engine_shape s;
	memset(&s, 0, sizeof s);
	s.sm_count = uniform(0, 300); /* not read */
	s.num_kv_heads = next() % 2 ? logish(1, 64) : pick((const uint32_t[]){1, 2, 4, 8, 16}, 5);
	uint32_t group = next() % 2 ? uniform(1, 8) : logish(1, 128 / s.num_kv_heads + 1);
	s.num_q_heads = s.num_kv_heads * group;
	if (next() % 64 == 0) {
		s.num_q_heads += uniform(1, s.num_kv_heads); /* a group that does not divide */
	}
	s.head_dim = next() % 8 == 0 ? uniform(1, 300)
				     : pick(head_dims, sizeof head_dims / sizeof head_dims[0]);
	s.page_size = next() % 8 == 0 ? uniform(1, 1024) : pick(pages, sizeof pages / sizeof pages[0]);
	s.blocks_per_sm = uniform(0, 8);
	s.cuda_graph = next() % 2;
	s.num_splits = next() % 50 == 0 ? logish(1, 256) : 0;
	return s;
}

/* A batch of one of the mixes into lens; returns its size. */
static uint32_t batch(uint32_t *lens)
{
	uint32_t n = next() % 2 ? logish(1, MAX_BATCH) : uniform(1, MAX_BATCH);
	switch (next() % 8) {
	case 0:
	case 1: /* random */
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = length();
		}
		break;
	case 2: { /* one long beside many short */
		uint32_t const short_max = pick((const uint32_t[]){512, 513, 4096, 8192, 8193}, 5);
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = logish(1, short_max);
		}
		lens[next() % n] = logish(1024, MAX_LEN);
		break;
	}
	case 3: { /* every length different: base + i * step, shuffled */
		uint32_t const step = uniform(1, MAX_LEN / n);
		uint32_t const base = uniform(1, MAX_LEN - (n - 1) * step);
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = base + i * step;
		}
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t const j = (uint32_t)(next() % (i + 1));
			uint32_t const t = lens[i];
			lens[i] = lens[j];
			lens[j] = t;
		}
		break;
	}
	case 4: { /* every length equal */
		uint32_t const len = length();
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = len;
		}
		break;
	}
	case 5: { /* two groups */
		uint32_t const longs = uniform(1, n), a = length(), b = logish(1, 4096);
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = i < longs ? a : b;
		}
		break;
	}
	case 6: /* at a tile's or a page's multiple, or one off it */
		for (uint32_t i = 0; i < n; i++) {
			uint32_t const t = pick(tiles, sizeof tiles / sizeof tiles[0]);
			uint32_t const len = t * uniform(1, MAX_LEN / t) + uniform(0, 2) - 1;
			lens[i] = len == 0 ? 1 : len > MAX_LEN ? MAX_LEN : len;
		}
		break;
	default: /* the batch sizes where a kernel changes course */
		n = pick(sizes, sizeof sizes / sizeof sizes[0]);
		for (uint32_t i = 0; i < n; i++) {
			lens[i] = next() % 4 == 0 ? length() : logish(1, 8193);
		}
		break;
	}
	if (next() % 2000 == 0) {
		lens[next() % n] = 0; /* refused: lengths are at least 1 */
	}
	return n;
}

/* The answer's blocks_per_sm_near_whole term (0 when it has none). */
static uint32_t near_whole(const struct engine_answer *a)
{
	for (unsigned i = 0; i < a->n_terms; i++) {
		if (strcmp(a->terms[i].name, "blocks_per_sm_near_whole") == 0) {
			return a->terms[i].value != 0;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s N SEED\n", argv[0]);
		return 2;
	}
	unsigned long long n = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10);
	static uint32_t lens[MAX_BATCH], by_seq[MAX_BATCH];
	static unsigned char rec[64 + 8 * MAX_BATCH];
	for (unsigned long long r = 0; r < n; r++) {
		struct engine_shape s = shape();
		uint32_t const num_seqs = batch(lens);
		struct engine_batch const b = {lens, num_seqs};
		memset(by_seq, 0, sizeof by_seq);
		struct engine_answer a = vllm_launch_batch(&s, &b, by_seq);
		uint32_t in[10] = {s.sm_count, num_seqs, s.num_q_heads, s.num_kv_heads, s.head_dim,
				   0, s.page_size, s.blocks_per_sm, s.cuda_graph, s.num_splits};
		bool const ok = a.status == ENGINE_OK;
		size_t const size = 64 + 8 * (size_t)num_seqs;
		memset(rec, 0, 64);
		for (int k = 0; k < 10; k++) {
			put32(rec + 4 * k, in[k]);
		}
		put32(rec + 40, (uint32_t)a.status);
		put32(rec + 44, ok ? a.num_splits : 0);
		put32(rec + 48, ok ? a.num_splits_bound : 0);
		put32(rec + 52, ok ? near_whole(&a) : 0);
		uint64_t ws = ok ? a.workspace_bytes : 0;
		put32(rec + 56, (uint32_t)ws);
		put32(rec + 60, (uint32_t)(ws >> 32));
		for (uint32_t i = 0; i < num_seqs; i++) {
			put32(rec + 64 + 4 * (size_t)i, lens[i]);
			put32(rec + 64 + 4 * ((size_t)num_seqs + i), ok ? by_seq[i] : 0);
		}
		if (fwrite(rec, size, 1, stdout) != 1) {
			perror("sweep_batch: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
