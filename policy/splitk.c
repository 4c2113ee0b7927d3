/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitk — a bit-exact port of the seed's attn_splitk.rs. See splitk.h for
 * the contract; the comments here explain where C has to work to behave like
 * the Rust (UTF-8, Unicode trimming, u32::from_str, saturating arithmetic).
 */
#include "splitk.h"

/* a * b, saturating at UINT32_MAX like Rust's u32::saturating_mul. */
static uint32_t sat_mul(uint32_t a, uint32_t b)
{
	uint64_t p = (uint64_t)a * (uint64_t)b;

	return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	if (v < lo) {
		return lo;
	}
	return v > hi ? hi : v;
}

/*
 * Decodes one UTF-8 scalar value at s[0..len) into *cp and returns its
 * length in bytes, or 0 when the bytes there are not well-formed UTF-8
 * (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing above
 * U+10FFFF) — the same set of byte strings Rust's str::from_utf8 accepts.
 */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char b0 = s[0];
	size_t n;
	uint32_t c;
	unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */

	if (b0 < 0x80) {
		*cp = b0;
		return 1;
	}
	/* The lead byte gives the length and its payload bits; E0, ED, F0
	 * and F4 narrow the second byte's range (table 3-7): E0 and F0 to
	 * refuse overlong forms, ED the surrogates U+D800..U+DFFF, F4 what
	 * lies above U+10FFFF. */
	if (b0 >= 0xC2 && b0 <= 0xDF) {
		n = 2;
		c = b0 & 0x1Fu;
	} else if (b0 >= 0xE0 && b0 <= 0xEF) {
		n = 3;
		c = b0 & 0x0Fu;
		lo = b0 == 0xE0 ? 0xA0 : lo;
		hi = b0 == 0xED ? 0x9F : hi;
	} else if (b0 >= 0xF0 && b0 <= 0xF4) {
		n = 4;
		c = b0 & 0x07u;
		lo = b0 == 0xF0 ? 0x90 : lo;
		hi = b0 == 0xF4 ? 0x8F : hi;
	} else {
		return 0;
	}
	if (len < n || s[1] < lo || s[1] > hi) {
		return 0;
	}
	c = (c << 6) | (s[1] & 0x3Fu);
	for (size_t i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF) {
			return 0;
		}
		c = (c << 6) | (s[i] & 0x3Fu);
	}
	*cp = c;
	return n;
}

/* Unicode's White_Space property: what Rust's char::is_whitespace, and so
 * str::trim, removes. Not U+180E, U+200B or U+FEFF, which are not White_Space. */
static bool is_unicode_white_space(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 ||
	       cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
	       cp == 0x3000;
}

bool splitk_utf8_valid(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;
	uint32_t cp;

	while (i < len) {
		size_t n;

		if (s[i] < 0x80) {
			i++; /* ASCII, the common case, without a call */
			continue;
		}
		n = utf8_decode(s + i, len - i, &cp);
		if (n == 0) {
			return false;
		}
		i += n;
	}
	return true;
}

/* Rust's str::trim on valid UTF-8: narrows [*start, *end) to drop leading
 * and trailing White_Space scalar values. */
static void trim_unicode(const unsigned char *s, size_t *start, size_t *end)
{
	uint32_t cp;

	while (*start < *end) {
		size_t n = utf8_decode(s + *start, *end - *start, &cp);

		if (!is_unicode_white_space(cp)) {
			break;
		}
		*start += n;
	}
	while (*end > *start) {
		size_t begin = *end - 1;

		/* The input is valid, so the last scalar starts at the nearest
		 * byte that is not a continuation byte. */
		while (begin > *start && (s[begin] & 0xC0u) == 0x80u) {
			begin--;
		}
		(void)utf8_decode(s + begin, *end - begin, &cp);
		if (!is_unicode_white_space(cp)) {
			break;
		}
		*end = begin;
	}
}

static unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* to_ascii_lowercase(s) == word, for an ASCII lowercase `word`. Non-ASCII
 * bytes are left as they are by to_ascii_lowercase, so they never match. */
