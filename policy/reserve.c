/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * reserve — the worst-case split-K scratch of a serve, from the ports
 * themselves (reserve.h). Each engine's function below opens with the
 * proof that its candidates reach the largest workspace_bytes of any
 * answered batch within the bounds; the candidates are launched through
 * the port's own *_launch_batch, and the witness is the best of them.
 *
 * Words used in the proofs. A batch is n sequences (1..B) of lengths
 * 1..L. Its "longest" is its largest length. A "spike" (n, len) is one
 * sequence of len beside n - 1 of 1 token: among the batches of n
 * sequences whose longest is len it has the fewest tokens, pages and
 * blocks, so every refusal that grows with a sequence's length or with the
 * batch's sums (an int overflow, an int32 indptr) refuses it last. A
 * "class" is a set of lengths a port cannot tell apart (the same pages,
 * the same KV blocks); its representative is its shortest length, which
 * such refusals refuse last too.
 *
 * No allocation, no I/O, no state; only the caller's two arrays are
 * written. Answers are filled member by member and returned from one
 * place: a struct copy is a memcpy call for some compilers, which the
 * pure core may not make (as the ports say).
 */
#include "reserve.h"

#include "fa2.h"
#include "fa3.h"
#include "flashinfer.h"
#include "flashmla.h"
#include "sglang.h"
#include "trtllm.h"
#include "vllm.h"
#include "vllm_triton.h"
#include "vllm_v1.h"

#define RESERVE_INT32_MAX 2147483647u

/* What one launch answered, as far as a reserve reads it: the scalars and
 * up to two terms by name (0 when the port did not name them). */
struct seen {
	enum engine_status status;
	uint64_t workspace_bytes;
	uint32_t num_splits, num_splits_bound;
	const char *refused, *refused_input;
	uint64_t t1, t2;
};

/* One reserve's search: the port and its inputs, the caller's arrays (the
 * batch under test lives in `batch`, the witness array), and the work. */
struct probe {
	enum reserve_engine e;
	const struct engine_shape *s;
	const void *o;
	uint32_t *batch;
	uint32_t *by_seq;
	uint32_t max_batch_size, max_model_len;
	uint64_t work;
	bool over; /* a launch would have passed RESERVE_WORK_MAX */
};

/* A batch by its form: batch[0] = first, the n - 1 others rest. */
struct point {
	uint32_t n, first, rest;
};

/* The best answered point so far, and the first refusal met. */
struct best {
	bool found;
	uint64_t bytes;
	struct point pt;
	const char *refused, *refused_input;
};

