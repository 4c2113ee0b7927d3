/* SPDX-License-Identifier: AGPL-3.0-only */
#include "ofrep.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decide.h"
#include "decimal.h"
#include "engines.h"
#include "jsonin.h"
#include "names.h"
#include "quote.h"
#include "revision.h"
#include "vocab.h"
#include "warning.h"

/* The flags, in the order a bulk answer lists them (vocab.h). */
#define FLAG_ENUM(e, key) FLAG_##e,
enum flag { VOCAB_FLAGS(FLAG_ENUM, FLAG_ENUM) FLAG_COUNT };

#define FLAG_KEY(e, key) [FLAG_##e] = key,
static const char *const flag_keys[FLAG_COUNT] = {VOCAB_FLAGS(FLAG_KEY, FLAG_KEY)};

/* "num_splits, workspace_slots, ...", joined at compile time */
#define FLAG_FIRST(e, key) key
#define FLAG_REST(e, key) ", " key
#define FLAG_LIST VOCAB_FLAGS(FLAG_FIRST, FLAG_REST)

/* What a context carries: the inputs of GET /v1/splits, less explain. */
#define OFREP_FIELDS ((DECIDE_FIELDS & ~QUERY_BIT(QF_EXPLAIN)) | HANDLER_PIN_FIELD)

/* The largest integer a JSON number carries exactly (2^53 - 1): JavaScript
 * and Go's float64 round any larger one without a word. */
#define JSON_SAFE_MAX UINT64_C(9007199254740991)

/* The decision's warnings, then the context's, each with "; " before it. */
#define WARNINGS_MAX                                                   \
	(DECIDE_MAX_WARNINGS * (sizeof(((struct decision *)0)->warnings[0]) + 2) + \
	 QUERY_MAX_NEAR * (sizeof(((struct query_context *)0)->warnings[0]) + 2))

/* One evaluation of a context: the decision, or the problem that stopped
 * it. The decision points into the context (its spellings), so both live
 * here together. */
struct evaluation {
	bool decided;
	struct problem problem; /* when !decided */
	struct query_context context;
	struct decision d; /* when decided */
	/* another engine than the seed (engines.h): its launch, when decided */
	enum engines_id engine;
	struct engine_answer launch;
	char label[SPLITK_LABEL_MAX];
	char warnings[WARNINGS_MAX];
	/* the same without the null workspace_bytes warning, which only the
	 * workspace_bytes flag's metadata carries (it says nothing of the rest) */
	char warnings_other[WARNINGS_MAX];
};

/* One flag's answer from a decision: a value, or the error in its place. */
struct flag_answer {
	const char *error_code; /* NULL: a value */
	char details[320];
	const char *text; /* a string value; NULL: the number */
	uint64_t number;
};

static const char configuration[] =
	"{\"name\":\"splitkd\",\"capabilities\":{\"cacheInvalidation\":{\"polling\":"
	"{\"enabled\":true,\"minPollingIntervalMs\":1000}},"
	"\"flagEvaluation\":{\"supportedTypes\":[\"int\",\"string\"]}}}";

void handler_ofrep_configuration(struct handler_call *c)
{
	/* constant for a build; the router tags it like any GET answer */
	c->body = (struct slice){configuration, sizeof(configuration) - 1};
}

/* ------------------------------------------------------------ answers */

/* What refused a request's inputs, in OFREP's two words for it. */
static const char *error_code_of(const struct problem *p)
{
	if (p->kind == PROBLEM_REVISION_UNAVAILABLE) {
		return "GENERAL"; /* the context is fine: this replica cannot serve it */
	}
	return p->kind == PROBLEM_MALFORMED_JSON ? "PARSE_ERROR" : "INVALID_CONTEXT";
}

/* {"key"?,"errorCode","errorDetails", then the caller's metadata and "}". */
static void failure_begin(struct jsonw *w, const struct slice *key, const char *code,
			  const char *details)
{
	jsonw_object_begin(w);
	if (key != NULL) {
		jsonw_key(w, "key");
		jsonw_strn(w, key->p, key->len);
	}
	jsonw_kv_str(w, "errorCode", code);
	jsonw_kv_str(w, "errorDetails", details);
	jsonw_key(w, "metadata");
	jsonw_object_begin(w);
}

