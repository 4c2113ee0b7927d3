/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep — one engine port over N pseudo-random decode shapes, as binary
 * records on stdout for that engine's second implementation
 * (tests/engines/oracle_<engine>.rs) to recompute and compare.
 *
 * Built once per engine with -DENGINE_HEADER='"fa2.h"' -DENGINE_LAUNCH=fa2_launch.
 * usage: sweep N SEED > records
 *
 * A record is 64 bytes, little-endian: ten u32 inputs (sm_count, num_seqs,
 * num_q_heads, num_kv_heads, head_dim, seq_len, page_size, blocks_per_sm,
 * cuda_graph, num_splits), then status, num_splits, num_splits_bound, a
 * zero u32, and workspace_bytes as a u64.
 *
 * The shapes span what the issue asks: SM counts 1..300, batches 1..1200,
 * GQA groups 1..8 (and a few that do not divide, to be refused), head sizes
 * 32..256 (the kernels' sizes more often than the rest), contexts
 * 1..200,000 tokens, page sizes from 1 to 1024 (every size an engine takes,
 * and sizes none takes), FlashInfer's blocks_per_sm 0..8 and cuda_graph,
 * and an engine's own num_splits argument in one shape of ten.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include ENGINE_HEADER
#include "sweep_rng.h"

static const uint32_t head_dims[] = {32, 64, 80, 96, 112, 128, 160, 192, 256};
static const uint32_t pages[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024};
static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56};

static struct engine_shape shape(void)
{
	struct engine_shape s;
	memset(&s, 0, sizeof s);
	s.sm_count = next() % 4 == 0 ? pick(sms, sizeof sms / sizeof sms[0]) : uniform(1, 300);
	s.num_seqs = next() % 2 ? logish(1, 1200) : uniform(1, 1200);
	s.num_kv_heads = next() % 2 ? logish(1, 64) : pick((const uint32_t[]){1, 2, 4, 8, 16}, 5);
	uint32_t group = uniform(1, 8);
	s.num_q_heads = s.num_kv_heads * group;
	if (next() % 64 == 0) {
		s.num_q_heads += uniform(1, s.num_kv_heads); /* a group that does not divide */
	}
	s.head_dim = next() % 4 == 0 ? uniform(32, 256) : pick(head_dims, sizeof head_dims / sizeof head_dims[0]);
	s.seq_len = next() % 2 ? logish(1, 200000) : uniform(1, 200000);
	s.page_size = next() % 8 == 0 ? uniform(1, 1024) : pick(pages, sizeof pages / sizeof pages[0]);
	s.blocks_per_sm = uniform(0, 8);
	s.cuda_graph = next() % 2;
	s.num_splits = next() % 10 == 0 ? logish(1, 256) : 0;
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s N SEED\n", argv[0]);
		return 2;
	}
	unsigned long long n = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10);
	unsigned char rec[64];
	for (unsigned long long i = 0; i < n; i++) {
		struct engine_shape s = shape();
		struct engine_answer a = ENGINE_LAUNCH(&s);
		uint32_t in[10] = {s.sm_count, s.num_seqs, s.num_q_heads, s.num_kv_heads, s.head_dim,
				   s.seq_len, s.page_size, s.blocks_per_sm, s.cuda_graph, s.num_splits};
		memset(rec, 0, sizeof rec);
		for (int k = 0; k < 10; k++) {
			put32(rec + 4 * k, in[k]);
		}
		put32(rec + 40, (uint32_t)a.status);
		put32(rec + 44, a.status == ENGINE_OK ? a.num_splits : 0);
		put32(rec + 48, a.status == ENGINE_OK ? a.num_splits_bound : 0);
		uint64_t ws = a.status == ENGINE_OK ? a.workspace_bytes : 0;
		put32(rec + 56, (uint32_t)ws);
		put32(rec + 60, (uint32_t)(ws >> 32));
		if (fwrite(rec, sizeof rec, 1, stdout) != 1) {
			perror("sweep: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