static bool equals_ascii_lower(const unsigned char *s, size_t len, const char *word)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (word[i] == '\0' || ascii_lower(s[i]) != (unsigned char)word[i]) {
			return false;
		}
	}
	return word[i] == '\0';
}

/* Rust's u32::from_str: an optional '+' and then one or more ASCII digits
 * (leading zeros allowed), no '-', no whitespace, no overflow. */
static bool parse_u32_like_rust(const unsigned char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (len > 0 && s[0] == '+') {
		i = 1;
	}
	if (i == len) {
		return false; /* "" is Empty, "+" alone is InvalidDigit */
	}
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
		v = v * 10u + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX) {
			return false; /* PosOverflow: no clamp, the spelling is refused */
		}
	}
	*out = (uint32_t)v;
	return true;
}

/* The seed's constants, for the functions without `_with`: a constant,
 * so the inline bodies below fold them as they did before there were any
 * others. */
static const struct splitk_constants seed_constants = SPLITK_SEED_CONSTANTS;

bool splitk_constants_valid(struct splitk_constants k)
{
	return k.target_waves >= 1 && k.target_waves <= SPLITK_TARGET_WAVES_MAX &&
	       k.max_decode_splits >= 1 && k.max_decode_splits <= SPLITK_MAX_DECODE_SPLITS_MAX;
}

/* 0 is the seed's value and a value past the bound is the bound (splitk.h):
 * whatever a caller passes, the products stay within what splitk.h states. */
static inline uint32_t read_constant(uint32_t v, uint32_t seed, uint32_t bound)
{
	if (v == 0) {
		return seed;
	}
	return v > bound ? bound : v;
}

static inline uint32_t read_waves(struct splitk_constants k)
{
	return read_constant(k.target_waves, SPLITK_TARGET_WAVES, SPLITK_TARGET_WAVES_MAX);
}

static inline uint32_t read_cap(struct splitk_constants k)
{
	return read_constant(k.max_decode_splits, SPLITK_MAX_DECODE_SPLITS,
			     SPLITK_MAX_DECODE_SPLITS_MAX);
}

struct splitk_constants splitk_constants_read(struct splitk_constants k)
{
	struct splitk_constants r = {read_waves(k), read_cap(k)};

	return r;
}

bool splitk_parse(const char *spelling, size_t len, struct splitk_policy *out)
{
	uint32_t requested;

	return splitk_parse_requested(spelling, len, out, &requested);
}

bool splitk_parse_requested(const char *spelling, size_t len, struct splitk_policy *out,
			    uint32_t *requested)
{
	return splitk_parse_requested_with(seed_constants, spelling, len, out, requested);
}

bool splitk_parse_requested_with(struct splitk_constants k, const char *spelling, size_t len,
				 struct splitk_policy *out, uint32_t *requested)
{
	const unsigned char *s = (const unsigned char *)spelling;
	size_t start = 0, end = len;
	uint32_t n;
	/* char arrays, not pointers: no relocation, so the table is .rodata */
	static const char pinned_one[][6] = {"0", "off", "false", "no"};

	if (len > 0 && s == NULL) {
		return false;
	}
	if (len > 0 && !splitk_utf8_valid(spelling, len)) {
		return false; /* a Rust &str cannot hold these bytes at all */
	}
	trim_unicode(s, &start, &end);
	s += start;
	len = end - start;

	if (equals_ascii_lower(s, len, "legacy")) {
		*out = (struct splitk_policy){SPLITK_LEGACY, 0};
		*requested = 0;
		return true;
	}
	if (equals_ascii_lower(s, len, "auto")) {
		*out = (struct splitk_policy){SPLITK_AUTO, 0};
		*requested = 0;
		return true;
	}
	for (size_t i = 0; i < sizeof(pinned_one) / sizeof(pinned_one[0]); i++) {
		if (equals_ascii_lower(s, len, pinned_one[i])) {
			/* one split IS no split-K */
			*out = (struct splitk_policy){SPLITK_PINNED, 1};
			*requested = 0;
			return true;
		}
	}
	if (parse_u32_like_rust(s, len, &n)) {
		*out = (struct splitk_policy){SPLITK_PINNED, clamp_u32(n, 1, read_cap(k))};
		*requested = n;
		return true;
	}
	return false;
}

