/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The public contract of policy/splitk.h, as the issue wrote it: every name
 * with its exact type (and splitk_split_terms, added for explanations). Compiled as C11 and as C++ against the INSTALLED
 * header and library (pkg-config splitk), so a scheduler that embeds the
 * policy without HTTP builds the way this file does. Exits 0 when the
 * worked example from the seed (#928) comes out right.
 */
#include <splitk.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
#define STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

STATIC_ASSERT(SPLITK_TARGET_WAVES == 2u, "waves");
STATIC_ASSERT(SPLITK_MAX_DECODE_SPLITS == 16u, "cap");
STATIC_ASSERT(SPLITK_LABEL_MAX == 11, "label");

int main(void)
{
	bool (*parse)(const char *, size_t, struct splitk_policy *) = splitk_parse;
	size_t (*label)(struct splitk_policy, char[SPLITK_LABEL_MAX]) = splitk_label;
	struct splitk_resolved (*resolve)(const char *, size_t, const char *, size_t) =
		splitk_resolve;
	uint32_t (*ref)(uint32_t, uint32_t) = splitk_split_ref_seqs;
	uint32_t (*autos)(uint32_t, uint32_t) = splitk_auto_splits;
	uint32_t (*legacy)(uint32_t, uint32_t, uint32_t) = splitk_legacy_splits;
	uint32_t (*num)(struct splitk_policy, uint32_t, uint32_t, uint32_t) = splitk_num_splits;
	uint32_t (*slots)(struct splitk_policy, uint32_t, uint32_t, uint32_t, uint32_t) =
		splitk_workspace_slots;
	struct splitk_terms (*terms)(struct splitk_policy, uint32_t, uint32_t, uint32_t) =
		splitk_split_terms;
	enum splitk_kind kinds[3] = {SPLITK_LEGACY, SPLITK_AUTO, SPLITK_PINNED};
	struct splitk_terms t;
	struct splitk_policy p;
	struct splitk_resolved r;
	char out[SPLITK_LABEL_MAX];
	int bad = 0;

	r = resolve("auto", 4, NULL, 0);
	bad |= r.from_override || r.policy.kind != kinds[1];
	bad |= !parse(" 4 ", 3, &p) || p.kind != kinds[2] || p.pinned != 4;
	bad |= label(p, out) != 1 || strcmp(out, "4") != 0;
	bad |= autos(132, 24) != 11 || legacy(132, 24, ref(1, 16)) != 1;
	bad |= num(r.policy, 132, 24, 16) != 11 || slots(r.policy, 132, 24, 16, 16) != 4224;
	bad |= slots(r.policy, 132, 24, 16, 16) != 4224 || kinds[0] != SPLITK_LEGACY;
	t = terms(r.policy, 132, 24, 16);
	bad |= t.product != 264 || t.unclamped != 11 || t.num_splits != 11 || t.saturated;
	printf("contract: %s\n", bad ? "FAILED" : "ok");
	return bad;
}
