/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitk — the paged-decode attention split-K policy, as pure functions.
 *
 * A bit-exact C port of the seed's attn_splitk.rs: how many KV splits a
 * decode-attention launch uses and how many [o[head_dim], m, l] slots its
 * split-K workspace must hold. Every answer splitkd gives comes from here.
 *
 * What it never does: allocate, perform I/O, read the locale or the
 * environment, or keep any state. Every function is a pure function of its
 * arguments, so it is thread-safe and may be called from any number of
 * threads at once. Text arguments are byte strings with an explicit length
 * (no NUL terminator needed); text results go into a caller-supplied buffer.
 *
 * The determinism invariant: for SPLITK_AUTO and SPLITK_PINNED the split
 * count reads (sm_count, num_q_heads) and nothing else. Only SPLITK_LEGACY
 * reads the reference batch, because the online-softmax split-merge is
 * non-associative and a split count that moved with the co-batched count
 * would change temp-0 outputs.
 */
#ifndef SPLITK_H
#define SPLITK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Waves of CTAs the auto policy aims for at the single-stream shape. */
#define SPLITK_TARGET_WAVES 2u
/* Hard ceiling on the split count; the bound the workspace is sized against. */
#define SPLITK_MAX_DECODE_SPLITS 16u
/* Longest label, "4294967295", plus its NUL. */
#define SPLITK_LABEL_MAX 11

/*
 * The rule's two constants, as a release may set them (a catalog's
 * `splitk_target_waves` and `max_decode_splits`). The functions without
 * `_with` use the seed's, SPLITK_TARGET_WAVES and SPLITK_MAX_DECODE_SPLITS;
 * each `_with` variant takes them as its first argument and is otherwise
 * the same function (with the seed's constants, the same answer, bit for
 * bit).
 *
 * The bounds keep every product the core and a caller form in 64 bits:
 * target_waves * sm_count < 2^6 * 2^32, num_q_heads * num_splits <
 * 2^32 * 2^10 (a grid's CTAs), and the workspace's
 * max_rows * num_q_heads * num_splits is formed in 64 bits and saturated
 * at UINT32_MAX as the seed's u32 arithmetic does. More waves than an SM
 * holds resident CTAs (32 on Hopper) buys nothing; a split count past
 * 1024 is a workspace no decode needs.
 *
 * A value outside its bounds is still answered, never wrapped: 0 reads as
 * the seed's value (so a zeroed struct is the seed's rule), and a value
 * above its bound reads as the bound (splitk_constants_read says what a
 * given pair reads as). A catalog refuses both (splitk_constants_valid).
 */
#define SPLITK_TARGET_WAVES_MAX 64u
#define SPLITK_MAX_DECODE_SPLITS_MAX 1024u

struct splitk_constants {
	uint32_t target_waves;      /* 1..SPLITK_TARGET_WAVES_MAX */
	uint32_t max_decode_splits; /* 1..SPLITK_MAX_DECODE_SPLITS_MAX */
};

/* An initializer of the seed's constants (C and C++ alike). */
#define SPLITK_SEED_CONSTANTS {SPLITK_TARGET_WAVES, SPLITK_MAX_DECODE_SPLITS}

/* True when both constants are within their bounds (1..the _MAX above). */
bool splitk_constants_valid(struct splitk_constants k);

/* The constants the `_with` functions compute with for `k`: each 0 raised
 * to the seed's value, each above its bound lowered to the bound. */
struct splitk_constants splitk_constants_read(struct splitk_constants k);

enum splitk_kind { SPLITK_LEGACY, SPLITK_AUTO, SPLITK_PINNED };

/* `pinned` is read only when kind == SPLITK_PINNED. splitk_parse stores an
 * already clamped count there (1..16); a caller that builds a policy by hand
 * may store any value, and splitk_num_splits clamps it. */
struct splitk_policy {
	enum splitk_kind kind;
	uint32_t pinned;
};

struct splitk_resolved {
	struct splitk_policy policy;
	bool from_override; /* true when the override spelling parsed and won */
};

/*
 * Parses a policy spelling, exactly as the seed's `parse`:
 * Rust str::trim (Unicode White_Space at both ends), then ASCII lowercase,
 * then "legacy" | "auto" | "0"/"off"/"false"/"no" (pinned 1) | a decimal
 * accepted by Rust's u32::from_str (an optional '+', ASCII digits, no
 * overflow), clamped to 1..SPLITK_MAX_DECODE_SPLITS.
 *
 * `spelling` holds `len` bytes; it need not be NUL-terminated and may be NULL
 * when len is 0. Bytes that are not valid UTF-8 never parse.
 * Returns true and fills *out on success; returns false and leaves *out
 * untouched otherwise.
 */