static void failure_end(struct jsonw *w)
{
	jsonw_object_end(w);
	jsonw_object_end(w);
}

/* A failure from a problem: its detail, and in metadata its type, param
 * and suggestion, as GET /v1/splits would answer them. */
static void write_problem_failure(struct jsonw *w, const struct slice *key, const struct problem *p,
				  const struct catalog *cat)
{
	char type[64];

	failure_begin(w, key, error_code_of(p), p->detail);
	jsonw_kv_str(w, "catalog", cat->digest);
	snprintf(type, sizeof(type), "/problems/%s", problem_slug(p->kind));
	jsonw_kv_str(w, "problem", type);
	if (p->param[0] != '\0') {
		jsonw_kv_str(w, "param", p->param);
	}
	if (p->suggestion[0] != '\0') {
		jsonw_kv_str(w, "suggestion", p->suggestion);
	}
	failure_end(w);
}

/* The members of a decided flag's metadata (inside the object). */
static void write_decision_metadata(struct jsonw *w, enum flag f, const struct evaluation *e,
				    const struct catalog *cat)
{
	if (e->engine != ENGINES_SEED) {
		jsonw_kv_str(w, VOCAB_M_ENGINE, engines_info(e->engine)->name);
	} else {
		jsonw_kv_str(w, "source", decide_source(&e->d));
	}
	jsonw_kv_str(w, "catalog", cat->digest);
	jsonw_kv_str(w, VOCAB_M_CATALOG_NAME, cat->name);
	if (e->d.target != NULL) {
		jsonw_kv_str(w, VOCAB_M_TARGET, e->d.target->names.name);
	}
	if (e->d.model != NULL) {
		jsonw_kv_str(w, VOCAB_M_MODEL, e->d.model->names.name);
	}
	jsonw_kv_str(w, VOCAB_M_WARNINGS, f == FLAG_WORKSPACE_BYTES ? e->warnings : e->warnings_other);
}

/* workspace_bytes, exactly, or the error that says why there is no
 * number a JSON reader would take exactly. */
static void bytes_answer(const struct evaluation *e, struct flag_answer *a)
{
	struct splitk_bytes b = e->d.workspace_bytes;
	char digits[DECIMAL_U128_MAX];

	if (!b.known) {
		a->error_code = "INVALID_CONTEXT";
		warning_no_bytes(a->details, sizeof(a->details), e->d.model ? e->d.model->names.name : NULL,
				 e->d.model ? e->d.model->names.name_len : 0);
	} else if (b.hi != 0 || b.lo > JSON_SAFE_MAX) {
		decimal_format_u128(b.hi, b.lo, digits);
		a->error_code = "GENERAL";
		snprintf(a->details, sizeof(a->details),
			 "workspace_bytes is %s, over %llu (2^53 - 1), the largest integer a JSON "
			 "number carries exactly; GET /v1/splits gives it exactly",
			 digits, (unsigned long long)JSON_SAFE_MAX);
	} else {
		a->number = b.lo;
	}
}

/* A flag of another engine's launch: its split count and scratch bytes;
 * the seed's slots and policy are no value of that engine's. */
static void engine_flag(enum flag f, const struct evaluation *e, struct flag_answer *a)
{
	const char *name = engines_info(e->engine)->name;

	if (f == FLAG_NUM_SPLITS) {
		a->number = e->launch.num_splits;
	} else if (f == FLAG_WORKSPACE_BYTES && e->launch.workspace_bytes <= JSON_SAFE_MAX) {
		a->number = e->launch.workspace_bytes;
	} else if (f == FLAG_WORKSPACE_BYTES) {
		a->error_code = "GENERAL";
		snprintf(a->details, sizeof(a->details),
			 "workspace_bytes is %llu, over %llu (2^53 - 1), the largest integer a JSON "
			 "number carries exactly; GET /v1/splits gives it exactly",
			 (unsigned long long)e->launch.workspace_bytes,
			 (unsigned long long)JSON_SAFE_MAX);
	} else {
		a->error_code = "INVALID_CONTEXT";
		snprintf(a->details, sizeof(a->details),
			 "%s is the seed's; engine=%s answers num_splits and workspace_bytes",
			 flag_keys[f], name);
	}
}

