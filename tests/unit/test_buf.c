/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The one growable buffer: doubling from 4 KiB, an exact capacity when
 * asked, printf past the room there is, the failure latch, and the two
 * views of a BUF_MEMBER being the same bytes.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

Test(buf, grows_by_doubling_and_keeps_every_byte)
{
	struct buf b;
	size_t last_cap = 0;

	buf_init(&b, 0);
	cr_assert_null(b.p);
	for (size_t i = 0; i < 100000; i++) {
		char c = (char)('a' + i % 26);

		buf_add(&b, &c, 1);
		if (b.cap != last_cap) {
			/* the first allocation is 4 KiB, then each one doubles */
			cr_assert_eq(b.cap, last_cap == 0 ? BUF_FIRST_CAP : last_cap * 2, "at %zu", i);
			last_cap = b.cap;
		}
	}
	cr_assert_eq(b.len, 100000);
	for (size_t i = 0; i < b.len; i++) {
		cr_assert_eq(b.p[i], (char)('a' + i % 26), "byte %zu", i);
	}
	buf_free(&b);
	cr_assert_null(b.p);
	cr_assert_eq(b.len, 0);
	buf_free(&b); /* twice is safe */
}

Test(buf, grow_to_sets_the_capacity_exactly)
{
	struct buf b;

	buf_init(&b, 0);
	cr_assert(buf_grow_to(&b, 6000));
	cr_assert_eq(b.cap, 6000);
	buf_add(&b, "x", 1);
	cr_assert_eq(buf_cap_for(&b, 5999), 6000, "fits: no growth");
	cr_assert_eq(buf_cap_for(&b, 6000), 12000, "one more byte doubles");
	buf_free(&b);
}

Test(buf, printf_past_the_room_there_is)
{
	struct buf b;
	char *text;
	size_t len;

	buf_init(&b, 8);
	buf_printf(&b, "%s=%d;", "a", 1);
	buf_printf(&b, "%0*d", 10000, 7); /* 10,000 bytes into 8 */
	cr_assert(!b.failed);
	cr_assert_eq(b.len, 4 + 10000);
	cr_assert(memcmp(b.p, "a=1;0000", 8) == 0);
	cr_assert_eq(b.p[b.len - 1], '7');
	text = buf_take(&b, &len);
	cr_assert_eq(len, 10004);
	cr_assert_eq(strlen(text), len, "taken text is NUL-terminated");
	cr_assert_null(b.p, "the buffer is left empty");
	free(text);
}

Test(buf, a_size_past_size_max_latches_failed)
{
	struct buf b;
	size_t len = 1;

	buf_init(&b, 16);
	buf_add(&b, "abc", 3);
	cr_assert_eq(buf_cap_for(&b, SIZE_MAX - 1), 0);
	cr_assert_null(buf_room(&b, SIZE_MAX - 1));
	cr_assert(b.failed);
	buf_add(&b, "d", 1);
	buf_printf(&b, "%d", 5);
	cr_assert_eq(b.len, 3, "nothing is added once failed");
	cr_assert_null(buf_take(&b, &len));
	cr_assert_eq(len, 0);
	cr_assert(!b.failed, "take leaves the buffer empty and usable");
}

struct holder {
	BUF_MEMBER(data);
	int after;
};

Test(buf, the_member_views_are_the_same_bytes)
{
	struct holder h = {.after = 42};

	buf_init(&h.data, 0);
	buf_add(&h.data, "hello", 5);
	cr_assert_eq(h.buf, h.data.p);
	cr_assert_eq(h.len, 5);
	cr_assert_eq(h.cap, h.data.cap);
	cr_assert(memcmp(h.buf, "hello", 5) == 0);
	cr_assert_eq(h.after, 42);
	buf_free(&h.data);
	cr_assert_null(h.buf);
}
