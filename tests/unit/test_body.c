/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The body budget without a socket: what a body reserves, what is refused
 * and counted as shed, what release gives back, and when trim runs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "body.h"

Test(body, declared_length_is_reserved_all_at_once)
{
	struct body_budget b;
	struct body body = {0};

	body_budget_init(&b, 10000);
	cr_assert_eq(body_expect(&body, &b, 6000), BODY_OK);
	cr_assert_eq(atomic_load(&b.used), 6000);
	cr_assert_eq(body.reserved, 6000);
	/* appending what was declared takes no more */
	for (int i = 0; i < 6; i++) {
		char piece[1000];

		memset(piece, 'a' + i, sizeof(piece));
		cr_assert_eq(body_append(&body, &b, piece, sizeof(piece)), BODY_OK);
	}
	cr_assert_eq(atomic_load(&b.used), 6000);
	cr_assert_eq(body.len, 6000);
	cr_assert_eq(body.buf[5999], 'f');
	body_release(&body, &b);
	cr_assert_eq(atomic_load(&b.used), 0);
	cr_assert_null(body.buf);
}

Test(body, over_budget_reserves_nothing_and_counts_a_shed)
{
	struct body_budget b;
	struct body first = {0}, second = {0};

	body_budget_init(&b, 10000);
	cr_assert_eq(body_expect(&first, &b, 7000), BODY_OK);
	cr_assert_eq(body_expect(&second, &b, 3001), BODY_OVER_BUDGET);
	cr_assert_eq(atomic_load(&b.used), 7000);
	cr_assert_eq(second.reserved, 0);
	cr_assert_eq(atomic_load(&b.shed), 1);
	cr_assert_eq(body_expect(&second, &b, 3000), BODY_OK); /* exactly the rest fits */
	cr_assert_eq(atomic_load(&b.used), 10000);
	body_release(&first, &b);
	body_release(&second, &b);
	cr_assert_eq(atomic_load(&b.used), 0);
	cr_assert_eq(body_expect(&first, &b, 0), BODY_OK); /* an empty body takes nothing */
	cr_assert_eq(atomic_load(&b.used), 0);
}

/* Without a declared length the buffer doubles from 4 KiB, each step
 * reserved first: over a sweep of piece sizes the reservation is always
 * the buffer's size and the bytes are all there. */
Test(body, chunked_growth_reserves_what_it_holds)
{
	for (size_t piece = 1; piece < 9000; piece = piece * 3 + 1) {
		struct body_budget b;
		struct body body = {0};
		char data[9000];
		size_t total = 0;

		body_budget_init(&b, 1u << 20);
		memset(data, 'x', sizeof(data));
		while (total < 50000) {
			cr_assert_eq(body_append(&body, &b, data, piece), BODY_OK);
			total += piece;
			cr_assert_eq(body.reserved, body.cap);
			cr_assert_eq(atomic_load(&b.used), body.cap);
			cr_assert_geq(body.cap, body.len);
			cr_assert(body.cap == 4096 || body.cap / 2 < body.len,
				  "piece %zu: cap %zu for %zu bytes", piece, body.cap, body.len);
		}
		cr_assert_eq(body.len, total);
		body_release(&body, &b);
		cr_assert_eq(atomic_load(&b.used), 0);
	}
}

Test(body, growth_past_the_budget_is_refused)
{
	struct body_budget b;
	struct body body = {0};
	char data[4096] = {0};

	body_budget_init(&b, 8192);
	cr_assert_eq(body_append(&body, &b, data, sizeof(data)), BODY_OK);
	cr_assert_eq(body_append(&body, &b, data, sizeof(data)), BODY_OK);
	cr_assert_eq(body_append(&body, &b, data, 1), BODY_OVER_BUDGET); /* 16 KiB would not fit */
	cr_assert_eq(body.len, 8192);
	cr_assert_eq(atomic_load(&b.shed), 1);
	body_release(&body, &b);
}

Test(body, trim_only_when_empty_after_a_burst)
{
	struct body_budget b;
	struct body body = {0};

	body_budget_init(&b, 1u << 24);
	cr_assert_not(body_budget_trim(&b, 1u << 20), "no burst yet");
	cr_assert_eq(body_expect(&body, &b, 2u << 20), BODY_OK);
	cr_assert_not(body_budget_trim(&b, 1u << 20), "a body is still held");
	body_release(&body, &b);
	cr_assert(body_budget_trim(&b, 1u << 20));
	cr_assert_not(body_budget_trim(&b, 1u << 20), "the mark was reset");
}
