/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * vocab — the one place a query parameter, an answer member or an OFREP
 * flag is named. Everything else reads these tables:
 *  - query.h builds enum query_field and struct query from VOCAB_PARAMS,
 *    and query.c its table of names, kinds and offsets (GET parameters,
 *    POST bodies, OpenFeature contexts);
 *  - decide.h's DECIDE_FIELDS is the rows whose scope is DECIDE, and
 *    batchfast.c's inputs are the same rows (the batch's fast reader);
 *  - fields.h builds enum fields_member from VOCAB_MEMBERS, fields.c its
 *    names (fields=), and every writer of an answer member (fragment.c,
 *    explain.c, diff.c, ...) spells its key with VOCAB_M_<MEMBER>;
 *  - ofrep.c's flag keys and their listing come from VOCAB_FLAGS;
 *  - tests/unit/test_vocab.c holds api/openapi.json to these tables (every
 *    decision input is a parameter of GET /v1/splits and a property of the
 *    POST body, every member a property of Decision).
 * A new input or member is a row here and nothing else that names it
 * (docs/DEVELOPING.md, "A new input"; scripts/check-input-recipe.sh
 * checks that recipe on a scratch copy).
 * Only macros: no code, no data.
 */
#ifndef SPLITKD_VOCAB_H
#define SPLITKD_VOCAB_H

/*
 * Every query parameter, as X(ENUM, name, kind, scope), in the order of
 * enum query_field (QF_<ENUM>). The name is the parameter's and its
 * struct query member's. kind: NAME (a catalog or revision name),
 * SPELLING (a policy spelling, or text taken as given), U32 (a decimal
 * 0..4294967295), BOOL. scope: DECIDE, an input of a decision (GET and
 * POST /v1/splits, each query of a batch, an OFREP context); OTHER, a
 * parameter of some other route.
 *
 * The order is the enum's, which a "did you mean" walks (a tie goes to
 * the earlier), and the batch's fast reader tries the DECIDE rows in it,
 * so the inputs a scheduler sends most come first (a batch of target,
 * model and max_batch_size queries: 43 instructions a decision less than
 * in the struct's old order): a new row goes at the end.
 */
#define VOCAB_PARAMS(X)                                               \
	X(TARGET, target, NAME, DECIDE)                               \
	X(MODEL, model, NAME, DECIDE)                                 \
	X(MAX_BATCH_SIZE, max_batch_size, U32, DECIDE)                \
	X(NUM_SEQS, num_seqs, U32, DECIDE)                            \
	X(MAX_ROWS, max_rows, U32, DECIDE)                            \
	X(HEAD_DIM, head_dim, U32, DECIDE)                            \
	X(OVERRIDE, override, SPELLING, DECIDE)                       \
	X(SM_COUNT, sm_count, U32, DECIDE)                            \
	X(DECLARED, declared, SPELLING, DECIDE)                       \
	X(NUM_Q_HEADS, num_q_heads, U32, DECIDE)                      \
	X(EXPLAIN, explain, BOOL, DECIDE)                             \
	/* GET /v1/policy */                                          \
	X(SPELLING, spelling, SPELLING, OTHER)                        \
	/* catalog revisions (revision.c) */                          \
	X(REVISION, revision, NAME, OTHER)                            \
	X(FROM, from, NAME, OTHER)                                    \
	X(TO, to, NAME, OTHER)                                        \
	/* POST /ofrep/v1/evaluate/flags after an SSE refetch (ADR-0008); \
	 * accepted, not needed */                                    \
	X(FLAG_CONFIG_ETAG, flagConfigEtag, SPELLING, OTHER)          \
	X(FLAG_CONFIG_LAST_MODIFIED, flagConfigLastModified, SPELLING, OTHER) \
	/* the answer members asked for (fields.h) */                 \
	X(FIELDS, fields, NAME, OTHER)                                \
	/* a named catalog (revision.c) */                            \
	X(CATALOG, catalog, NAME, OTHER)                              \
	/* GET /v1/history's page (handler_history) */                \
	X(LIMIT, limit, U32, OTHER)                                   \
	X(BEFORE, before, U32, OTHER)                                 \
	/* the other engines (engines.h): which, and the inputs they read */ \
	X(ENGINE, engine, NAME, DECIDE)                               \
	X(NUM_KV_HEADS, num_kv_heads, U32, DECIDE)                    \
	X(SEQ_LEN, seq_len, U32, DECIDE)                              \
	X(PAGE_SIZE, page_size, U32, DECIDE)                          \
	X(BLOCKS_PER_SM, blocks_per_sm, U32, DECIDE)                  \
	X(CUDA_GRAPH, cuda_graph, BOOL, DECIDE)

