/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * vocab — the one place a query parameter, an answer member or an OFREP
 * flag is named (an engine port's input, in policy/engine_inputs.h, whose
 * rows VOCAB_PARAMS takes). Everything else reads these tables:
 *  - query.h builds enum query_field and struct query from VOCAB_PARAMS,
 *    and query.c its table of names, kinds, bounds and offsets (GET
 *    parameters, POST bodies, OpenFeature contexts);
 *  - decide.h's DECIDE_FIELDS is the rows whose scope is DECIDE or
 *    ENGINE, and batchfast.c's inputs are the same rows (the batch's fast
 *    reader); decide.c's unread bits are the ENGINE rows;
 *  - engines.c maps a query to struct engine_shape, asks for a missing
 *    input and writes an engine's answer (VOCAB_ENGINE_MEMBERS) from
 *    the engine rows, and GET /v1/engines lists them (`inputs`, `reads`);
 *  - fields.h builds enum fields_member from VOCAB_MEMBERS, fields.c its
 *    names (fields=), and every writer of an answer member (fragment.c,
 *    explain.c, diff.c, ...) spells its key with VOCAB_M_<MEMBER>;
 *  - ofrep.c's flag keys and their listing come from VOCAB_FLAGS;
 *  - tests/unit/test_vocab.c holds api/openapi.json to these tables (every
 *    decision input is a parameter of GET /v1/splits and a property of the
 *    POST body, every member a property of Decision, every engine member
 *    one of EngineDecision, every engine input an EngineInput).
 * A new input or member is a row here (an engine's input, a row of
 * policy/engine_inputs.h and the port that reads it) and nothing else
 * that names it (docs/DEVELOPING.md, "A new input"; scripts/check-input-recipe.sh
 * checks that recipe on a scratch copy).
 * Only macros: no code, no data.
 */
#ifndef SPLITKD_VOCAB_H
#define SPLITKD_VOCAB_H

#include <stdint.h>

#include "engine_inputs.h"

/*
 * Every query parameter, as X(ENUM, name, kind, scope, bounds), in the
 * order of enum query_field (QF_<ENUM>). The name is the parameter's and
 * its struct query member's.
 *  - kind: NAME (a catalog or revision name), SPELLING (a policy spelling,
 *    or text taken as given), U32 (a decimal within the bounds), BOOL,
 *    LIST (bounded unsigned integers: comma-separated decimals in a query
 *    string, a JSON array of integers in a body or a context; at most the
 *    bounds' length of them).
 *  - scope: DECIDE, an input of the seed's decision (GET and POST
 *    /v1/splits, each query of a batch, an OFREP context); ENGINE, taken
 *    where a decision's inputs are and read by the other engines only
 *    (engines.h: the seed accepts it and never reads it); OTHER, a
 *    parameter of some other route.
 *  - bounds: (min, max, default, length), as policy/engine_inputs.h's:
 *    a U32's or a LIST element's range, the value an absent one reads as
 *    where the table says it (0: none, or the code that reads it decides,
 *    as max_rows is max_batch_size), a LIST's most elements. VOCAB_COUNT
 *    is any count from 1; VOCAB_NONE a kind that has no bounds.
 *
 * The engines' inputs are not written here: they are the rows of
 * policy/engine_inputs.h taken from the query (its MODEL and QUERY rows),
 * which the pure core's struct engine_shape is made of, put at the end
 * with the ENGINE scope (VOCAB_ENGINE_ROW). A new input a port reads is a
 * row there; a new input of the seed's decision or of a route, a row here
 * before `engine`.
 *
 * The order is the enum's, which a "did you mean" walks (a tie goes to
 * the earlier), and the batch's fast reader tries the DECIDE rows in it,
 * so the inputs a scheduler sends most come first (a batch of target,
 * model and max_batch_size queries: 43 instructions a decision less than
 * in the struct's old order).
 */
#define VOCAB_COUNT (1, UINT32_MAX, 0, 0)
#define VOCAB_NONE (0, 0, 0, 0)
#define VOCAB_PARAMS(X)                                                               \
	X(TARGET, target, NAME, DECIDE, VOCAB_NONE)                                   \
	X(MODEL, model, NAME, DECIDE, VOCAB_NONE)                                     \
	X(MAX_BATCH_SIZE, max_batch_size, U32, DECIDE, (1, UINT32_MAX, 1, 0))          \
	X(NUM_SEQS, num_seqs, U32, DECIDE, (1, UINT32_MAX, 1, 0))                      \
	X(MAX_ROWS, max_rows, U32, DECIDE, VOCAB_COUNT)                               \
	X(HEAD_DIM, head_dim, U32, DECIDE, VOCAB_COUNT)                               \
	X(OVERRIDE, override, SPELLING, DECIDE, VOCAB_NONE)                           \
	X(SM_COUNT, sm_count, U32, DECIDE, VOCAB_COUNT)                               \
	X(DECLARED, declared, SPELLING, DECIDE, VOCAB_NONE)                           \
	X(NUM_Q_HEADS, num_q_heads, U32, DECIDE, VOCAB_COUNT)                         \
	X(EXPLAIN, explain, BOOL, DECIDE, VOCAB_NONE)                                 \
	/* GET /v1/policy */                                                          \
	X(SPELLING, spelling, SPELLING, OTHER, VOCAB_NONE)                            \
	/* catalog revisions (revision.c) */                                          \
	X(REVISION, revision, NAME, OTHER, VOCAB_NONE)                                \
	X(FROM, from, NAME, OTHER, VOCAB_NONE)                                        \
	X(TO, to, NAME, OTHER, VOCAB_NONE)                                            \
	/* POST /ofrep/v1/evaluate/flags after an SSE refetch (ADR-0008); \
	 * accepted, not needed */                                                    \
	X(FLAG_CONFIG_ETAG, flagConfigEtag, SPELLING, OTHER, VOCAB_NONE)              \
	X(FLAG_CONFIG_LAST_MODIFIED, flagConfigLastModified, SPELLING, OTHER, VOCAB_NONE) \
	/* the answer members asked for (fields.h) */                                 \
	X(FIELDS, fields, NAME, OTHER, VOCAB_NONE)                                    \
	/* a named catalog (revision.c) */                                            \
	X(CATALOG, catalog, NAME, OTHER, VOCAB_NONE)                                  \
	/* GET /v1/history's page (handler_history) */                                \
	X(LIMIT, limit, U32, OTHER, VOCAB_COUNT)                                      \
	X(BEFORE, before, U32, OTHER, VOCAB_COUNT)                                    \
	/* a mixed batch, one length a sequence (decide.h): every engine's */         \
	X(SEQ_LENS, seq_lens, LIST, DECIDE, (1, ENGINE_MAX_SEQ_LEN, 0, ENGINE_MAX_SEQS)) \
	/* the other engines (engines.h): which, and the inputs they read */          \
	X(ENGINE, engine, NAME, ENGINE, VOCAB_NONE)                                   \
	/* the engine's worst case over every batch of the serve (engines.h) */       \
	X(RESERVE, reserve, BOOL, ENGINE, VOCAB_NONE)                                 \
	ENGINE_INPUTS(VOCAB_ENGINE_ROW, X)