size_t splitk_label(struct splitk_policy policy, char out[SPLITK_LABEL_MAX])
{
	const char *word = NULL;
	char digits[SPLITK_LABEL_MAX];
	size_t n = 0, i;
	uint32_t v;

	switch (policy.kind) {
	case SPLITK_LEGACY:
		word = "legacy";
		break;
	case SPLITK_AUTO:
		word = "auto";
		break;
	case SPLITK_PINNED:
		break;
	}
	if (word != NULL) {
		for (n = 0; word[n] != '\0'; n++) {
			out[n] = word[n];
		}
		out[n] = '\0';
		return n;
	}
	v = policy.pinned;
	do {
		digits[n++] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v != 0);
	for (i = 0; i < n; i++) {
		out[i] = digits[n - 1 - i];
	}
	out[n] = '\0';
	return n;
}

/* What the override does to a resolution whose declaration is read. */
static struct splitk_resolution resolve_override(struct splitk_constants k,
						 struct splitk_resolution r, const char *override,
						 size_t override_len)
{
	r.resolved.policy = r.declared;
	/* An override that does not parse keeps the declaration: a typo that
	 * silently became `auto` would arm a geometry change with no receipt. */
	r.override_parses = override != NULL &&
			    splitk_parse_requested_with(k, override, override_len, &r.override,
							&r.override_requested);
	if (r.override_parses) {
		r.resolved.policy = r.override;
		r.resolved.from_override = true;
	}
	return r;
}

#define NO_RESOLUTION                                                                              \
	{{{SPLITK_LEGACY, 0}, false}, false, {SPLITK_LEGACY, 0}, 0, false, {SPLITK_LEGACY, 0}, 0}

struct splitk_resolution splitk_resolve_detail_with(struct splitk_constants k, const char *declared,
						    size_t declared_len, const char *override,
						    size_t override_len)
{
	struct splitk_resolution r = NO_RESOLUTION;

	/* A declaration that does not parse is legacy, as the seed's
	 * parse(declared).unwrap_or(Legacy). */
	r.declared_parses = splitk_parse_requested_with(k, declared, declared_len, &r.declared,
							&r.declared_requested);
	return resolve_override(k, r, override, override_len);
}

struct splitk_resolution splitk_resolve_read_with(struct splitk_constants k,
						  struct splitk_policy declared,
						  uint32_t declared_requested, const char *override,
						  size_t override_len)
{
	struct splitk_resolution r = NO_RESOLUTION;

	r.declared_parses = true;
	r.declared = declared;
	r.declared_requested = declared_requested;
	return resolve_override(k, r, override, override_len);
}

struct splitk_resolution splitk_resolve_detail(const char *declared, size_t declared_len,
					       const char *override, size_t override_len)
{
	return splitk_resolve_detail_with(seed_constants, declared, declared_len, override,
					  override_len);
}

struct splitk_resolution splitk_resolve_read(struct splitk_policy declared,
					     uint32_t declared_requested, const char *override,
					     size_t override_len)
{
	return splitk_resolve_read_with(seed_constants, declared, declared_requested, override,
					override_len);
}

struct splitk_resolved splitk_resolve(const char *declared, size_t declared_len,
				      const char *override, size_t override_len)
{
	return splitk_resolve_detail(declared, declared_len, override, override_len).resolved;
}

uint32_t splitk_split_ref_seqs(uint32_t num_seqs, uint32_t max_decode_seqs)
{
	return max_u32(num_seqs, max_decode_seqs);
}

