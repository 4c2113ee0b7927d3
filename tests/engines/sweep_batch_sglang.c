/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_batch_sglang — sglang_launch_batch over N pseudo-random mixed
 * decode batches in one of the settings that change its code path, as
 * variable-length binary records on stdout for the second implementation
 * (tests/engines/oracle_batch_sglang.rs) to recompute and compare.
 *
 * usage: sweep_batch_sglang N SEED dynamic|graph|deterministic|static > records
 *
 * A record, little-endian u32s: num_seqs (n); the inputs sm_count,
 * num_q_heads, num_kv_heads, head_dim, page_size, blocks_per_sm,
 * cuda_graph, num_splits, then the options max_kv_splits,
 * split_tile_size, deterministic, deterministic_tile, static_kv_splits,
 * max_model_len, cuda_graph_bs, cuda_graph_max_bs; the n seq_lens; then
 * status, num_splits, num_splits_bound, workspace_bytes (low, high); then
 * n by_seq (0 when refused). 4 * (22 + 2n) bytes.
 *
 * The settings: dynamic (the metadata kernel, eager; now and then a
 * split_tile_size), graph (the same under a CUDA graph's padding, now and
 * then deterministic or static), deterministic (the tile, eager or under a
 * graph), static (the static fill, or split_tile_size's max_kv_splits).
 * Batches of 1 to 1,200 sequences (most 1 to 64: the metadata kernel's
 * core-count term matters there; a quarter up to 1,200), lengths 1 to
 * 200,000 in mixes that matter (all equal; one long beside many short;
 * all different; a few lengths repeated; two clusters), max_kv_splits 8
 * or 1..64, SM counts 1..300, GQA groups 1..8 and now and then up to 80,
 * head sizes 1..1024. A few batches in a thousand break a bound (no
 * sequence, a zero length, lengths where upstream's int32 arithmetic
 * wraps, an input or option out of range), to be refused alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "sglang.h"
#include "sweep_rng.h"

static const uint32_t head_dims[] = {64, 80, 96, 128, 192, 256, 512, 576};
static const uint32_t sms[] = {132, 108, 114, 78, 80, 216, 170, 142, 84, 56, 304};
static const uint32_t tiles[] = {16, 32, 64, 128, 256, 256, 256, 512, 1024, 4096};
/* SGLang's default capture sizes run 1, 2, 4, 8, then steps of 8 (and 16
 * further on); a batch pads to the next one */
static const uint32_t pads[] = {0, 0, 1, 3, 7, 8, 15, 16, 64};

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
	uint32_t n = next() % 4 != 0 ? logish(1, 64) : (next() % 2 ? logish(1, 1200) : uniform(1, 1200));
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
		/* a length the batch refuses, or where an int32 of upstream's wraps */
		switch (next() % 5) {
		case 0:
			lens[next() % n] = 0;
			break;
		case 1:
			lens[next() % n] = ENGINE_MAX_SEQ_LEN + uniform(1, 1000);
			break;
		case 2: /* the graph's int32 max * 8 and min * 10 */
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = uniform(200000000u, 280000000u);
			}
			break;
		case 3: /* one sequence near INT32_MAX: the kernel's cdivs */
			lens[next() % n] = ENGINE_MAX_SEQ_LEN - uniform(0, 300);
			break;
		default: /* more tokens than the int32 kv_indptr holds */
			for (uint32_t i = 0; i < n; i++) {
				lens[i] = uniform(ENGINE_MAX_SEQ_LEN / 4, ENGINE_MAX_SEQ_LEN);
			}
			break;
		}
	}
	return n;
}

enum setting { DYNAMIC, GRAPH, DETERMINISTIC, STATIC };

static uint32_t longest(uint32_t n)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		m = lens[i] > m ? lens[i] : m;
	}
	return m;
}

/* the context length: most often one the batch fits, now and then none
 * given or one it overruns */
static uint32_t context(uint32_t n, int needed)
{
	const uint32_t m = longest(n);
	const uint32_t r = (uint32_t)(next() % 100);
	if (r < (needed ? 1u : 40u)) {
		return 0;
	}
	if (r < (needed ? 2u : 41u) && m > 1) {
		return uniform(1, m - 1);
	}
	if (m >= 262144u) {
		return m;
	}
	return next() % 4 == 0 ? m : uniform(m, 262144u);
}

