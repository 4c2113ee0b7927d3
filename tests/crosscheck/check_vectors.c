/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Reads the seed oracle's lines (see seed_vectors.rs for the format) on
 * stdin, asks the C port the same question and counts disagreements.
 * Prints the first few mismatches, then "crosscheck: N passed, N failed".
 * Exits 0 only when nothing failed, at least one vector was read, and both
 * of the seed's constants were compared with splitk.h's macros.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitk.h"

#define LINE_MAX_BYTES 4096

static unsigned long passed, failed, constants;

static int hexval(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/* Decodes a hex token ("-" is empty) into buf; returns the length or -1. */
static long unhex(const char *tok, char *buf, size_t cap)
{
	size_t n = strlen(tok), i;

	if (strcmp(tok, "-") == 0) {
		return 0;
	}
	if (n % 2 != 0 || n / 2 > cap) {
		return -1;
	}
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(tok[2 * i]), lo = hexval(tok[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			return -1;
		}
		buf[i] = (char)(hi * 16 + lo);
	}
	return (long)(n / 2);
}

static int to_u32(const char *tok, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(tok, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX) {
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int to_policy(const char *tok, struct splitk_policy *p)
{
	if (strcmp(tok, "legacy") == 0) {
		*p = (struct splitk_policy){SPLITK_LEGACY, 0};
		return 0;
	}
	if (strcmp(tok, "auto") == 0) {
		*p = (struct splitk_policy){SPLITK_AUTO, 0};
		return 0;
	}
	p->kind = SPLITK_PINNED;
	return to_u32(tok, &p->pinned);
}

static void policy_text(bool ok, struct splitk_policy p, char *out, size_t cap)
{
	char label[SPLITK_LABEL_MAX];

	if (!ok) {
		snprintf(out, cap, "none");
		return;
	}
	splitk_label(p, label);
	snprintf(out, cap, "%s%s", p.kind == SPLITK_PINNED ? "pinned " : "", label);
}

static void verdict(int ok, const char *line)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	if (failed <= 20) {
		fprintf(stderr, "MISMATCH: %s", line);
	}
}

static int check_line(char *line)
{
	char copy[LINE_MAX_BYTES], *tok[8], *save = NULL, *t;
	int n = 0;
	uint32_t v[6];
	struct splitk_policy p;
	char a[LINE_MAX_BYTES], b[LINE_MAX_BYTES], got[64];
	long alen, blen;

	snprintf(copy, sizeof(copy), "%s", line);
	for (t = strtok_r(copy, " \n", &save); t != NULL && n < 8; t = strtok_r(NULL, " \n", &save)) {
		tok[n++] = t;
	}
	if (n == 0) {
		return 0;
	}
	switch (tok[0][0]) {
	case 'P': { /* P hex expected... */
		char want[64];
		bool ok;

		if (n < 3 || (alen = unhex(tok[1], a, sizeof(a))) < 0) {
			return -1;
		}
		ok = splitk_parse(a, (size_t)alen, &p);
		policy_text(ok, p, got, sizeof(got));
		snprintf(want, sizeof(want), "%s%s%s", tok[2], n > 3 ? " " : "", n > 3 ? tok[3] : "");
		verdict(strcmp(got, want) == 0, line);
		return 0;
	}
	case 'R': { /* R decl override label from_env */
		struct splitk_resolved r;
		char label[SPLITK_LABEL_MAX];

		if (n != 5 || (alen = unhex(tok[1], a, sizeof(a))) < 0) {
			return -1;
		}
		if (strcmp(tok[2], "unset") == 0) {
			r = splitk_resolve(a, (size_t)alen, NULL, 0);
		} else if ((blen = unhex(tok[2], b, sizeof(b))) < 0) {
			return -1;
		} else {
			r = splitk_resolve(a, (size_t)alen, b, (size_t)blen);
		}
		splitk_label(r.policy, label);
		verdict(strcmp(label, tok[3]) == 0 && (int)r.from_override == (tok[4][0] - '0'), line);
		return 0;
	}
	case 'A':
		if (n != 4 || to_u32(tok[1], &v[0]) || to_u32(tok[2], &v[1]) || to_u32(tok[3], &v[2])) {
			return -1;
		}
		verdict(splitk_auto_splits(v[0], v[1]) == v[2], line);
		return 0;
	case 'L':
		if (n != 5 || to_u32(tok[1], &v[0]) || to_u32(tok[2], &v[1]) || to_u32(tok[3], &v[2]) ||
		    to_u32(tok[4], &v[3])) {
			return -1;
		}
		verdict(splitk_legacy_splits(v[0], v[1], v[2]) == v[3], line);
		return 0;
	case 'N':
		if (n != 6 || to_policy(tok[1], &p) || to_u32(tok[2], &v[0]) || to_u32(tok[3], &v[1]) ||
		    to_u32(tok[4], &v[2]) || to_u32(tok[5], &v[3])) {
			return -1;
		}
		verdict(splitk_num_splits(p, v[0], v[1], v[2]) == v[3], line);
		return 0;
	case 'W':
		if (n != 7 || to_policy(tok[1], &p) || to_u32(tok[2], &v[0]) || to_u32(tok[3], &v[1]) ||
		    to_u32(tok[4], &v[2]) || to_u32(tok[5], &v[3]) || to_u32(tok[6], &v[4])) {
			return -1;
		}
		verdict(splitk_workspace_slots(p, v[0], v[1], v[2], v[3]) == v[4], line);
		return 0;
	case 'T': /* T auto sm heads unclamped | T legacy sm heads ref ctas */
		if (n < 5 || to_u32(tok[2], &v[0]) || to_u32(tok[3], &v[1]) || to_u32(tok[4], &v[2])) {
			return -1;
		}
		if (strcmp(tok[1], "auto") == 0 && n == 5) {
			struct splitk_terms t = splitk_split_terms((struct splitk_policy){SPLITK_AUTO, 0},
								   v[0], v[1], 0);

			verdict(t.unclamped == v[2] && t.num_splits == splitk_auto_splits(v[0], v[1]), line);
		} else if (strcmp(tok[1], "legacy") == 0 && n == 6 && !to_u32(tok[5], &v[3])) {
			struct splitk_terms t = splitk_split_terms((struct splitk_policy){SPLITK_LEGACY, 0},
								   v[0], v[1], v[2]);

			/* the flag, against the exact product in 64 bits */
			uint64_t exact = (uint64_t)(v[1] ? v[1] : 1) * (v[2] ? v[2] : 1);

			verdict(t.product == v[3] && t.saturated == (exact > UINT32_MAX), line);
		} else {
			return -1;
		}
		return 0;
	case 'K': /* K name value: the header's macro against the seed's constant */
		if (n != 3 || to_u32(tok[2], &v[0])) {
			return -1;
		}
		if (strcmp(tok[1], "SPLITK_TARGET_WAVES") == 0) {
			verdict(SPLITK_TARGET_WAVES == v[0], line);
		} else if (strcmp(tok[1], "MAX_DECODE_SPLITS") == 0) {
			verdict(SPLITK_MAX_DECODE_SPLITS == v[0], line);
		} else {
			return -1;
		}
		constants++;
		return 0;
	default:
		return -1;
	}
}

int main(void)
{
	char line[LINE_MAX_BYTES];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (check_line(line) != 0) {
			fprintf(stderr, "crosscheck: unreadable vector: %s", line);
			return 2;
		}
	}
	printf("crosscheck: %lu passed, %lu failed (%lu of 2 constants compared)\n", passed, failed,
	       constants);
	return (failed == 0 && passed > 0 && constants == 2) ? 0 : 1;
}