/* a * b, saturating, and whether it saturated. */
static uint32_t sat_mul_flag(uint32_t a, uint32_t b, bool *saturated)
{
	*saturated = (uint64_t)a * (uint64_t)b > UINT32_MAX;
	return sat_mul(a, b);
}

/* `k` as given: each arm reads (splitk_constants_read) only the constants
 * it uses, so legacy, which uses neither, pays for neither. */
static inline struct splitk_terms auto_terms(struct splitk_constants k, uint32_t sm_count,
					     uint32_t num_q_heads)
{
	struct splitk_terms t = {SPLITK_AUTO, max_u32(sm_count, 1), max_u32(num_q_heads, 1), 0, 0,
				 false, 0, 0};

	t.product = sat_mul_flag(read_waves(k), t.sm_count, &t.saturated);
	/* div_ceil without the overflow of (target + heads - 1) */
	t.unclamped = t.product / t.num_q_heads + (t.product % t.num_q_heads != 0 ? 1u : 0u);
	t.num_splits = clamp_u32(t.unclamped, 1, read_cap(k));
	return t;
}

static inline struct splitk_terms legacy_terms(uint32_t sm_count, uint32_t num_q_heads,
					uint32_t ref_seqs)
{
	struct splitk_terms t = {SPLITK_LEGACY, sm_count, max_u32(num_q_heads, 1),
				 max_u32(ref_seqs, 1), 0, false, 0, 0};

	t.product = sat_mul_flag(t.num_q_heads, t.ref_seqs, &t.saturated); /* current_ctas */
	t.unclamped = t.product >= sm_count ? 1 : sm_count / t.product;
	t.num_splits = t.unclamped;
	return t;
}

uint32_t splitk_auto_splits(uint32_t sm_count, uint32_t num_q_heads)
{
	return auto_terms(seed_constants, sm_count, num_q_heads).num_splits;
}

uint32_t splitk_auto_splits_with(struct splitk_constants k, uint32_t sm_count,
				 uint32_t num_q_heads)
{
	return auto_terms(k, sm_count, num_q_heads).num_splits;
}

uint32_t splitk_legacy_splits(uint32_t sm_count, uint32_t num_q_heads, uint32_t ref_seqs)
{
	return legacy_terms(sm_count, num_q_heads, ref_seqs).num_splits;
}

/* Inline, so that splitk_num_splits, which reads one member, costs no more
 * than the count: the compiler drops the rest. `k` as given (auto_terms). */
static inline struct splitk_terms split_terms(struct splitk_constants k,
					      struct splitk_policy policy, uint32_t sm_count,
					      uint32_t num_q_heads, uint32_t legacy_ref_seqs)
{
	struct splitk_terms t = {SPLITK_PINNED, 0, 0, 0, 0, false, policy.pinned, 0};

	switch (policy.kind) {
	case SPLITK_LEGACY:
		return legacy_terms(sm_count, num_q_heads, legacy_ref_seqs);
	case SPLITK_AUTO:
		return auto_terms(k, sm_count, num_q_heads);
	case SPLITK_PINNED:
		break;
	}
	t.num_splits = clamp_u32(policy.pinned, 1, read_cap(k));
	return t;
}

struct splitk_terms splitk_split_terms(struct splitk_policy policy, uint32_t sm_count,
				       uint32_t num_q_heads, uint32_t legacy_ref_seqs)
{
	return split_terms(seed_constants, policy, sm_count, num_q_heads, legacy_ref_seqs);
}

struct splitk_terms splitk_split_terms_with(struct splitk_constants k, struct splitk_policy policy,
					    uint32_t sm_count, uint32_t num_q_heads,
					    uint32_t legacy_ref_seqs)
{
	return split_terms(k, policy, sm_count, num_q_heads, legacy_ref_seqs);
}

uint32_t splitk_num_splits(struct splitk_policy policy, uint32_t sm_count,
			   uint32_t num_q_heads, uint32_t legacy_ref_seqs)
{
	return split_terms(seed_constants, policy, sm_count, num_q_heads, legacy_ref_seqs).num_splits;
}