static void answer_flag(enum flag f, const struct evaluation *e, struct flag_answer *a)
{
	a->error_code = NULL;
	a->details[0] = '\0';
	a->text = NULL;
	a->number = 0;
	if (e->engine != ENGINES_SEED) {
		engine_flag(f, e, a);
		return;
	}
	switch (f) {
	case FLAG_NUM_SPLITS:
		a->number = e->d.num_splits;
		break;
	case FLAG_WORKSPACE_SLOTS:
		a->number = e->d.workspace_slots;
		break;
	case FLAG_WORKSPACE_BYTES:
		bytes_answer(e, a);
		break;
	case FLAG_POLICY:
		a->text = e->label;
		break;
	case FLAG_POLICY_SOURCE:
		a->text = decide_source(&e->d);
		break;
	case FLAG_COUNT:
		break;
	}
}

/* One flag of an evaluation, as a success or a failure object. Returns
 * whether it is a success. */
static bool write_flag(struct jsonw *w, enum flag f, const struct evaluation *e,
		       const struct catalog *cat)
{
	struct slice key = {flag_keys[f], strlen(flag_keys[f])};
	struct flag_answer a;

	if (!e->decided) {
		write_problem_failure(w, &key, &e->problem, cat);
		return false;
	}
	answer_flag(f, e, &a);
	if (a.error_code != NULL) {
		/* after a decision: the decision's metadata, not a problem's */
		failure_begin(w, &key, a.error_code, a.details);
		write_decision_metadata(w, f, e, cat);
		failure_end(w);
		return false;
	}
	jsonw_object_begin(w);
	jsonw_kv_str(w, "key", key.p);
	jsonw_key(w, "value");
	if (a.text != NULL) {
		jsonw_str(w, a.text);
	} else {
		jsonw_u64(w, a.number);
	}
	jsonw_kv_str(w, "reason", "TARGETING_MATCH");
	jsonw_kv_str(w, "variant", e->label);
	jsonw_key(w, "metadata");
	jsonw_object_begin(w);
	write_decision_metadata(w, f, e, cat);
	jsonw_object_end(w);
	jsonw_object_end(w);
	return true;
}

/* ------------------------------------------------------------ requests */

/* The refusals POST /v1/splits makes too, as problem+json: a body over the
 * limit, a body that is not application/json (an empty body needs no
 * type: it is an empty context). Returns 0, or -1 with the call failed. */
static int check_http(struct handler_call *c, const char *route)
{
	const char *ct = c->req->content_type;

	if (c->req->body_len > c->limits->max_body) {
		problem_set(&c->problem, PROBLEM_PAYLOAD_TOO_LARGE, NULL, NULL,
			    "the body is over %zu bytes", c->limits->max_body);
		return handler_fail(c);
	}
	if (c->req->body_len > 0 && !handler_is_json(ct)) {
		problem_set(&c->problem, PROBLEM_UNSUPPORTED_MEDIA_TYPE, NULL, NULL,
			    "%s takes Content-Type: application/json, not %s", route,
			    ct != NULL ? ct : "no content type");
		return handler_fail(c);
	}
	return 0;
}

/* The context of {"context": {...}}; *context NULL for an empty body or
 * none given. Members other than context are ignored (a later protocol
 * may add some). Returns 0, or -1 with the problem that fails the whole
 * request: the body is not strict JSON, not an object, or its context is
 * repeated or not an object. */
static int read_body(const struct handler_call *c, struct jsonin_arena *arena,
		     const cJSON **context, struct problem *p)
{
	char why[160];
	const cJSON *root, *m;
	int seen = 0;

	*context = NULL;
	if (c->req->body_len == 0) {
		return 0;
	}
	root = jsonin_parse_in(arena, c->req->body, c->req->body_len, why, sizeof(why));
	if (root == NULL) {
		return problem_set(p, PROBLEM_MALFORMED_JSON, NULL, NULL, "%s", why);
	}
	if (!cJSON_IsObject(root)) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, NULL, NULL,
				   "the body must be a JSON object {\"context\": {...}}, not %s",
				   jsonin_type_name(root));
	}
	cJSON_ArrayForEach(m, root) {
		if (strcmp(m->string, "context") == 0 && seen++ == 0) {
			*context = m;
		}
	}
	if (seen > 1) {
		return problem_set(p, PROBLEM_REPEATED_PARAMETER, "context", NULL,
				   "context is given more than once");
	}
	if (*context != NULL && !cJSON_IsNull(*context) && !cJSON_IsObject(*context)) {
		return problem_set(p, PROBLEM_INVALID_PARAMETER, "context", NULL,
				   "context must be a JSON object, not %s", jsonin_type_name(*context));
	}
	return 0;
}

