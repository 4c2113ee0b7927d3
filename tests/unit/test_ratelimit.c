/* SPDX-License-Identifier: AGPL-3.0-only */
/* ratelimit.c through its API, on a clock the test turns. */
#include <criterion/criterion.h>
#include <string.h>

#include "ratelimit.h"

#define MS 1000000ull
#define SECOND 1000000000ull

static struct ratelimit rl;

static void done(void)
{
	ratelimit_cleanup(&rl);
}

static void addr_of(unsigned n, unsigned char out[16])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &n, 4);
}

Test(ratelimit, a_burst_of_rate_then_rate_a_second, .fini = done)
{
	unsigned char a[16];
	uint64_t t = 5 * SECOND;
	struct ratelimit_verdict v;

	cr_assert_eq(ratelimit_init(&rl, 20, 16), 0);
	addr_of(1, a);
	for (unsigned i = 0; i < 20; i++) {
		v = ratelimit_take(&rl, a, t);
		cr_assert(v.allowed, "request %u of the burst", i + 1);
		cr_assert_eq(v.remaining, 19 - i);
		cr_assert_eq(v.reset_s, 1);
	}
	v = ratelimit_take(&rl, a, t);
	cr_assert_not(v.allowed);
	cr_assert_eq(v.remaining, 0);
	cr_assert_eq(v.retry_after, 1);
	/* 1/20 s later exactly one more, not two */
	v = ratelimit_take(&rl, a, t + 50 * MS);
	cr_assert(v.allowed);
	cr_assert_eq(v.remaining, 0);
	cr_assert_not(ratelimit_take(&rl, a, t + 50 * MS).allowed);
	/* a second of 20 a second, evenly: every one taken */
	for (unsigned i = 2; i <= 21; i++) {
		cr_assert(ratelimit_take(&rl, a, t + i * 50 * MS).allowed, "at %u ms", i * 50);
	}
	/* idle a long time: a whole burst again, no more */
	t += 3600 * SECOND;
	for (unsigned i = 0; i < 20; i++) {
		cr_assert(ratelimit_take(&rl, a, t).allowed);
	}
	cr_assert_not(ratelimit_take(&rl, a, t).allowed);
	cr_assert_eq(atomic_load(&rl.limited), 3);
}

Test(ratelimit, one_a_second_retries_after_a_second, .fini = done)
{
	unsigned char a[16];
	struct ratelimit_verdict v;

	cr_assert_eq(ratelimit_init(&rl, 1, 4), 0);
	addr_of(7, a);
	v = ratelimit_take(&rl, a, SECOND);
	cr_assert(v.allowed);
	cr_assert_eq(v.remaining, 0);
	v = ratelimit_take(&rl, a, SECOND + 1);
	cr_assert_not(v.allowed);
	cr_assert_eq(v.retry_after, 1);
	cr_assert(ratelimit_take(&rl, a, 2 * SECOND).allowed);
}

Test(ratelimit, clients_are_apart, .fini = done)
{
	unsigned char a[16], b[16];

	cr_assert_eq(ratelimit_init(&rl, 2, 16), 0);
	addr_of(1, a);
	addr_of(2, b);
	cr_assert(ratelimit_take(&rl, a, SECOND).allowed);
	cr_assert(ratelimit_take(&rl, a, SECOND).allowed);
	cr_assert_not(ratelimit_take(&rl, a, SECOND).allowed);
	cr_assert(ratelimit_take(&rl, b, SECOND).allowed);
	cr_assert(ratelimit_take(&rl, b, SECOND).allowed);
	cr_assert_not(ratelimit_take(&rl, b, SECOND).allowed);
	cr_assert_eq(ratelimit_clients(&rl), 2);
}

Test(ratelimit, the_table_keeps_the_most_recent_clients, .fini = done)
{
	unsigned char a[16];

	cr_assert_eq(ratelimit_init(&rl, 1, 8), 0);
	/* 1000 clients through a table of 8: never more than 8 kept */
	for (unsigned i = 0; i < 1000; i++) {
		addr_of(i, a);
		cr_assert(ratelimit_take(&rl, a, SECOND).allowed, "client %u is new", i);
		cr_assert_leq(ratelimit_clients(&rl), 8);
	}
	cr_assert_eq(atomic_load(&rl.evicted), 992);
	/* the last 8 are remembered (spent), the one before them forgotten (new) */
	for (unsigned i = 992; i < 1000; i++) {
		addr_of(i, a);
		cr_assert_not(ratelimit_take(&rl, a, SECOND).allowed, "client %u was forgotten", i);
	}
	addr_of(991, a);
	cr_assert(ratelimit_take(&rl, a, SECOND).allowed);
}

Test(ratelimit, recency_decides_who_goes, .fini = done)
{
	unsigned char a[16], b[16], c[16];

	cr_assert_eq(ratelimit_init(&rl, 1, 2), 0);
	addr_of(1, a);
	addr_of(2, b);
	addr_of(3, c);
	cr_assert(ratelimit_take(&rl, a, SECOND).allowed);
	cr_assert(ratelimit_take(&rl, b, SECOND).allowed);
	cr_assert_not(ratelimit_take(&rl, a, SECOND).allowed); /* a is the most recent now */
	cr_assert(ratelimit_take(&rl, c, SECOND).allowed);      /* b goes */
	cr_assert_not(ratelimit_take(&rl, a, SECOND).allowed);  /* a stayed, spent */
	cr_assert(ratelimit_take(&rl, b, SECOND).allowed);      /* b is new again */
}
