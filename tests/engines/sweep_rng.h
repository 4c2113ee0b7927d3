/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * sweep_rng — what every engines-check sweep (sweep.c, sweep_batch*.c)
 * draws its shapes and batches with, and the little-endian u32 it writes
 * its records in: one copy, so a sweep's sequence of draws is the same
 * function of its seed in every one of them. Each sweep seeds rng_state
 * from its command line. Test code only; a header of static functions,
 * included by one translation unit each.
 */
#ifndef SWEEP_RNG_H
#define SWEEP_RNG_H

#include <stddef.h>
#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t next(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in lo..hi */
static inline uint32_t uniform(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(next() % ((uint64_t)hi - lo + 1));
}

/* lo..hi, each power-of-two range as likely as the next, so small values
 * (a batch of 1, a context of 17) are swept as densely as large ones */
static inline uint32_t logish(uint32_t lo, uint32_t hi)
{
	uint32_t bits = 1, top = hi;
	while (top >>= 1) {
		bits++;
	}
	uint32_t b = uniform(0, bits - 1);
	uint64_t a = (uint64_t)1 << b, z = ((uint64_t)1 << (b + 1)) - 1;
	if (a < lo) {
		a = lo;
	}
	if (z > hi) {
		z = hi;
	}
	if (a > z) {
		return uniform(lo, hi);
	}
	return uniform((uint32_t)a, (uint32_t)z);
}

static inline uint32_t pick(const uint32_t *v, size_t n)
{
	return v[next() % n];
}

#define PICK(v) pick(v, sizeof(v) / sizeof((v)[0]))

/* v as 4 little-endian bytes at p: the records' one number format */
static inline void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (unsigned char)(v >> (8 * i));
	}
}

#endif /* SWEEP_RNG_H */