/* Appends "; " (unless first) and s to out[0..*n), within cap. */
static void append_warning(char *out, size_t cap, size_t *n, const char *s)
{
	int wrote = snprintf(out + *n, cap - *n, "%s%s", *n > 0 ? "; " : "", s);

	if (wrote > 0) {
		*n += (size_t)wrote < cap - *n ? (size_t)wrote : cap - *n - 1;
	}
}

/* The engine a context names, and its launch for the decided shape.
 * Returns 0, or -1 with the problem (an unknown engine, a missing input,
 * a shape it refuses). */
static int evaluate_engine(const struct handler_call *c, struct evaluation *e)
{
	struct engine_shape s;
	uint32_t by_seq[ENGINE_MAX_SEQS];
	int rc = engines_decide(c->ctx, &e->context.q, &e->d, false, &e->engine, &s, &e->launch, by_seq,
				&e->problem);

	return rc > 0 ? 0 : rc;
}

/* The context into a query, and the decision: the same decide_run as
 * GET /v1/splits. A decision is counted once, whatever is answered. */
static void evaluate(struct handler_call *c, const cJSON *context, struct evaluation *e)
{
	size_t n = 0, n_other = 0;

	/* a pinned revision answers from its catalog, metadata included */
	e->engine = ENGINES_SEED;
	e->decided = query_from_context(context, OFREP_FIELDS, &e->context, &e->problem) == 0 &&
		     revision_choose(c, e->context.q.catalog, e->context.q.revision, &e->problem) == 0 &&
		     decide_run(c->ctx->catalog, &e->context.q, &e->d, &e->problem) == 0 &&
		     (e->context.q.engine.p == NULL || evaluate_engine(c, e) == 0);
	if (!e->decided) {
		return;
	}
	if (e->engine != ENGINES_SEED) {
		/* the variant is the engine that answered */
		snprintf(e->label, sizeof(e->label), "%s", engines_info(e->engine)->name);
	} else {
		handler_count_decision(c, &e->d, c->ctx->catalog);
		splitk_label(e->d.res.resolved.policy, e->label);
	}
	e->warnings[0] = '\0';
	e->warnings_other[0] = '\0';
	/* the seed's warnings speak of its workspace: not another engine's */
	for (size_t i = 0; e->engine == ENGINES_SEED && i < e->d.num_warnings; i++) {
		append_warning(e->warnings, sizeof(e->warnings), &n, e->d.warnings[i]);
		/* decide_run writes the no-head_dim warning last of its own */
		if (!(e->d.head_dim == 0 && i + 1 == e->d.num_warnings &&
		      strncmp(e->d.warnings[i], "workspace_bytes is null", 23) == 0)) {
			append_warning(e->warnings_other, sizeof(e->warnings_other), &n_other,
				       e->d.warnings[i]);
		}
	}
	for (size_t i = 0; i < e->context.num_warnings; i++) {
		append_warning(e->warnings, sizeof(e->warnings), &n, e->context.warnings[i]);
		append_warning(e->warnings_other, sizeof(e->warnings_other), &n_other,
			       e->context.warnings[i]);
	}
}

/* The flag a key names, exactly (keys are case-sensitive), or -1 with a
 * 404 FLAG_NOT_FOUND written, with a did-you-mean for a near miss. */