static void shape(struct engine_shape *s, struct sglang_options *o, enum setting set, uint32_t n)
{
	memset(s, 0, sizeof *s);
	memset(o, 0, sizeof *o);
	s->sm_count = next() % 4 == 0 ? PICK(sms) : uniform(1, 300);
	if (next() % 2000 == 0) {
		s->sm_count = next() % 2 ? 0 : uniform(1u << 24, 0xffffffffu);
	}
	s->num_kv_heads = next() % 2 ? logish(1, 64) : PICK(((const uint32_t[]){1, 2, 4, 8, 16}));
	uint32_t group = next() % 8 == 0 ? uniform(1, 80) : uniform(1, 8);
	s->num_q_heads = s->num_kv_heads * group;
	if (next() % 64 == 0) {
		s->num_q_heads += uniform(1, s->num_kv_heads); /* a group that does not divide */
	}
	if (next() % 4000 == 0) { /* heads past the bound, and token_grid past int32 */
		s->num_kv_heads = 1;
		s->num_q_heads = uniform(1u << 19, 1u << 21);
	}
	s->head_dim = next() % 2 ? PICK(head_dims) : uniform(1, 1024);
	if (next() % 4000 == 0) {
		s->head_dim = 0;
	}
	/* not read: noise */
	s->page_size = uniform(0, 1024);
	s->blocks_per_sm = uniform(0, 8);
	s->num_splits = next() % 500 == 0 ? logish(1, 256) : 0;
	s->num_seqs = (uint32_t)next();
	s->seq_len = (uint32_t)next();

	o->max_kv_splits = next() % 2 ? SGLANG_DEFAULT_MAX_KV_SPLITS : logish(1, 64);
	if (next() % 1000 == 0) {
		o->max_kv_splits = next() % 2 ? 0 : uniform(0x80000000u, 0xffffffffu);
	}
	s->cuda_graph = set == GRAPH || (set != DYNAMIC && next() % 4 == 0);
	switch (set) {
	case DYNAMIC:
	case GRAPH:
		if (next() % 10 == 0) {
			o->split_tile_size = PICK(tiles);
		}
		if (set == GRAPH && next() % 10 == 0) {
			o->deterministic = true;
		} else if (set == GRAPH && next() % 10 == 0) {
			o->static_kv_splits = true;
		}
		break;
	case DETERMINISTIC:
		o->deterministic = true;
		o->static_kv_splits = next() % 4 == 0; /* ignored */
		o->split_tile_size = next() % 4 == 0 ? PICK(tiles) : 0; /* ignored */
		o->deterministic_tile = next() % 2 ? 0 : PICK(tiles);
		if (next() % 1000 == 0) {
			o->deterministic_tile = next() % 2 ? uniform(1, 8) : uniform(0x80000000u, 0xffffffffu);
		}
		break;
	case STATIC:
		if (next() % 3 != 0) {
			o->static_kv_splits = true;
		}
		if (next() % 2 == 0) {
			o->split_tile_size = next() % 2 ? PICK(tiles) : logish(1, 8192);
		}
		break;
	}
	const int needed = o->deterministic || o->split_tile_size != 0;
	o->max_model_len = context(n, needed);
	if (s->cuda_graph) {
		o->cuda_graph_bs = n + PICK(pads);
		if (next() % 8 == 0) {
			o->cuda_graph_bs = n + uniform(0, 512);
		}
		if (next() % 500 == 0 && n > 0) {
			o->cuda_graph_bs = n - 1; /* smaller than the batch */
		}
		o->cuda_graph_max_bs = next() % 2 ? 0 : o->cuda_graph_bs + uniform(0, 512);
		if (next() % 1000 == 0) {
			o->cuda_graph_max_bs = uniform(1, o->cuda_graph_bs + 1);
		}
	} else if (next() % 2000 == 0) {
		o->cuda_graph_bs = uniform(1, 64); /* without a graph: refused */
	}
}

static unsigned char out[4 * (22 + 2 * MAX_N)];

int main(int argc, char **argv)
{
	static const char *const names[] = {"dynamic", "graph", "deterministic", "static"};
	int set = -1;

	for (int i = 0; argc == 4 && i < 4; i++) {
		if (strcmp(argv[3], names[i]) == 0) {
			set = i;
		}
	}
	if (set < 0) {
		fprintf(stderr, "usage: %s N SEED dynamic|graph|deterministic|static\n", argv[0]);
		return 2;
	}
	unsigned long long count = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10) ^ (0x5367u + (uint64_t)set);

	for (unsigned long long k = 0; k < count; k++) {
		struct engine_shape s;
		struct sglang_options o;
		const uint32_t n = batch();
		shape(&s, &o, (enum setting)set, n);
		const struct engine_batch b = {lens, n};
		for (uint32_t i = 0; i < n; i++) {
			by_seq[i] = 0;
		}
		const struct engine_answer a = sglang_launch_batch(&s, &b, &o, by_seq);
		const int ok = a.status == ENGINE_OK;

		unsigned char *p = out;
		const uint32_t in[17] = {n,
					 s.sm_count,
					 s.num_q_heads,
					 s.num_kv_heads,
					 s.head_dim,
					 s.page_size,
					 s.blocks_per_sm,
					 s.cuda_graph,
					 s.num_splits,
					 o.max_kv_splits,
					 o.split_tile_size,
					 o.deterministic,
					 o.deterministic_tile,
					 o.static_kv_splits,
					 o.max_model_len,
					 o.cuda_graph_bs,
					 o.cuda_graph_max_bs};
		for (int i = 0; i < 17; i++, p += 4) {
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
			perror("sweep_batch_sglang: write");
			return 1;
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