/* A row of policy/engine_inputs.h as a row of VOCAB_PARAMS: the inputs a
 * query gives (MODEL, QUERY), not those the decision resolves (DECISION:
 * their rows are above) or a route hands a port (ARG). */
#define VOCAB_ENGINE_ROW(X, e, name, kind, from, bounds, zero, about) \
	VOCAB_ENGINE_ROW_##from(X, e, name, VOCAB_KIND_##kind, bounds)
/* An engine row's kind as the query's: a CHOICE is given by its word, a
 * NAME, which api/engines.c maps to the word's index. */
#define VOCAB_KIND_U32 U32
#define VOCAB_KIND_BOOL BOOL
#define VOCAB_KIND_CHOICE NAME
#define VOCAB_ENGINE_ROW_MODEL(X, e, name, kind, bounds) X(e, name, kind, ENGINE, bounds)
#define VOCAB_ENGINE_ROW_QUERY(X, e, name, kind, bounds) X(e, name, kind, ENGINE, bounds)
#define VOCAB_ENGINE_ROW_OPTION(X, e, name, kind, bounds) X(e, name, kind, ENGINE, bounds)
#define VOCAB_ENGINE_ROW_DECISION(X, e, name, kind, bounds)
#define VOCAB_ENGINE_ROW_ARG(X, e, name, kind, bounds)

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
	X(NUM_SPLITS_BY_SEQ) \
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
 * seed), in the order it writes them, as X(ENUM) with its key
 * VOCAB_M_<ENUM>, and INPUT(ENUM, name, kind, bounds) for each engine-only
 * input the query gives (policy/engine_inputs.h's QUERY rows), keyed by
 * its name: engines.c's writer is this table expanded, and test_vocab
 * holds the EngineDecision schema to it.
 */
#define VOCAB_ENGINE_MEMBERS(X, INPUT)                   \
	X(ENGINE)                                        \
	X(TARGET)                                        \
	X(SM_COUNT)                                      \
	X(MODEL)                                         \
	X(NUM_Q_HEADS)                                   \
	X(NUM_KV_HEADS)                                  \
	X(HEAD_DIM)                                      \
	X(NUM_SEQS)                                      \
	ENGINE_INPUTS(VOCAB_ENGINE_MEMBER_ROW, INPUT)    \
	X(NUM_SPLITS)                                    \
	X(NUM_SPLITS_BY_SEQ)                             \
	X(NUM_SPLITS_BOUND)                              \
	X(WORKSPACE_BYTES)                               \
	X(TERMS)                                         \
	X(WARNINGS)                                      \
	X(CATALOG)                                       \
	X(CATALOG_NAME)
#define VOCAB_ENGINE_MEMBER_ROW(INPUT, e, name, kind, from, bounds, zero, about) \
	VOCAB_ENGINE_MEMBER_ROW_##from(INPUT, e, name, kind, bounds)
#define VOCAB_ENGINE_MEMBER_ROW_QUERY(INPUT, e, name, kind, bounds) INPUT(e, name, kind, bounds)
#define VOCAB_ENGINE_MEMBER_ROW_OPTION(INPUT, e, name, kind, bounds) \
	INPUT##_OPTION(e, name, kind, bounds)
#define VOCAB_ENGINE_MEMBER_ROW_MODEL(INPUT, e, name, kind, bounds)
#define VOCAB_ENGINE_MEMBER_ROW_DECISION(INPUT, e, name, kind, bounds)
#define VOCAB_ENGINE_MEMBER_ROW_ARG(INPUT, e, name, kind, bounds)

#define VOCAB_M_ENGINE "engine"
#define VOCAB_M_NUM_KV_HEADS "num_kv_heads"
#define VOCAB_M_NUM_SPLITS_BOUND "num_splits_bound"
#define VOCAB_M_COMPUTE_CAPABILITY "compute_capability"
#define VOCAB_M_MAX_MODEL_LEN "max_model_len"
#define VOCAB_M_RESERVE "reserve"
#define VOCAB_M_SEQ_LENS "seq_lens"
#define VOCAB_M_NUM_SPLITS_BY_SEQ "num_splits_by_seq"
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