static bool same_name(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static uint64_t term_of(const struct engine_answer *a, const char *name)
{
	for (unsigned i = 0; name != NULL && i < a->n_terms; i++) {
		if (same_name(a->terms[i].name, name)) {
			return a->terms[i].value;
		}
	}
	return 0;
}

static void see(const struct engine_answer *a, const char *t1, const char *t2, struct seen *out)
{
	out->status = a->status;
	out->workspace_bytes = a->workspace_bytes;
	out->num_splits = a->num_splits;
	out->num_splits_bound = a->num_splits_bound;
	out->refused = a->refused;
	out->refused_input = a->refused_input;
	out->t1 = term_of(a, t1);
	out->t2 = term_of(a, t2);
}

static const char work_reason[] =
	"the exact search would launch more than RESERVE_WORK_MAX (2^25) batch entries; give a "
	"smaller max_batch_size or max_model_len";

/* Launches batch[0..n) through the port; false (out refused) when the
 * launch would pass the cap, which it then does not make. Each case keeps
 * its own answer, so the port writes it in place (no struct copy). */
static bool launch(struct probe *p, uint32_t n, const char *t1, const char *t2, struct seen *out)
{
	const struct engine_batch b = {p->batch, n};

	if (p->work + n > RESERVE_WORK_MAX) {
		p->over = true;
		out->status = ENGINE_REFUSED;
		out->refused = work_reason;
		out->refused_input = "max_batch_size";
		return false;
	}
	p->work += n;
	switch (p->e) {
	case RESERVE_FA2: {
		struct engine_answer a = fa2_launch_batch(p->s, &b, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_FA3: {
		struct engine_answer a = fa3_launch_batch(p->s, &b, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_FLASHINFER: {
		struct engine_answer a = flashinfer_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_VLLM: {
		struct engine_answer a = vllm_launch_batch(p->s, &b, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_VLLM_V1: {
		struct engine_answer a = vllm_v1_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_VLLM_TRITON: {
		struct engine_answer a = vllm_triton_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_SGLANG: {
		struct engine_answer a = sglang_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_TRTLLM: {
		struct engine_answer a = trtllm_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	case RESERVE_FLASHMLA: {
		struct engine_answer a = flashmla_launch_batch(p->s, &b, p->o, p->by_seq);
		see(&a, t1, t2, out);
		break;
	}
	default:
		out->status = ENGINE_REFUSED;
		out->refused = "no such engine";
		out->refused_input = "engine";
		break;
	}
	return true;
}

static void fill(uint32_t *batch, struct point pt)
{
	for (uint32_t i = 0; i < pt.n; i++) {
		batch[i] = i == 0 ? pt.first : pt.rest;
	}
}

static bool eval(struct probe *p, struct point pt, const char *t1, const char *t2,
		 struct seen *out)
{
	fill(p->batch, pt);
	return launch(p, pt.n, t1, t2, out);
}

static struct point uniform(uint32_t n, uint32_t len)
{
	struct point pt = {n, len, len};

	return pt;
}

static struct point spike(uint32_t n, uint32_t len)
{
	struct point pt = {n, len, 1};

	return pt;
}

/* Keeps pt when it is answered and at least the best: of equals, the last
 * searched stays (the larger batch or longer class, which a reader takes
 * for the worst case more readily); keeps the first refusal for a reserve
 * none answers. */
static void consider(struct best *b, struct point pt, const struct seen *x)
{
	if (x->status != ENGINE_OK) {
		if (b->refused == NULL) {
			b->refused = x->refused;
			b->refused_input = x->refused_input;
		}
		return;
	}
	if (!b->found || x->workspace_bytes >= b->bytes) {
		b->found = true;
		b->bytes = x->workspace_bytes;
		b->pt = pt;
	}
}

static void best_init(struct best *b)
{
	b->found = false;
	b->bytes = 0;
	b->pt.n = 0;
	b->pt.first = 0;
	b->pt.rest = 0;
	b->refused = NULL;
	b->refused_input = NULL;
}

static void refuse(struct reserve_answer *r, const char *why, const char *input)
{
	r->status = ENGINE_REFUSED;
	r->workspace_bytes = 0;
	r->witness_len = 0;
	r->num_splits = 0;
	r->num_splits_bound = 0;
	r->refused = why;
	r->refused_input = input;
}

static const char none_answered[] =
	"the engine answers no batch within max_batch_size and max_model_len";

/* The answer from the witness now in p->batch (n entries): launched once
 * more, so that by_seq and the counts are the port's for exactly it. */
static void answer_with(struct probe *p, struct reserve_answer *r, uint32_t n)
{
	struct seen x;

	if (!launch(p, n, NULL, NULL, &x) || x.status != ENGINE_OK) {
		refuse(r, x.refused != NULL ? x.refused : none_answered, x.refused_input);
		return;
	}
	r->status = ENGINE_OK;
	r->workspace_bytes = x.workspace_bytes;
	r->witness_len = n;
	r->num_splits = x.num_splits;
	r->num_splits_bound = x.num_splits_bound;
}

/* The reserve from a finished search: its best point, or a refusal (the
 * cap first: a capped search proves nothing). */
static void settle(struct probe *p, struct reserve_answer *r, const struct best *b)
{
	if (p->over) {
		refuse(r, work_reason, "max_batch_size");
		return;
	}
	if (!b->found) {
		refuse(r, b->refused != NULL ? b->refused : none_answered,
		       b->refused != NULL ? b->refused_input : "max_batch_size");
		return;
	}
	fill(p->batch, b->pt);
	answer_with(p, r, b->pt.n);
}

/* For an engine whose scratch, where answered, is the same for every
 * batch of B sequences (it reads the size, not the lengths) and never
 * smaller for fewer (or is one buffer whatever the batch: with_single
 * adds a lone 1-token sequence, for a buffer that does not grow with n):
 * the first answered of B sequences of L, a spike, B of 1 token. Where
 * none is answered the reserve is refused with the first one's reason:
 * a smaller batch may be answered, but its scratch is not proven the most. */
static void first_answered(struct probe *p, struct reserve_answer *r, bool with_single)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	const struct point cands[4] = {uniform(B, L), spike(B, L), uniform(B, 1), uniform(1, 1)};
	const unsigned count = with_single ? 4u : 3u;
	struct best b;
	struct seen x;

	best_init(&b);
	for (unsigned i = 0; i < count && !b.found; i++) {
		if (!eval(p, cands[i], NULL, NULL, &x)) {
			break;
		}
		consider(&b, cands[i], &x);
	}
	settle(p, r, &b);
}

/* The class after k when classes 1..k_sat are each searched and then
 * only the last, `last` (>= k_sat), stands for the rest: last + 1 ends. */
static uint64_t next_class(uint64_t k, uint64_t k_sat, uint64_t last)
{
	if (k < k_sat) {
		return k + 1;
	}
	return k < last ? last : last + 1;
}

/* ceil(a / b) for b >= 1. */
static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------------------ */

static const char unit_launch[] = "bytes of one attention layer's launch";
static const char layers_torch[] =
	"allocated by the layer's call and freed when it returns; the next layer reuses the "
	"memory through PyTorch's caching allocator: one layer's figure, not times the layers";

static void describe(struct reserve_answer *r, enum reserve_method m, const char *basis,
		     const char *layers)
{
	r->method = m;
	r->method_name = m == RESERVE_MONOTONE ? "monotone"
			 : m == RESERVE_SEARCH ? "search"
			 : m == RESERVE_BOUND	 ? "bound"
						 : "fixed";
	r->basis = basis;
	r->unit = unit_launch;
	r->layers_multiply = false;
	r->layers = layers;
}

/*
 * FlashAttention-2 (fa2.h). fa2_launch_batch answers fa2_launch's answer
 * for n sequences of the longest (its header), so the scratch and every
 * refusal are functions of (n, longest). The scratch is
 * num_splits * n * num_heads * seqlen_q * (1 + head_size_rounded) * 4
 * bytes when num_splits > 1, else 0, num_heads and seqlen_q the shape's
 * (after the GQA swap).
 *
 * num_splits given (N > 0): the count is N whatever the batch, so the
 * scratch grows with n alone: monotone, B sequences.
 *
 * num_splits 0 (the heuristic): the count is num_splits_heuristic(
 * n * num_heads * num_m_blocks, 2 * sm_count, num_n_blocks, 128). It
 * falls as n grows (1 once n * num_heads * num_m_blocks >= 0.8 *
 * num_SMs) and moves either way with num_n_blocks (eligibility), so it is
 * searched:
 *  - the longest enters only through num_n_blocks = pages * page_size /
 *    block_n (page_size a multiple of 256, block_n 64, 128 or 256 divides
 *    it): a class is a page count k, represented by (k - 1) * page_size + 1;
 *  - from num_n_blocks >= 128 * 127 = 16256 on, the count is the same:
 *    max_splits = min(128, num_SMs) no longer moves, and every split s <=
 *    128 is eligible (num_n_blocks / (s - 1) - num_n_blocks / s =
 *    num_n_blocks / (s (s - 1)) >= 1, so their ceilings differ); the class
 *    that first reaches it stands for every longer one;
 *  - the first n whose batch_nheads_mblocks (the port's term) reaches
 *    0.8f * num_SMs answers 1 split, 0 bytes, and so does every larger n:
 *    the search stops there;
 *  - fa2's batch refusals grow with n (num_seqs * num_q_heads past int)
 *    and with the longest (seqlen_k past int): a refused class ends the
 *    lengths at that n, a refused first class ends the n.
 * Work: at most n_stop * K launches of n entries, n_stop <= B, K <=
 * min(pages(L), ceil(16256 * block_n / page_size)).
 */
static const char basis_fa2_fixed[] =
	"num_splits is the caller's: the scratch is num_splits * n * heads * rows, growing "
	"with the batch size alone";
static const char basis_fa2[] =
	"the heuristic's count falls with the batch and moves with num_n_blocks: exact search "
	"over batch sizes and page counts, up to 16256 KV blocks (where it stops moving) and "
	"the batch size where it answers 1 split";

static void reserve_fa2(struct probe *p, struct reserve_answer *r)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	struct best b;
	struct seen x;

	if (p->s->num_splits != 0) {
		describe(r, RESERVE_MONOTONE, basis_fa2_fixed, layers_torch);
		first_answered(p, r, false);
		return;
	}
	describe(r, RESERVE_SEARCH, basis_fa2, layers_torch);
	best_init(&b);
	if (!eval(p, uniform(1, 1), "block_n", NULL, &x) || x.status != ENGINE_OK) {
		consider(&b, uniform(1, 1), &x);
		settle(p, r, &b);
		return;
	}
	const uint64_t page = p->s->page_size;
	const uint64_t k_max = min_u64(cdiv(L, page), cdiv(16256u * x.t1, page));
	bool stop = false;
	for (uint32_t n = 1; n <= B && !stop && !p->over; n++) {
		for (uint64_t k = 1; k <= k_max; k++) {
			const struct point pt = spike(n, (uint32_t)((k - 1) * page + 1));
			if (!eval(p, pt, "batch_nheads_mblocks", "num_SMs", &x)) {
				break;
			}
			consider(&b, pt, &x);
			if (x.status != ENGINE_OK) {
				stop = k == 1;
				break;
			}
			/* upstream's own compare: an int against 0.8f * an int */
			if (k == 1 && (float)(int)x.t1 >= 0.8f * (float)(int)x.t2) {
				stop = true;
				break;
			}
		}
	}
	settle(p, r, &b);
}

/*
 * FlashAttention-3 (fa3.h). The scratch is params.num_splits * n * h *
 * seqlen_q * (head_dim + 1) * 4 bytes when params.num_splits > 1, else 0:
 * the per-batch split of the prepare kernel sizes nothing. It is monotone
 * in n and the longest:
 *  - num_splits given (N > 0): params.num_splits is N, whatever the batch;
 *  - num_splits 0: get_num_splits pretends batch = 1 (varlen), so the count
 *    reads the longest alone, through seqlen_k = pages * page_size, and it
 *    never falls as seqlen_k grows. With total_mblocks (the shape's) >=
 *    0.8f * num_SMs it is 1, or, in the L2 branch (size_one_kv_head > 50
 *    MiB, which grows with seqlen_k), min(ceil(size_one_kv_head / 50 MiB),
 *    128), growing too. Otherwise it is 1 up to 4 blocks, then the
 *    smallest s <= m = min(128, num_SMs, num_n_blocks) whose efficiency
 *    eff(s) (a function of s alone: no eligibility test in FA3) reaches
 *    0.85 * the largest eff over 1..m. As m grows the largest can only
 *    grow, so the threshold t(m) can only rise; for m < m', the count at
 *    m' is either above m (so above the count at m, which is <= m) or some
 *    s <= m with eff(s) >= t(m') >= t(m), so no smaller than the count
 *    at m. m grows with num_n_blocks, which grows with seqlen_k.
 * So the count times n is largest at n = B and the longest L. fa3's batch
 * refusals (int overflows) grow with n, the lengths and their sum, so
 * B sequences of L, or failing that one of L beside B - 1 of one token
 * (the same scratch, the least sum), is answered if any batch of B of
 * longest L is; where neither is, the reserve is refused with the port's
 * reason (a smaller batch may be answered but is not proven the worst).
 */
static const char basis_fa3_fixed[] =
	"num_splits is the caller's: the scratch is num_splits * n * heads * (head_dim + 1) "
	"floats, growing with the batch size alone";
static const char basis_fa3[] =
	"the host's count reads the longest sequence alone (batch = 1 for varlen) and never "
	"falls as it grows; the scratch is that count times the batch size";

/* The corner of an engine monotone in n and the longest: B of L, or one
 * of L beside B - 1 of one token (the same n and longest), the first
 * answered; neither answered refuses with the first's reason. */
static void corner(struct probe *p, struct reserve_answer *r)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	const struct point cands[2] = {uniform(B, L), spike(B, L)};
	struct best b;
	struct seen x;

	best_init(&b);
	for (unsigned i = 0; i < 2 && !b.found; i++) {
		if (!eval(p, cands[i], NULL, NULL, &x)) {
			break;
		}
		consider(&b, cands[i], &x);
	}
	settle(p, r, &b);
}

static void reserve_fa3(struct probe *p, struct reserve_answer *r)
{
	describe(r, RESERVE_MONOTONE, p->s->num_splits != 0 ? basis_fa3_fixed : basis_fa3,
		 layers_torch);
	corner(p, r);
}

/*
 * vLLM paged attention v0 (vllm.h). The answer for a batch is
 * vllm_launch's for n sequences of the longest, so the scratch is a
 * function of (n, longest): v2's n * heads * P * (2 * head_size + 8)
 * bytes, P = ceil(longest / 512), or 0 where use_v1 = longest <= 8192 &&
 * (P == 1 || n * heads > 512). For a fixed n it never falls as the
 * longest grows (use_v1 only turns false as the longest grows, and P
 * grows), so the longest is L; in n it falls (v1 takes over past 512
 * rows), so every n is launched. A refusal (a shape refusal, or a v2
 * scratch past 2^63 bytes) leaves shorter batches unproven: refused.
 */
static const char basis_vllm[] =
	"v2's scratch grows with the longest sequence at a fixed batch size, but v1 (no "
	"scratch) takes over past 512 sequence-heads: exact search over batch sizes at "
	"max_model_len";

static void reserve_vllm(struct probe *p, struct reserve_answer *r)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	struct best b;
	struct seen x;

	describe(r, RESERVE_SEARCH, basis_vllm, layers_torch);
	best_init(&b);
	for (uint32_t n = 1; n <= B; n++) {
		if (!eval(p, spike(n, L), NULL, NULL, &x)) {
			break;
		}
		if (x.status != ENGINE_OK && b.found) {
			refuse(r, x.refused, x.refused_input);
			return;
		}
		consider(&b, spike(n, L), &x);
		if (x.status != ENGINE_OK) {
			break;
		}
	}
	settle(p, r, &b);
}

/*
 * vLLM V1 FLASH_ATTN (vllm_v1.h). The scratch is a function of n and the
 * longest (the prepare kernel's per-sequence split sizes nothing):
 *  - a batch that replays a full CUDA graph (use_full_cuda_graph and n <=
 *    the largest capture size) runs FA3 with max_num_splits 32, or FA2
 *    with the capture's seqlen_k (max_model_len): its scratch does not
 *    read the lengths, so each such n is launched once, at the longest the
 *    graph admits (min(L, the options' max_model_len)), or at one token
 *    where that length alone is refused;
 *  - an eager FA3 batch takes get_num_splits of the longest alone (batch
 *    = 1) times the batch, and 1 split (no scratch) past 992 sequences: for
 *    each longest the largest is at n = min(B, 992), launched over the
 *    classes of the longest: ceil(longest / kBlockN) up to 128 blocks
 *    (where max_splits stops moving), the last class, and L itself (the
 *    L2 branch reads seqlen_k, growing with it), or where L is refused
 *    for its length the longest answered below it (found by halving:
 *    those refusals grow with the length);
 *  - an eager FA2 batch (only the GQA swap splits) takes the FA2 heuristic
 *    of n and num_n_blocks = ceil(longest / block_n): searched as FA2 is,
 *    classes up to 16256 blocks, stopping at the first n whose
 *    n * num_kv_heads * num_m_blocks reaches 0.8f * 2 * sm_count;
 *  - batch invariance, or FA2 without the swap: one split, no scratch.
 * A refusal of a class longer than some answered batch leaves it unproven
 * unless the same length is refused alone (the int checks of the longest);
 * otherwise the reserve is refused with the port's reason.
 */
static const char basis_vllm_v1[] =
	"full CUDA graphs fix the split (FA3: 32) and pad the batch; eager FA3 multiplies the "
	"longest's count by the batch, up to 992; eager FA2 falls with the batch: exact search "
	"over batch sizes and KV-block classes";

struct v1_view {
	uint32_t cap;      /* the largest batch a full graph replays, 0: none */
	uint32_t full_len; /* the longest a full graph admits */
	int fa;
	bool zero;        /* one split whatever the batch */
	uint64_t block_n; /* FA3 kBlockN or FA2 block_n */
};

/* Launches (n, len) and, when refused, decides whether that refusal is
 * the length's alone (also refused at n = 1): then it is skipped. Returns
 * false when the reserve is refused or the cap met. */
static bool v1_point(struct probe *p, struct reserve_answer *r, struct best *b, struct point pt,
		     struct seen *x)
{
	if (!eval(p, pt, "num_m_blocks", NULL, x)) {
		return false;
	}
	if (x->status == ENGINE_OK) {
		consider(b, pt, x);
		return true;
	}
	struct seen one;
	if (!eval(p, spike(1, pt.first), NULL, NULL, &one)) {
		return false;
	}
	if (one.status == ENGINE_OK) {
		refuse(r, x->refused, x->refused_input);
		return false;
	}
	consider(b, pt, x);
	return true;
}

/* The longest answered spike of n in [lo, hi], lo answered or skipped
 * already: hi, or, where hi is refused, the last length before the
 * refusals begin (the length refusals of FA3 grow with the length), by
 * halving. Returns false when the reserve is refused or the cap met. */
static bool v1_longest(struct probe *p, struct reserve_answer *r, struct best *b, uint32_t n,
		       uint32_t lo, uint32_t hi)
{
	struct seen x;

	if (!v1_point(p, r, b, spike(n, hi), &x)) {
		return false;
	}
	if (x.status == ENGINE_OK) {
		return true;
	}
	if (!eval(p, spike(n, lo), NULL, NULL, &x)) {
		return false;
	}
	if (x.status != ENGINE_OK) {
		return true; /* the class is refused from its first length on */
	}
	while (lo + 1 < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (!eval(p, spike(n, mid), NULL, NULL, &x)) {
			return false;
		}
		if (x.status == ENGINE_OK) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	return v1_point(p, r, b, spike(n, lo), &x);
}

static void reserve_vllm_v1(struct probe *p, struct reserve_answer *r)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	struct vllm_v1_options given;
	struct best b;
	struct seen x;
	struct v1_view v;

	/* The graphs of a serve are captured at its own max_model_len: an
	 * options' max_model_len left 0 is the reserve's (reserve.h). */
	if (p->o != NULL) {
		const struct vllm_v1_options *in = p->o;
		given.compute_capability = in->compute_capability;
		given.cudagraph_mode = in->cudagraph_mode;
		given.max_capture_size = in->max_capture_size;
		given.batch_invariant = in->batch_invariant;
		given.max_model_len = in->max_model_len != 0 ? in->max_model_len : L;
		p->o = &given;
	}
	const struct vllm_v1_options *o = p->o;
	describe(r, RESERVE_SEARCH, basis_vllm_v1, layers_torch);
	best_init(&b);
	if (!eval(p, uniform(1, 1), "fa_version", "kBlockN", &x) || x.status != ENGINE_OK) {
		consider(&b, uniform(1, 1), &x);
		settle(p, r, &b);
		return;
	}
	/* a refusal at (1, 1) above was every option's: o is given here */
	const bool full_mode = o->cudagraph_mode == VLLM_V1_CUDAGRAPH_FULL_AND_PIECEWISE ||
			       o->cudagraph_mode == VLLM_V1_CUDAGRAPH_FULL_DECODE_ONLY;
	v.cap = full_mode ? vllm_v1_largest_capture_size(o->max_capture_size ? o->max_capture_size
									   : 512u)
			  : 0;
	v.full_len = o->max_model_len != 0 && o->max_model_len < L ? o->max_model_len : L;
	v.fa = (int)x.t1;
	v.block_n = x.t2;
	v.zero = o->batch_invariant || (v.fa == 2 && p->s->num_q_heads <= p->s->num_kv_heads);
	if (v.zero) {
		describe(r, RESERVE_MONOTONE,
			 "one split whatever the batch (batch invariance, or FA2 without the GQA "
			 "swap): no scratch",
			 layers_torch);
		first_answered(p, r, true);
		return;
	}
	if (v.fa == 2) {
		/* FA2's block_n, named only when it swaps (it does here) */
		if (!eval(p, uniform(1, 1), "block_n", NULL, &x) || x.status != ENGINE_OK) {
			consider(&b, uniform(1, 1), &x);
			settle(p, r, &b);
			return;
		}
		v.block_n = x.t1;
	}
	const uint64_t blocks = cdiv(L, v.block_n);
	const uint64_t k_sat = min_u64(blocks, v.fa == 3 ? 128u : 16256u);
	const uint32_t fa3_n = B < 992u ? B : 992u;
	bool stop = false;
	for (uint32_t n = 1; n <= B && !stop; n++) {
		if (n <= v.cap) {
			/* the graph's scratch reads no length: where the longest
			 * it admits is refused for its length alone, one token
			 * stands for it */
			if (!v1_point(p, r, &b, spike(n, v.full_len), &x) ||
			    (x.status != ENGINE_OK && !v1_point(p, r, &b, uniform(n, 1), &x))) {
				stop = true;
			}
			continue;
		}
		if (v.fa == 3 && n != fa3_n) {
			continue;
		}
		for (uint64_t k = 1; k <= blocks; k = next_class(k, k_sat, blocks)) {
			const struct point pt = spike(n, (uint32_t)((k - 1) * v.block_n + 1));
			if (!v1_point(p, r, &b, pt, &x)) {
				stop = true;
				break;
			}
			if (v.fa == 2 && k == 1 && x.status == ENGINE_OK &&
			    (float)(int)((uint64_t)n * p->s->num_kv_heads * x.t1) >=
				    0.8f * (float)(int)(2 * p->s->sm_count)) {
				stop = true; /* 1 split here and at every larger n */
				break;
			}
		}
		/* FA3's L2 branch reads seqlen_k itself, not its blocks: the
		 * longest answered, L or below it where L is refused */
		if (!stop && v.fa == 3 && (blocks - 1) * v.block_n + 1 < L &&
		    !v1_longest(p, r, &b, n, (uint32_t)((blocks - 1) * v.block_n + 1), L)) {
			stop = true;
		}
	}
	if (r->status != ENGINE_OK) {
		return;
	}
	settle(p, r, &b);
}

/*
 * FlashInfer (flashinfer.h), by path.
 *
 * CUDA cores, no CUDA graph: the scratch is
 * round16(heads * S * head_dim * 4) + heads * S * 4, S = new_batch_size,
 * when split_kv (S != n), else 0; it grows with S. Bound: with G =
 * max_grid_size, gdy = num_kv_heads, m = min_num_pages_per_batch, P =
 * pages(L), and the plan's uint32_t products not wrapping (min(B * P,
 * 2^31 - 1) * gdy < 2^32, else refused: the bound below assumes it),
 *  - split needs n * gdy < G, and the binary search ends on a low whose
 *    sum S satisfies S * gdy <= G (its high starts at the longest's pages,
 *    where S = n satisfies it), so S <= T = floor(G / gdy);
 *  - S = sum ceil(p_i / low) <= n * ceil(P / m) <= B * c0, c0 = ceil(P / m);
 *  - so S <= min(T, B * c0), and split needs S > n, so c0 >= 2 and T >= 2.
 * It is reached: when B * c0 <= T, B sequences of L (the search keeps low
 * = m, where the sum B * c0 already fits); else n = min(B, T - 1)
 * sequences whose ceil(p_i / m) add up to T, each at most c0 (one page
 * count t * m, or P for c0, or 1 token for 1): the sum at m is T, so low =
 * m and S = T > n. The port's new_batch_size for that batch is checked
 * against the target; a miss is refused, never answered. Where the merge
 * refuses every split launch (head_dim not 64, 128, 256, 512) the most
 * any answered batch holds is 0.
 *
 * CUDA cores under a CUDA graph: a split launch (n * gdy < G) holds the
 * padded batch max_grid_size / gdy whatever its size, else 0: one fixed
 * buffer, which a lone sequence reaches if any batch does.
 *
 * Tensor cores (the prefill plan), M = max_batch_size_if_split, tq =
 * ceil(group / cta_tile_q) (both the shape's):
 *  - disable_split_kv: never splits, 0;
 *  - fixed_split_size F, no graph: S = sum tq * ceil(p_i / F), split when
 *    a request has more than F pages: both grow with every length and n,
 *    so B sequences of L are the most (monotone), or 0 where the merge
 *    refuses every split launch;
 *  - F under a graph: a split launch holds max(M, total_num_tiles_q(n)),
 *    growing with n; the batch most likely answered at n (the check
 *    new_batch_size <= padded) is one sequence of F + 1 pages beside
 *    n - 1 of one: n is searched down from B;
 *  - no F, under a graph: it always splits and holds max(M,
 *    total_num_tiles_q(n)), the size alone: monotone;
 *  - no F, no graph: as the CUDA-core bound with T = floor(M / tq), m =
 *    min_kv_chunk_size and S counted in tiles (tq * the sum): split needs
 *    low < the longest's pages, where the search's sum fitted M (int64,
 *    no wrap), so S <= tq * min(T, B * c0), reached by the same batches.
 */
static const char basis_fi_graph[] =
	"under a CUDA graph a split launch holds the padded batch max_grid_size / num_kv_heads "
	"whatever the batch: one buffer";
static const char basis_fi_bound[] =
	"new_batch_size is at most max_grid_size / num_kv_heads and the batch's page chunks; a "
	"batch built to fill it reaches that bound";
static const char basis_fi_tc_bound[] =
	"new_batch_size is at most max_batch_size_if_split (in q tiles) and the batch's page "
	"chunks; a batch built to fill it reaches that bound";
static const char basis_fi_zero[] = "disable_split_kv: the plan never splits, no scratch";
static const char basis_fi_fixed_split[] =
	"fixed_split_size: the chunks grow with every length and the batch size";
static const char basis_fi_fixed_graph[] =
	"fixed_split_size under a CUDA graph: a split launch holds the padded batch, growing "
	"with the batch size; exact search over batch sizes";
static const char basis_fi_tc_graph[] =
	"under a CUDA graph the plan always splits and holds the padded batch, growing with the "
	"batch size alone";
static const char layers_fi[] =
	"the wrapper's float workspace buffer, planned once a step and shared by every layer";

static bool merge_head_dim(uint32_t head_dim)
{
	return head_dim == 64 || head_dim == 128 || head_dim == 256 || head_dim == 512;
}

/*
 * Writes n sequences whose ceil(pages / m) add up to `sum` (n <= sum <= n
 * * c0), each at most c0: t chunks is t * m pages, c0 is L, 1 is 1 token.
 */
static void build_bound(uint32_t *batch, uint32_t n, uint64_t sum, uint64_t c0, uint64_t m,
			uint64_t page, uint32_t L)
{
	uint64_t extra = sum - n;

	for (uint32_t i = 0; i < n; i++) {
		const uint64_t t = 1 + min_u64(c0 - 1, extra);
		extra -= t - 1;
		batch[i] = t == c0 ? L : t == 1 ? 1u : (uint32_t)((t * m - 1) * page + 1);
	}
}

/* The bound of either no-graph plan: T chunk units (tq tiles each), c0 a
 * request's most at the least chunk m. Launches the batch reaching it and
 * answers; or 0 where no batch splits. */
static void fi_bound(struct probe *p, struct reserve_answer *r, uint64_t T, uint64_t tq,
		     uint64_t m)
{
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	const uint64_t page = p->s->page_size;
	const uint64_t c0 = cdiv(cdiv(L, page), m);
	struct seen x;
	uint32_t n;
	uint64_t units;

	if (T < 2 || c0 < 2) {
		first_answered(p, r, true); /* nothing splits: every answer is 0 */
		return;
	}
	if ((uint64_t)B * c0 <= T) {
		n = B;
		units = (uint64_t)B * c0;
	} else {
		n = (uint32_t)min_u64(B, T - 1);
		units = T;
	}
	build_bound(p->batch, n, units, c0, m, page, L);
	if (!launch(p, n, "new_batch_size", NULL, &x)) {
		refuse(r, work_reason, "max_batch_size");
		return;
	}
	if (x.status != ENGINE_OK) {
		if (!merge_head_dim(p->s->head_dim)) {
			first_answered(p, r, true); /* every split refused: 0 */
		} else {
			refuse(r, x.refused, x.refused_input);
		}
		return;
	}
	if (x.t1 != units * tq) {
		refuse(r, "the batch built to reach FlashInfer's bound did not reach it; no reserve "
			  "is answered (a port change reserve.c has not followed)",
		       "max_batch_size");
		return;
	}
	answer_with(p, r, n);
}

static void reserve_flashinfer(struct probe *p, struct reserve_answer *r)
{
	const struct flashinfer_options *o = p->o;
	const uint32_t B = p->max_batch_size, L = p->max_model_len;
	const bool tc = o != NULL && o->tensor_cores;
	const uint32_t F = o != NULL ? o->fixed_split_size : 0;
	const bool graph = p->s->cuda_graph;
	const uint64_t page = p->s->page_size;
	struct best b;
	struct seen x;

	best_init(&b);
	if (!tc && graph) {
		describe(r, RESERVE_FIXED, basis_fi_graph, layers_fi);
		const struct point cands[4] = {uniform(1, L), uniform(1, 1), uniform(B, 1),
					       uniform(B, L)};
		for (unsigned i = 0; i < 4 && !b.found; i++) {
			if (!eval(p, cands[i], NULL, NULL, &x)) {
				break;
			}
			consider(&b, cands[i], &x);
		}
		settle(p, r, &b);
		return;
	}
	if (!tc) {
		describe(r, RESERVE_BOUND, basis_fi_bound, layers_fi);
		if (!eval(p, uniform(1, 1), "max_grid_size", "gdy", &x) || x.status != ENGINE_OK) {
			consider(&b, uniform(1, 1), &x);
			settle(p, r, &b);
			return;
		}
		const uint64_t G = x.t1, gdy = x.t2;
		const uint64_t P = cdiv(L, page);
		if (min_u64((uint64_t)B * P, RESERVE_INT32_MAX) * gdy > 0xffffffffu) {
			refuse(r, "FlashInfer's CUDA-core plan multiplies its chunk count by num_kv_heads "
				  "in uint32_t, which may wrap for these bounds; no bound is proven: give "
				  "a smaller max_model_len or max_batch_size",
			       "max_model_len");
			return;
		}
		fi_bound(p, r, G / gdy, 1, page >= 128 ? 1 : 128 / page);
		return;
	}
	if (o->disable_split_kv) {
		describe(r, RESERVE_MONOTONE, basis_fi_zero, layers_fi);
		first_answered(p, r, true);
		return;
	}
	if (F != 0 && !graph) {
		/* only B sequences of L: the scratch reads every length */
		describe(r, RESERVE_MONOTONE, basis_fi_fixed_split, layers_fi);
		if (!eval(p, uniform(B, L), NULL, NULL, &x)) {
			refuse(r, work_reason, "max_batch_size");
			return;
		}
		if (x.status != ENGINE_OK && !merge_head_dim(p->s->head_dim)) {
			first_answered(p, r, true); /* every split refused: 0 */
			return;
		}
		answer_with(p, r, B);
		return;
	}
	if (F != 0) {
		describe(r, RESERVE_SEARCH, basis_fi_fixed_graph, layers_fi);
		const uint64_t split_len = (uint64_t)F * page + 1;
		for (uint32_t n = B; split_len <= L && n >= 1 && !b.found; n--) {
			if (!eval(p, spike(n, (uint32_t)split_len), NULL, NULL, &x)) {
				break;
			}
			if (x.status == ENGINE_OK && x.num_splits > 1) {
				consider(&b, spike(n, (uint32_t)split_len), &x);
			}
		}
		if (!b.found && !p->over) {
			first_answered(p, r, true); /* no split launch answered: 0 */
			return;
		}
		settle(p, r, &b);
		return;
	}
	if (graph) {
		describe(r, RESERVE_MONOTONE, basis_fi_tc_graph, layers_fi);
		first_answered(p, r, false);
		return;
	}
	describe(r, RESERVE_BOUND, basis_fi_tc_bound, layers_fi);
	if (!eval(p, uniform(1, 1), "max_batch_size_if_split", "cta_tile_q", &x) ||
	    x.status != ENGINE_OK) {
		consider(&b, uniform(1, 1), &x);
		settle(p, r, &b);
		return;
	}
	const uint64_t group = p->s->num_q_heads / p->s->num_kv_heads;
	const uint64_t tq = cdiv(group, x.t2);
	fi_bound(p, r, x.t1 / tq, tq, page >= 128 ? 1 : 128 / page);
}

/*
 * vLLM V1 TRITON_ATTN (vllm_triton.h): the builder's softmax segment
 * buffers, 64 * seq_threshold_3D * num_q_heads * (next_power_of_2(
 * head_dim) + 2) bytes, held whatever the batch: every answered batch
 * reports the same figure.
 */
static const char basis_triton[] =
	"the metadata builder allocates the 3D kernel's segment buffers once, for "
	"seq_threshold_3D sequences, whatever the batch";

static void reserve_vllm_triton(struct probe *p, struct reserve_answer *r)
{
	describe(r, RESERVE_FIXED, basis_triton,
		 "allocated once per metadata builder and shared by every layer of its KV-cache "
		 "group");
	first_answered(p, r, true);
}

/*
 * SGLang triton (sglang.h): attn_logits + attn_lse, rows * heads *
 * max_kv_splits * (v_head_dim + 1) * 4 bytes, max_kv_splits the server's
 * (or ceil(max_model_len / tile)); rows are the batch's (eager), growing
 * with n and reading no length: monotone; or the graph's
 * cuda_graph_max_bs rows whatever the batch: fixed.
 */
static void reserve_sglang(struct probe *p, struct reserve_answer *r)
{
	const char *layers = "one forward step's buffer, shared by every layer";

	if (p->s->cuda_graph) {
		describe(r, RESERVE_FIXED,
			 "a CUDA-graph replay uses the graph's attn_logits and attn_lse, allocated "
			 "once for cuda_graph_max_bs rows",
			 layers);
		first_answered(p, r, true);
		return;
	}
	describe(r, RESERVE_MONOTONE,
		 "attn_logits and attn_lse have a row a sequence and read no length: growing "
		 "with the batch size alone",
		 layers);
	first_answered(p, r, false);
}

/*
 * TensorRT-LLM XQA (trtllm.h): the multi-block scratch grows with nbSubSeq
 * = multi_block * num_kv_heads * n, where multi_block is
 * computeMultiBlockCount(h = longest / 128, n): it grows with h until the
 * wave limit, then is cut back by the batch (and 6000 / n), in double
 * arithmetic: not monotone, searched. Every refusal and the scratch read
 * the longest only as h (max(1, h) for the gain), and multi_block reads h
 * only through c(h) = max(1, min(h, round(sqrt(8 h)))), the port's term
 * multi_block_count, a function of h alone that never falls as h grows.
 * So a class is a run of h with one c(h), and at a given n every answered
 * h of a class has the same scratch. The classes are found through the
 * port itself, on a probe shape every h is answered for (1 SM, one KV
 * head of a group of 2: the gain always pays, no int or 4 GiB limit is
 * near), by galloping over h. Within a class at a given n the answered h
 * are an interval: mayHavePerfGain asks h at least some h_p(n), the int
 * block_count at most some h_i(n), the 4 GiB offsets read the scratch
 * (one value in the class). It holds the class's last h or its first:
 * missing both would need h_p > first and h_i < last, that is
 * num_kv_heads * n * max(1, first) * 4 < sm_count and num_kv_heads * n *
 * last > 2^31 - 1, so last > 4 * max(1, first) * (2^31 - 1) / sm_count
 * >= 4 * max(1, first), which no class spans (c(h) = h up to 8, and past
 * it a class of c is under c / 2 wide). Each n and class is launched at
 * the last h (the gain's best), then the first when that is refused.
 * Work: about sum(1..B) * sqrt(8 * L / 128) entries.
 * Deterministic: one block a sequence, no scratch.
 * This is the most any launch uses; TensorRT-LLM reserves more at build
 * time (XqaDispatcher::getWorkspaceSize, trtllm.h), which holds it.
 */
static const char basis_trtllm[] =
	"computeMultiBlockCount grows with the longest sequence and is cut back by the batch: "
	"exact search over batch sizes and the classes of longest / 128 it tells apart (XQA "
	"launches only; TensorRT-LLM's build-time workspace holds this)";

/* The length standing for h = longest / 128. */
static uint32_t trtllm_len(uint32_t h)
{
	return h == 0 ? 1u : 128u * h;
}

/* c(h), the port's multi_block_count for a lone sequence of trtllm_len(h)
 * on the probe shape; 0 where it is refused (not expected: the reserve is
 * then refused). One entry of work. */
static uint64_t trtllm_class(struct probe *p, uint32_t h)
{
	struct engine_shape t;
	const struct engine_batch b = {p->batch, 1};

	if (p->work + 1 > RESERVE_WORK_MAX) {
		p->over = true;
		return 0;
	}
	p->work++;
#define RESERVE_ZERO_ROW(x, e, name, kind, from, bounds, zero, about) t.name = 0;
	ENGINE_INPUTS(RESERVE_ZERO_ROW, ~)
#undef RESERVE_ZERO_ROW
	t.sm_count = 1;
	t.num_q_heads = 2;
	t.num_kv_heads = 1;
	t.head_dim = 128;
	t.page_size = 64;
	p->batch[0] = trtllm_len(h);
	struct engine_answer a = trtllm_launch_batch(&t, &b, NULL, p->by_seq);
	return a.status == ENGINE_OK ? term_of(&a, "multi_block_count") : 0;
}

/* The last h <= h_max of the class of `first`, whose c is c: galloping,
 * then halving (c never falls as h grows). 0 with p->over or a refusal. */
static bool trtllm_class_end(struct probe *p, uint32_t first, uint64_t c, uint32_t h_max,
			     uint32_t *last)
{
	uint32_t good = first, step = 1;
	uint64_t bad = (uint64_t)h_max + 1;

	while ((uint64_t)good + step <= h_max) {
		const uint64_t at = trtllm_class(p, good + step);
		if (at == 0) {
			return false;
		}
		if (at != c) {
			bad = good + step;
			break;
		}
		good += step;
		step *= 2;
	}
	while ((uint64_t)good + 1 < bad) {
		const uint32_t mid = good + (uint32_t)((bad - good) / 2);
		const uint64_t at = trtllm_class(p, mid);
		if (at == 0) {
			return false;
		}
		if (at == c) {
			good = mid;
		} else {
			bad = mid;
		}
	}
	*last = good;
	return true;
}

static void reserve_trtllm(struct probe *p, struct reserve_answer *r)
{
	const struct trtllm_options *o = p->o;
	const uint32_t B = p->max_batch_size, h_max = p->max_model_len / 128;
	const char *layers = "one workspace for the attention op, which every layer's launch uses "
			     "in turn";
	struct best b;
	struct seen x;

	if (o != NULL && o->deterministic) {
		describe(r, RESERVE_MONOTONE,
			 "deterministic: one block a sequence, no multi-block scratch", layers);
		first_answered(p, r, true);
		return;
	}
	describe(r, RESERVE_SEARCH, basis_trtllm, layers);
	best_init(&b);
	for (uint64_t first = 0; first <= h_max && !p->over;) {
		const uint64_t c = trtllm_class(p, (uint32_t)first);
		uint32_t last = 0;
		if (c == 0 || !trtllm_class_end(p, (uint32_t)first, c, h_max, &last)) {
			if (!p->over) {
				refuse(r, "TensorRT-LLM's probe shape was refused: a port change "
					  "reserve.c has not followed",
				       "max_model_len");
				return;
			}
			break;
		}
		for (uint32_t n = 1; n <= B; n++) {
			const struct point at_last = spike(n, trtllm_len(last));
			if (!eval(p, at_last, NULL, NULL, &x)) {
				break;
			}
			consider(&b, at_last, &x);
			if (x.status == ENGINE_OK || last == first) {
				continue;
			}
			const struct point at_first = spike(n, trtllm_len((uint32_t)first));
			if (!eval(p, at_first, NULL, NULL, &x)) {
				break;
			}
			consider(&b, at_first, &x);
		}
		first = (uint64_t)last + 1;
	}
	settle(p, r, &b);
}

/*
 * FlashMLA (flashmla.h): lse_accum + out_accum, (n + num_sm_parts) rows,
 * num_sm_parts from the SMs and heads alone: growing with n, reading no
 * length: monotone.
 */
static void reserve_flashmla(struct probe *p, struct reserve_answer *r)
{
	describe(r, RESERVE_MONOTONE,
		 "lse_accum and out_accum have batch_size + num_sm_parts rows: growing with the "
		 "batch size alone",
		 layers_torch);
	first_answered(p, r, false);
}

static void answer_init(struct reserve_answer *r)
{
	r->status = ENGINE_OK;
	r->workspace_bytes = 0;
	r->witness_len = 0;
	r->num_splits = 0;
	r->num_splits_bound = 0;
	r->method = RESERVE_MONOTONE;
	r->method_name = NULL;
	r->basis = NULL;
	r->unit = unit_launch;
	r->layers_multiply = false;
	r->layers = NULL;
	r->work = 0;
	r->refused = NULL;
	r->refused_input = NULL;
}

struct reserve_answer reserve_worst(enum reserve_engine e, const struct engine_shape *s,
				    const void *options, uint32_t max_batch_size,
				    uint32_t max_model_len, uint32_t *witness,
				    uint32_t *scratch_by_seq)
{
	struct reserve_answer r;
	struct probe p;

	answer_init(&r);
	p.e = e;
	p.s = s;
	p.o = options;
	p.batch = witness;
	p.by_seq = scratch_by_seq;
	p.max_batch_size = max_batch_size;
	p.max_model_len = max_model_len;
	p.work = 0;
	p.over = false;
	if (s == NULL || witness == NULL || scratch_by_seq == NULL) {
		refuse(&r, "the shape and the witness and scratch_by_seq arrays must be given",
		       "witness");
	} else if ((unsigned)e >= RESERVE_ENGINES) {
		refuse(&r, "no such engine", "engine");
	} else if (max_batch_size == 0) {
		refuse(&r, "max_batch_size must be at least 1", "max_batch_size");
	} else if (max_batch_size > ENGINE_MAX_SEQS) {
		refuse(&r, "max_batch_size is at most 4096 (ENGINE_MAX_SEQS)", "max_batch_size");
	} else if (max_model_len == 0) {
		refuse(&r, "max_model_len must be at least 1", "max_model_len");
	} else if (max_model_len > ENGINE_MAX_SEQ_LEN) {
		refuse(&r, "max_model_len is at most 2147483647 tokens (the engines' int32 lengths)",
		       "max_model_len");
	} else {
		switch (e) {
		case RESERVE_FA2:
			reserve_fa2(&p, &r);
			break;
		case RESERVE_FA3:
			reserve_fa3(&p, &r);
			break;
		case RESERVE_FLASHINFER:
			reserve_flashinfer(&p, &r);
			break;
		case RESERVE_VLLM:
			reserve_vllm(&p, &r);
			break;
		case RESERVE_VLLM_V1:
			reserve_vllm_v1(&p, &r);
			break;
		case RESERVE_VLLM_TRITON:
			reserve_vllm_triton(&p, &r);
			break;
		case RESERVE_SGLANG:
			reserve_sglang(&p, &r);
			break;
		case RESERVE_TRTLLM:
			reserve_trtllm(&p, &r);
			break;
		case RESERVE_FLASHMLA:
		default:
			reserve_flashmla(&p, &r);
			break;
		}
	}
	r.work = p.work;
	return r;
}
