/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Pinning helpers shared by the suites that check revisions (test_revisions,
 * test_state): a catalog file written whole (rename), the current
 * revision, a SIGHUP reload waited for, and the requests a scheduler pins
 * (GET, POST single and batch, OFREP single and bulk) asked with or
 * without revision=R.
 */
#ifndef SPLITKD_PINS_H
#define SPLITKD_PINS_H

#include "harness.h"

/* The embedded catalog as a file body: GET /v1/catalog without its digest. */
static inline cJSON *base_catalog(const struct daemon *dd)
{
	struct reply r = http(dd, "GET", "/v1/catalog", NULL, NULL);
	cJSON *c;

	cr_assert_eq(r.status, 200);
	c = cJSON_Duplicate(r.json, true);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "digest");
	reply_free(&r);
	return c;
}

static inline cJSON *entry(cJSON *c, const char *kind, const char *name)
{
	cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, kind)) {
		if (strcmp(jstr(e, "name"), name) == 0) {
			return e;
		}
	}
	cr_assert_fail("no %s %s", kind, name);
	return NULL;
}

static inline void write_json(const char *path, const cJSON *c)
{
	char *text = cJSON_PrintUnformatted(c);

	replace_file(path, text);
	free(text);
}

static inline void current_of(const struct daemon *dd, char *out, size_t cap)
{
	struct reply r = http(dd, "GET", "/v1/revisions", NULL, NULL);

	cr_assert_eq(r.status, 200, "%s", r.body);
	snprintf(out, cap, "%s", jstr(r.json, "current"));
	reply_free(&r);
}

/* Writes the catalog, sends SIGHUP and waits (5 s at most: a reload takes
 * milliseconds) until the current revision moves; its digest into out. */
static inline void reload_on(const struct daemon *dd, const char *path, const cJSON *c, char *out,
			     size_t cap)
{
	char before[64], now[64];

	current_of(dd, before, sizeof(before));
	write_json(path, c);
	kill(dd->pid, SIGHUP);
	for (int i = 0; i < 500; i++) {
		current_of(dd, now, sizeof(now));
		if (strcmp(now, before) != 0) {
			snprintf(out, cap, "%s", now);
			return;
		}
		sleep_ms(10);
	}
	cr_assert_fail("the reload did not land within 5 s");
}

static inline char *body_on(const struct daemon *dd, const char *method, const char *path,
			    const char *body, long *status)
{
	const char *json[] = {"Content-Type: application/json", NULL};
	struct reply r = http(dd, method, path, body ? json : NULL, body);
	char *out = strdup(r.body);

	*status = r.status;
	reply_free(&r);
	return out;
}

/* The requests a scheduler pins, each a path, a body (or NULL) and, when
 * pinned, where the revision goes ('q' the query string, 'b' the body). */
struct pinnable {
	const char *method, *path, *body;
};

static const struct pinnable pinnables[] = {
	{"GET", "/v1/splits?target=gb10&model=qwen3-8b&max_batch_size=16", NULL},
	{"GET", "/v1/matrix?max_batch_size=16", NULL},
	{"POST", "/v1/splits", "{\"target\":\"gb10\",\"model\":\"qwen3-8b\",\"max_batch_size\":16%s}"},
	{"POST", "/v1/splits",
	 "{\"queries\":[{\"target\":\"gb10\",\"model\":\"qwen3-8b\"},{\"target\":\"b200\","
	 "\"model\":\"llama-3.1-70b\",\"max_batch_size\":8}]%s}"},
	{"POST", "/ofrep/v1/evaluate/flags/num_splits",
	 "{\"context\":{\"target\":\"gb10\",\"model\":\"qwen3-8b\",\"max_batch_size\":16%s}}"},
	{"POST", "/ofrep/v1/evaluate/flags",
	 "{\"context\":{\"target\":\"b200\",\"model\":\"qwen3-8b\",\"max_batch_size\":16%s}}"},
};

#define NUM_PINNABLE (sizeof(pinnables) / sizeof(pinnables[0]))

/* One request of the table, pinned to `rev` or not (NULL). */
static inline char *ask_on(const struct daemon *dd, const struct pinnable *p, const char *rev,
			   long *status)
{
	char path[512], body[1024], extra[128] = "";

	snprintf(path, sizeof(path), "%s", p->path);
	if (rev != NULL && p->body == NULL) {
		snprintf(path, sizeof(path), "%s&revision=%s", p->path, rev);
	} else if (rev != NULL) {
		snprintf(extra, sizeof(extra), ",\"revision\":\"%s\"", rev);
	}
	if (p->body != NULL) {
		snprintf(body, sizeof(body), p->body, extra);
	}
	return body_on(dd, p->method, path, p->body ? body : NULL, status);
}

#endif /* SPLITKD_PINS_H */
