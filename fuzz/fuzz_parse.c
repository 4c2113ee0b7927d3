/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * libFuzzer harness for splitk_parse. The exact answers are checked against
 * the seed itself by tests/crosscheck; here, for every input: no crash and
 * no undefined behaviour, and the properties the seed's rules imply hold —
 * a parse needs valid UTF-8; a pinned count is 1..16; the label parses back
 * to the same policy; padding with white space and changing ASCII case
 * change nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "splitk.h"

static bool same(bool ok_a, struct splitk_policy a, bool ok_b, struct splitk_policy b)
{
	return ok_a == ok_b && (!ok_a || (a.kind == b.kind && (a.kind != SPLITK_PINNED || a.pinned == b.pinned)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct splitk_policy p = {SPLITK_LEGACY, 0}, q = {SPLITK_LEGACY, 0}, back;
	const char *s = (const char *)data;
	char label[SPLITK_LABEL_MAX];
	char *buf;
	bool ok;

	if (size > 4096) {
		return 0;
	}
	ok = splitk_parse(s, size, &p);
	if (ok) {
		CHECK(splitk_utf8_valid(s, size));
		CHECK(p.kind == SPLITK_LEGACY || p.kind == SPLITK_AUTO || p.kind == SPLITK_PINNED);
		if (p.kind == SPLITK_PINNED) {
			CHECK(p.pinned >= 1 && p.pinned <= SPLITK_MAX_DECODE_SPLITS);
		}
		CHECK(splitk_parse(label, splitk_label(p, label), &back));
		CHECK(same(true, p, true, back));
	}
	buf = malloc(size + 8);
	/* U+3000 and a tab around it: trimmed, so nothing changes */
	memcpy(buf, "\xe3\x80\x80\t", 4);
	memcpy(buf + 4, s, size);
	memcpy(buf + 4 + size, " \xc2\x85", 3);
	CHECK(same(ok, p, splitk_parse(buf, size + 7, &q), q));
	/* ASCII upper case: to_ascii_lowercase makes it the same */
	for (size_t i = 0; i < size; i++) {
		buf[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
	}
	CHECK(same(ok, p, splitk_parse(buf, size, &q), q));
	free(buf);
	return 0;
}