static int find_flag(struct handler_call *c)
{
	struct names_near nearest;
	const char *near;
	char quoted[QUOTE_MAX], details[320];

	for (int f = 0; f < FLAG_COUNT; f++) {
		if (strlen(flag_keys[f]) == c->name.len &&
		    memcmp(flag_keys[f], c->name.p, c->name.len) == 0) {
			return f;
		}
	}
	names_near_init(&nearest, c->name.p, c->name.len, NAMES_FOLDED);
	for (int f = 0; f < FLAG_COUNT; f++) {
		names_near_offer(&nearest, flag_keys[f]);
	}
	near = nearest.best;
	quote_excerpt(c->name.p, c->name.len, quoted, sizeof(quoted));
	snprintf(details, sizeof(details), "no flag named \"%s\"%s%s%s (flags: " FLAG_LIST ")",
		 quoted, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
	c->status = 404;
	failure_begin(&c->w, &c->name, "FLAG_NOT_FOUND", details);
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	if (near != NULL) {
		jsonw_kv_str(&c->w, "suggestion", near);
	}
	failure_end(&c->w);
	return -1;
}

void handler_ofrep_evaluate_flag(struct handler_call *c)
{
	struct jsonin_arena arena = {0};
	struct evaluation e;
	const cJSON *context;
	int f = find_flag(c); /* before the body: an unknown flag is 404 whatever it holds */

	if (f < 0 || check_http(c, "POST /ofrep/v1/evaluate/flags/{key}") != 0) {
		return;
	}
	if (read_body(c, &arena, &context, &e.problem) != 0) {
		c->status = 400;
		write_problem_failure(&c->w, &c->name, &e.problem, c->ctx->catalog);
	} else {
		evaluate(c, context, &e);
		c->status = write_flag(&c->w, (enum flag)f, &e, c->ctx->catalog) ? 200 : 400;
	}
	jsonin_arena_cleanup(&arena);
}

/* No origin: a provider resolves the path against its own base URL, so a
 * proxy in front keeps working. 120 s is the ADR's default inactivity. */
#define OFREP_EVENT_STREAMS_HEAD "[{\"type\":\"sse\",\"endpoint\":{\"requestUri\":\"/v1/events"
#define OFREP_EVENT_STREAMS_TAIL "\"},\"inactivityDelaySec\":120}]"
#define OFREP_EVENT_STREAMS OFREP_EVENT_STREAMS_HEAD OFREP_EVENT_STREAMS_TAIL

void handler_ofrep_evaluate_flags(struct handler_call *c)
{
	struct jsonin_arena arena = {0};
	struct evaluation e;
	const cJSON *context;

	if (check_http(c, "POST /ofrep/v1/evaluate/flags") != 0) {
		return;
	}
	if (read_body(c, &arena, &context, &e.problem) != 0) {
		/* the body cannot be read: the one bulk 400, without a key */
		c->status = 400;
		write_problem_failure(&c->w, NULL, &e.problem, c->ctx->catalog);
		jsonin_arena_cleanup(&arena);
		return;
	}
	/* one decision for every flag; an input it refuses fails each flag
	 * inside a 200 (docs/ofrep-design.md, section 6) */
	evaluate(c, context, &e);
	jsonw_object_begin(&c->w);
	jsonw_key(&c->w, "flags");
	jsonw_array_begin(&c->w);
	for (int f = 0; f < FLAG_COUNT; f++) {
		write_flag(&c->w, (enum flag)f, &e, c->ctx->catalog);
	}
	jsonw_array_end(&c->w);
	jsonw_key(&c->w, "metadata");
	jsonw_object_begin(&c->w);
	jsonw_kv_str(&c->w, "catalog", c->ctx->catalog->digest);
	jsonw_kv_str(&c->w, VOCAB_M_CATALOG_NAME, c->ctx->catalog->name);
	jsonw_object_end(&c->w);
	/* ADR-0008: the change stream, which sends refetchEvaluation (events.h);
	 * a context that names its catalog follows that catalog's stream */
	jsonw_key(&c->w, "eventStreams");
	if (e.decided && e.context.q.catalog.p != NULL) {
		/* that catalog's own stream (events.c); a catalog's name
		 * needs no escaping (catalog_name_ok) */
		char streams[sizeof(OFREP_EVENT_STREAMS) + 16 + CATALOG_NAME_MAX];
		int n = snprintf(streams, sizeof(streams), "%s?catalog=%s%s", OFREP_EVENT_STREAMS_HEAD,
				 c->ctx->catalog->name, OFREP_EVENT_STREAMS_TAIL);

		jsonw_raw(&c->w, streams, (size_t)n);
	} else {
		jsonw_raw(&c->w, OFREP_EVENT_STREAMS, sizeof(OFREP_EVENT_STREAMS) - 1);
	}
	jsonw_object_end(&c->w);
	jsonin_arena_cleanup(&arena);
}