uint32_t splitk_num_splits_with(struct splitk_constants k, struct splitk_policy policy,
				uint32_t sm_count, uint32_t num_q_heads, uint32_t legacy_ref_seqs)
{
	return split_terms(k, policy, sm_count, num_q_heads, legacy_ref_seqs).num_splits;
}

/* The slots for a launch of `splits` splits under `policy`. */
static inline uint32_t slots_for(struct splitk_policy policy, uint32_t sm_count,
				 uint32_t num_q_heads, uint32_t max_rows, uint32_t splits)
{
	/* Legacy picks sm_count / (heads * max(batch, num_seqs)), so
	 * num_seqs * heads * splits <= sm_count for every batch: the arena it
	 * had before #928 still covers it, and "unchanged" means unchanged. */
	if (policy.kind == SPLITK_LEGACY) {
		return max_u32(sm_count, 1);
	}
	return sat_mul(sat_mul(max_u32(max_rows, 1), max_u32(num_q_heads, 1)), splits);
}

/* The count once, and its slots; `k` as given (auto_terms). */
static inline struct splitk_launch launch(struct splitk_constants k, struct splitk_policy policy,
					  uint32_t sm_count, uint32_t num_q_heads, uint32_t max_rows,
					  uint32_t legacy_ref_seqs)
{
	struct splitk_launch l;

	/* legacy first, as the only arm that reads neither constant: most
	 * targets declare it, and it then pays for nothing it does not use */
	if (policy.kind == SPLITK_LEGACY) {
		l.num_splits = legacy_terms(sm_count, num_q_heads, legacy_ref_seqs).num_splits;
	} else {
		l.num_splits = split_terms(k, policy, sm_count, num_q_heads, legacy_ref_seqs).num_splits;
	}
	l.workspace_slots = slots_for(policy, sm_count, num_q_heads, max_rows, l.num_splits);
	return l;
}

struct splitk_launch splitk_launch_with(struct splitk_constants k, struct splitk_policy policy,
					uint32_t sm_count, uint32_t num_q_heads, uint32_t max_rows,
					uint32_t legacy_ref_seqs)
{
	return launch(k, policy, sm_count, num_q_heads, max_rows, legacy_ref_seqs);
}

uint32_t splitk_workspace_slots(struct splitk_policy policy, uint32_t sm_count,
				uint32_t num_q_heads, uint32_t max_rows,
				uint32_t legacy_ref_seqs)
{
	return launch(seed_constants, policy, sm_count, num_q_heads, max_rows, legacy_ref_seqs)
		.workspace_slots;
}

uint32_t splitk_workspace_slots_with(struct splitk_constants k, struct splitk_policy policy,
				     uint32_t sm_count, uint32_t num_q_heads, uint32_t max_rows,
				     uint32_t legacy_ref_seqs)
{
	return splitk_launch_with(k, policy, sm_count, num_q_heads, max_rows, legacy_ref_seqs)
		.workspace_slots;
}

struct splitk_bytes splitk_workspace_bytes(uint32_t slots, uint32_t head_dim)
{
	/* slots * (head_dim + 2) * 4 < 2^32 * (2^32 + 2) * 4 < 2^67: split the
	 * 64x64 product into 32-bit halves so no bit is lost. */
	uint64_t a = slots, b = ((uint64_t)head_dim + 2u) * 4u;
	uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
	uint64_t lo_part = a * b_lo, hi_part = a * b_hi; /* each < 2^64 */
	struct splitk_bytes r = {head_dim != 0, 0, 0};

	if (!r.known) {
		return r;
	}
	r.lo = lo_part + (hi_part << 32);
	r.hi = (hi_part >> 32) + (r.lo < lo_part ? 1u : 0u);
	return r;
}

const char *splitk_kind_name(enum splitk_kind kind)
{
	switch (kind) {
	case SPLITK_LEGACY:
		return "legacy";
	case SPLITK_AUTO:
		return "auto";
	case SPLITK_PINNED:
		return "pinned";
	}
	return "unknown";
}