/*
 * Every member of a decision's answer, as X(ENUM), in the order the
 * answer writes them (enum fields_member: FM_<ENUM>); its key is
 * VOCAB_M_<ENUM>. A new member goes where the answer writes it.
 */
#define VOCAB_MEMBERS(X)    \
	X(TARGET)           \
	X(SM_COUNT)         \
	X(DECLARED)         \
	X(MODEL)            \
	X(NUM_Q_HEADS)      \
	X(HEAD_DIM)         \
	X(MAX_BATCH_SIZE)   \
	X(NUM_SEQS)         \
	X(MAX_ROWS)         \
	X(OVERRIDE)         \
	X(POLICY)           \
	X(SOURCE)           \
	X(NUM_SPLITS)       \
	X(WORKSPACE_SLOTS)  \
	X(WORKSPACE_BYTES)  \
	X(WARNINGS)         \
	X(CATALOG)          \
	X(CATALOG_NAME)     \
	X(EXPLAIN)

#define VOCAB_M_TARGET "target"
#define VOCAB_M_SM_COUNT "sm_count"
#define VOCAB_M_DECLARED "declared"
#define VOCAB_M_MODEL "model"
#define VOCAB_M_NUM_Q_HEADS "num_q_heads"
#define VOCAB_M_HEAD_DIM "head_dim"
#define VOCAB_M_MAX_BATCH_SIZE "max_batch_size"
#define VOCAB_M_NUM_SEQS "num_seqs"
#define VOCAB_M_MAX_ROWS "max_rows"
#define VOCAB_M_OVERRIDE "override"
#define VOCAB_M_POLICY "policy"
#define VOCAB_M_SOURCE "source"
#define VOCAB_M_NUM_SPLITS "num_splits"
#define VOCAB_M_WORKSPACE_SLOTS "workspace_slots"
#define VOCAB_M_WORKSPACE_BYTES "workspace_bytes"
#define VOCAB_M_WARNINGS "warnings"
#define VOCAB_M_CATALOG "catalog"
#define VOCAB_M_CATALOG_NAME "catalog_name"
#define VOCAB_M_EXPLAIN "explain"

/*
 * Every member of an engine's answer (engines.c; engine other than the
 * seed), in the order it writes them: its key is VOCAB_M_<ENUM>.
 */
#define VOCAB_ENGINE_MEMBERS(X) \
	X(ENGINE)               \
	X(TARGET)               \
	X(SM_COUNT)             \
	X(MODEL)                \
	X(NUM_Q_HEADS)          \
	X(NUM_KV_HEADS)         \
	X(HEAD_DIM)             \
	X(NUM_SEQS)             \
	X(SEQ_LEN)              \
	X(PAGE_SIZE)            \
	X(BLOCKS_PER_SM)        \
	X(CUDA_GRAPH)           \
	X(NUM_SPLITS)           \
	X(NUM_SPLITS_BOUND)     \
	X(WORKSPACE_BYTES)      \
	X(TERMS)                \
	X(CATALOG)              \
	X(CATALOG_NAME)

#define VOCAB_M_ENGINE "engine"
#define VOCAB_M_NUM_KV_HEADS "num_kv_heads"
#define VOCAB_M_SEQ_LEN "seq_len"
#define VOCAB_M_PAGE_SIZE "page_size"
#define VOCAB_M_BLOCKS_PER_SM "blocks_per_sm"
#define VOCAB_M_CUDA_GRAPH "cuda_graph"
#define VOCAB_M_NUM_SPLITS_BOUND "num_splits_bound"
#define VOCAB_M_TERMS "terms"

/*
 * The flags of OFREP (ofrep.c), as FIRST(ENUM, key) then REST(ENUM, key)
 * for each further one, so a listing can be joined at compile time. A
 * flag is an answer member under the member's key, except policy_source
 * (the member "source", named for what it is the source of).
 */
#define VOCAB_F_POLICY_SOURCE "policy_source"
#define VOCAB_FLAGS(FIRST, REST)                          \
	FIRST(NUM_SPLITS, VOCAB_M_NUM_SPLITS)             \
	REST(WORKSPACE_SLOTS, VOCAB_M_WORKSPACE_SLOTS)    \
	REST(WORKSPACE_BYTES, VOCAB_M_WORKSPACE_BYTES)    \
	REST(POLICY, VOCAB_M_POLICY)                      \
	REST(POLICY_SOURCE, VOCAB_F_POLICY_SOURCE)

/* JSON's key for member m: `"num_splits":`, and with the comma before it
 * that every member but the first takes. */
#define VOCAB_KEY(m) "\"" VOCAB_M_##m "\":"
#define VOCAB_NEXT_KEY(m) ",\"" VOCAB_M_##m "\":"

#endif /* SPLITKD_VOCAB_H */