bool splitk_parse(const char *spelling, size_t len, struct splitk_policy *out);

/*
 * splitk_parse, and also the count as written before the clamp: the value of
 * a numeric spelling ("99" gives pinned 16 and *requested 99), 0 for
 * "0"/"off"/"false"/"no", and 0 for legacy and auto. A caller that reports
 * whether the clamp fired compares *requested with out->pinned.
 * Same return and failure as splitk_parse; *requested is written on success.
 */
bool splitk_parse_requested(const char *spelling, size_t len, struct splitk_policy *out,
			    uint32_t *requested);

/* splitk_parse_requested with the count clamped to 1..k.max_decode_splits
 * instead of the seed's 16. */
bool splitk_parse_requested_with(struct splitk_constants k, const char *spelling, size_t len,
				 struct splitk_policy *out, uint32_t *requested);

/* True when s[0..len) is well-formed UTF-8 (what Rust's str::from_utf8
 * accepts: no overlong forms, no surrogates, nothing above U+10FFFF). */
bool splitk_utf8_valid(const char *s, size_t len);

/*
 * Writes the spelling that round-trips through splitk_parse ("legacy",
 * "auto", or the pinned count in decimal) and its NUL into `out`.
 * Returns the label's length, without the NUL.
 */
size_t splitk_label(struct splitk_policy policy, char out[SPLITK_LABEL_MAX]);

/*
 * The one resolution rule: the declared spelling (one that does not parse
 * resolves to legacy), overridden by `override` when that parses.
 * `override == NULL` means the variable is unset; an override that does not
 * parse keeps the declaration and from_override is false.
 */
struct splitk_resolved splitk_resolve(const char *declared, size_t declared_len,
				      const char *override, size_t override_len);

/* splitk_resolve, and what it read on the way. */
struct splitk_resolution {
	struct splitk_resolved resolved; /* splitk_resolve's answer */
	bool declared_parses;            /* false: the declaration reads as legacy */
	struct splitk_policy declared;   /* what the declaration resolves to */
	uint32_t declared_requested;     /* as splitk_parse_requested; 0 unless pinned */
	bool override_parses;            /* false when unset or not a spelling */
	struct splitk_policy override;   /* when override_parses */
	uint32_t override_requested;     /* when override_parses; 0 unless pinned */
};

/* splitk_resolve, with each spelling parsed once: whether it parsed, to
 * what, and its count as written before the clamp, so a caller can say
 * why the answer is what it is without parsing again. Same arguments. */
struct splitk_resolution splitk_resolve_detail(const char *declared, size_t declared_len,
					       const char *override, size_t override_len);
/* splitk_resolve_detail for a declaration already read (a catalog's, read
 * once at load by splitk_parse_requested to `declared` and
 * `declared_requested`): the same resolution, without parsing it again. */
struct splitk_resolution splitk_resolve_read(struct splitk_policy declared,
					     uint32_t declared_requested, const char *override,
					     size_t override_len);

/* splitk_resolve_detail and splitk_resolve_read with the spellings
 * clamped to k.max_decode_splits (splitk_parse_requested_with). */
struct splitk_resolution splitk_resolve_detail_with(struct splitk_constants k, const char *declared,
						    size_t declared_len, const char *override,
						    size_t override_len);
struct splitk_resolution splitk_resolve_read_with(struct splitk_constants k,
						  struct splitk_policy declared,
						  uint32_t declared_requested, const char *override,
						  size_t override_len);

/* The reference batch the legacy rule reads: max(num_seqs, max_decode_seqs). */
uint32_t splitk_split_ref_seqs(uint32_t num_seqs, uint32_t max_decode_seqs);

/* clamp(ceil(WAVES * sm_count / num_q_heads), 1, MAX_DECODE_SPLITS), with
 * both inputs raised to at least 1 and a saturating multiplication. */
uint32_t splitk_auto_splits(uint32_t sm_count, uint32_t num_q_heads);

/* clamp(ceil(k.target_waves * sm_count / num_q_heads), 1, k.max_decode_splits). */
uint32_t splitk_auto_splits_with(struct splitk_constants k, uint32_t sm_count,
				 uint32_t num_q_heads);

/* The pre-#928 rule: 1 when num_q_heads * ref_seqs (each at least 1,
 * saturating) covers sm_count, else sm_count / that product. */
uint32_t splitk_legacy_splits(uint32_t sm_count, uint32_t num_q_heads, uint32_t ref_seqs);

/*
 * The numbers a split count is made of, as splitk_num_splits computes them:
 * the rule's operands after the seed's max(..., 1), its saturating product,
 * the count before the clamp, and the count. For a report of how a count
 * came about; num_splits is always splitk_num_splits's answer.
 */
struct splitk_terms {
	enum splitk_kind kind;
	uint32_t sm_count;    /* auto: max(sm_count, 1); legacy: as given; pinned: unread, 0 */
	uint32_t num_q_heads; /* max(num_q_heads, 1); pinned: unread, 0 */
	uint32_t ref_seqs;    /* legacy: max(ref_seqs, 1); otherwise unread, 0 */
	/* auto: WAVES * sm_count; legacy: num_q_heads * ref_seqs (the CTAs it
	 * launches); pinned: 0. Saturating at UINT32_MAX, as the seed's u32. */
	uint32_t product;
	bool saturated; /* the product stopped at UINT32_MAX */
	/* auto: ceil(product / num_q_heads); pinned: the count as stored;
	 * legacy: the count itself (the legacy rule has no clamp). */
	uint32_t unclamped;
	uint32_t num_splits; /* the count: unclamped clamped to 1..MAX_DECODE_SPLITS */
};

/* The terms of the split count for a launch; same arguments as
 * splitk_num_splits. A pinned count is taken as stored, so a caller that
 * kept the count as written (splitk_parse_requested) sees its clamp. */
struct splitk_terms splitk_split_terms(struct splitk_policy policy, uint32_t sm_count,
				       uint32_t num_q_heads, uint32_t legacy_ref_seqs);

/* The split count for a launch. `legacy_ref_seqs` is read by SPLITK_LEGACY
 * only; a pinned count is clamped to 1..MAX_DECODE_SPLITS. */
uint32_t splitk_num_splits(struct splitk_policy policy, uint32_t sm_count,
			   uint32_t num_q_heads, uint32_t legacy_ref_seqs);

/* splitk_split_terms and splitk_num_splits at the constants k: the auto
 * product is k.target_waves * sm_count, and the clamp 1..k.max_decode_splits.
 * Legacy reads neither (the seed never capped it). */
struct splitk_terms splitk_split_terms_with(struct splitk_constants k, struct splitk_policy policy,
					    uint32_t sm_count, uint32_t num_q_heads,
					    uint32_t legacy_ref_seqs);
uint32_t splitk_num_splits_with(struct splitk_constants k, struct splitk_policy policy,
				uint32_t sm_count, uint32_t num_q_heads, uint32_t legacy_ref_seqs);

/*
 * Slots the split-K workspace must hold. Legacy keeps its old bound,
 * max(sm_count, 1); every other policy needs
 * max(max_rows,1) * max(num_q_heads,1) * num_splits, saturating at
 * UINT32_MAX (the seed's u32 arithmetic; a saturated answer is a shape no
 * device can allocate, never a wrapped small number).
 */
uint32_t splitk_workspace_slots(struct splitk_policy policy, uint32_t sm_count,
				uint32_t num_q_heads, uint32_t max_rows,
				uint32_t legacy_ref_seqs);
/* splitk_workspace_slots with the split count of splitk_num_splits_with. */
uint32_t splitk_workspace_slots_with(struct splitk_constants k, struct splitk_policy policy,
				     uint32_t sm_count, uint32_t num_q_heads, uint32_t max_rows,
				     uint32_t legacy_ref_seqs);

/* A launch's two numbers: splitk_num_splits_with's and
 * splitk_workspace_slots_with's answers for the same arguments, from one
 * call that computes the count once (what a server answering both pays). */
struct splitk_launch {
	uint32_t num_splits, workspace_slots;
};

struct splitk_launch splitk_launch_with(struct splitk_constants k, struct splitk_policy policy,
					uint32_t sm_count, uint32_t num_q_heads, uint32_t max_rows,
					uint32_t legacy_ref_seqs);

/* Workspace bytes, exactly: slots * (head_dim + 2) * 4 floats' bytes can
 * pass 2^64 (slots and head_dim are each up to 2^32 - 1), so the count is
 * hi * 2^64 + lo. `known` is false when head_dim is 0 (not known), and then
 * hi and lo are 0. */
struct splitk_bytes {
	bool known;
	uint64_t hi, lo;
};

/* The bytes of `slots` workspace slots of [o[head_dim], m, l] f32 each:
 * slots * (head_dim + 2) * 4, exact (no saturation, no wrap). */
struct splitk_bytes splitk_workspace_bytes(uint32_t slots, uint32_t head_dim);

/* The name of a policy kind: "legacy", "auto" or "pinned" (a static
 * string); "unknown" for a value outside the enum. */
const char *splitk_kind_name(enum splitk_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* SPLITK_H */
