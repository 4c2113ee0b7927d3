/* SPDX-License-Identifier: AGPL-3.0-only */
/* events: the text of each Server-Sent Event, the id it reads back, and
 * the route, through the api without a socket. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "catalog.h"
#include "events.h"

static const struct events_revision r1 = {1, "fnv1a64:0000000000000001", 1700000000};
static const struct events_revision r2 = {2, "fnv1a64:0000000000000002", 1700000100};

/* A catalog of one target ("t", 132 SMs, `policy`) and `models` models
 * m0.. of 24 q heads (plus "only-a" or "only-b" when `extra` says). */
static struct catalog *make(const char *policy, int models, const char *extra)
{
	char json[8192], err[256];
	size_t n = (size_t)snprintf(json, sizeof(json),
				    "{\"targets\":[{\"name\":\"t\",\"sm_count\":132,"
				    "\"attn_decode_splitk\":\"%s\"}],\"models\":[",
				    policy);
	struct catalog *c;

	for (int i = 0; i < models; i++) {
		n += (size_t)snprintf(json + n, sizeof(json) - n,
				      "%s{\"name\":\"m%d\",\"num_q_heads\":24,\"num_kv_heads\":8,"
				      "\"head_dim\":128}",
				      i ? "," : "", i);
	}
	if (extra != NULL) {
		n += (size_t)snprintf(json + n, sizeof(json) - n,
				      ",{\"name\":\"%s\",\"num_q_heads\":32}", extra);
	}
	n += (size_t)snprintf(json + n, sizeof(json) - n, "]}");
	cr_assert_lt(n, sizeof(json));
	c = catalog_load(json, n, err, sizeof(err));
	cr_assert_not_null(c, "%s", err);
	return c;
}

/* The JSON of the data line after `field` ("event: catalog\n"). */
static cJSON *data_after(const char *text, const char *field)
{
	const char *at = strstr(text, field);
	const char *data = at ? strstr(at, "data: ") : NULL;
	const char *end = data ? strchr(data, '\n') : NULL;

	cr_assert(end != NULL, "no %s with a data line in %s", field, text);
	return cJSON_ParseWithLength(data + 6, (size_t)(end - data - 6));
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "%s", k);
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsString(v), "%s", k);
	return v->valuestring;
}

Test(events, a_change_is_the_ofrep_message_then_the_catalog_event_with_its_id)
{
	char out[EVENTS_TEXT_MAX];
	struct catalog *a = make("auto", 1, "only-a"), *b = make("legacy", 1, "only-b");
	cJSON *ofrep, *cat, *cells, *cell;
	size_t n;
	const char *id, *ev;

	memset(out, 'x', sizeof(out)); /* the NUL must be the writer's */
	n = events_change(out, sizeof(out), "abcd0123", &r2, &r1, a, b);

	cr_assert_gt(n, 0);
	cr_assert_eq(strlen(out), n);
	/* every event ends with a blank line, and only there */
	cr_assert_str_eq(out + n - 2, "\n\n");
	ofrep = cJSON_ParseWithLength(out + 6, (size_t)(strchr(out, '\n') - out - 6));
	cr_assert(strncmp(out, "data: ", 6) == 0, "%s", out);
	cr_assert_str_eq(str(ofrep, "type"), "refetchEvaluation");
	cr_assert_str_eq(str(ofrep, "etag"), r2.revision);
	cr_assert_eq(num(ofrep, "lastModified"), 1700000100);
	id = strstr(out, "id: ");
	ev = strstr(out, "event: catalog\n");
	cr_assert(id != NULL && ev != NULL && id < ev && id > strstr(out, "\n\n"), "%s", out);
	cr_assert(strncmp(id, "id: 2@abcd0123\n", 15) == 0, "%s", id);
	cat = data_after(out, "event: catalog\n");
	/* one vocabulary: a revision is a digest; seq numbers the ids */
	cr_assert_eq(num(cat, "seq"), 2);
	cr_assert_str_eq(str(cat, "revision"), r2.revision);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(cat, "digest"));
	cr_assert_eq(num(cat, "loaded_at"), 1700000100);
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(cat, "previous"), "seq"), 1);
	cr_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(cat, "previous"), "revision"),
			 r1.revision);
	cr_assert_eq(num(cJSON_GetObjectItemCaseSensitive(cat, "inputs"), "max_batch_size"), 1);
	/* t x m0 flips auto -> legacy; only-a is gone, only-b is new */
	cells = cJSON_GetObjectItemCaseSensitive(cat, "cells");
	cr_assert_eq(cJSON_GetArraySize(cells), 3, "%s", out);
	cr_assert_eq(num(cat, "changed"), 3);
	cr_assert_eq(num(cat, "unchanged"), 0);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cat, "truncated")));
	cell = cJSON_GetArrayItem(cells, 0);
	cr_assert_str_eq(str(cell, "model"), "m0");
	cr_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(cell, "from"), "policy"), "auto");
	cr_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(cell, "to"), "policy"), "legacy");
	for (int i = 1; i < 3; i++) {
		const char *m = str(cJSON_GetArrayItem(cells, i), "model");
		bool gone = strcmp(m, "only-a") == 0;

		cr_assert(gone || strcmp(m, "only-b") == 0, "%s", m);
		cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cells, i),
									 gone ? "to" : "from")));
	}
	cJSON_Delete(ofrep);
	cJSON_Delete(cat);
	catalog_free(a);
	catalog_free(b);
}

Test(events, the_cells_are_capped_and_say_so)
{
	char out[EVENTS_TEXT_MAX];
	struct catalog *a = make("auto", 20, NULL), *b = make("legacy", 20, NULL),
		       *c = make("legacy", 20, "only-c");
	cJSON *cat;

	cr_assert_gt(events_change(out, sizeof(out), "b00t", &r2, &r1, a, b), 0);
	cat = data_after(out, "event: catalog\n");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cat, "cells")),
		     EVENTS_CELLS_MAX);
	cr_assert_eq(num(cat, "changed"), 20);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cat, "truncated")));
	cJSON_Delete(cat);
	/* a buffer with no room for the cells: none listed, still counted */
	cr_assert_gt(events_change(out, 700, "b00t", &r2, &r1, a, b), 0);
	cat = data_after(out, "event: catalog\n");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cat, "cells")), 0);
	cr_assert_eq(num(cat, "changed"), 20);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cat, "truncated")));
	cJSON_Delete(cat);
	/* a model added and nothing else: one cell, the rest unchanged */
	cr_assert_gt(events_change(out, sizeof(out), "b00t", &r2, &r1, b, c), 0);
	cat = data_after(out, "event: catalog\n");
	cr_assert_eq(num(cat, "changed"), 1);
	cr_assert_eq(num(cat, "unchanged"), 20);
	cr_assert_str_eq(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cat, "cells"), 0),
			     "model"),
			 "only-c");
	cJSON_Delete(cat);
	catalog_free(a);
	catalog_free(b);
	catalog_free(c);
}

Test(events, hello_reset_preamble_and_heartbeat)
{
	char out[EVENTS_TEXT_MAX];
	cJSON *j;

	cr_assert_gt(events_preamble(out, sizeof(out)), 0);
	cr_assert_str_eq(out, "retry: 1000\n\n");
	cr_assert_gt(events_heartbeat(out, sizeof(out)), 0);
	cr_assert_eq(out[0], ':', "a heartbeat is a comment: no event fires");
	cr_assert_gt(events_hello(out, sizeof(out), "b00t", &r1), 0);
	cr_assert(strncmp(out, "id: 1@b00t\nevent: hello\n", 24) == 0, "%s", out);
	j = data_after(out, "event: hello\n");
	cr_assert_eq(num(j, "seq"), 1);
	cr_assert_str_eq(str(j, "revision"), r1.revision);
	cJSON_Delete(j);
	/* what the client sent is shown escaped, and cut at 64 bytes */
	cr_assert_gt(events_reset(out, sizeof(out), "b00t", &r2,
				  "\"quoted\"\n\x01 and then a long tail that goes on past sixty-four bytes"),
		     0);
	j = data_after(out, "event: reset\n");
	cr_assert_not_null(j, "the reset's data is not JSON: %s", out);
	cr_assert_eq(strlen(str(j, "last_event_id")), 64);
	cr_assert(strncmp(str(j, "last_event_id"), "\"quoted\"\n\x01", 10) == 0);
	cr_assert_eq(num(j, "seq"), 2);
	cr_assert_str_eq(str(j, "revision"), r2.revision);
	cJSON_Delete(j);
	cr_assert(strstr(out, "refetchEvaluation") < strstr(out, "event: reset"));
}

Test(events, a_buffer_too_small_is_no_event_at_all)
{
	char out[EVENTS_TEXT_MAX];
	struct catalog *a = make("auto", 1, NULL), *b = make("legacy", 1, NULL);

	for (size_t cap = 0; cap < 40; cap++) {
		cr_assert_eq(events_change(out, cap, "b00t", &r2, &r1, a, b), 0, "cap %zu", cap);
		cr_assert_eq(events_hello(out, cap, "b00t", &r1), 0, "cap %zu", cap);
	}
	cr_assert_eq(events_change(out, 150, "b00t", &r2, &r1, a, b), 0, "half an event");
	catalog_free(a);
	catalog_free(b);
}

Test(events, ids_read_back_only_when_they_are_this_boots)
{
	static const struct {
		const char *id;
		int rc;
		uint64_t revision;
	} cases[] = {
		{"1@b00t", 0, 1},
		{"18446744073709551615@b00t", -1, 0}, /* 20 digits: past what splitkd writes */
		{"1234567890123456789@b00t", 0, 1234567890123456789ull},
		{"7@b00u", -1, 0},
		{"7@b00t ", -1, 0},
		{"7@", -1, 0},
		{"7", -1, 0},
		{"@b00t", -1, 0},
		{"0@b00t", -1, 0},
		{"07@b00t", -1, 0},
		{"+7@b00t", -1, 0},
		{"", -1, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t rev = 0;

		cr_assert_eq(events_parse_id(cases[i].id, "b00t", &rev), cases[i].rc, "%s", cases[i].id);
		if (cases[i].rc == 0) {
			cr_assert_eq(rev, cases[i].revision, "%s", cases[i].id);
		}
	}
	cr_assert_eq(events_parse_id(NULL, "b00t", &(uint64_t){0}), -1);
}

Test(events, the_route_says_stream_and_carries_no_etag)
{
	struct api_context ctx = {0};
	struct api_request req = {.method = "GET", .uri = "/v1/events", .uri_len = 10, .body = ""};
	struct api_response resp;

	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 200);
	cr_assert(resp.stream);
	cr_assert_str_eq(resp.content_type, "text/event-stream; charset=utf-8");
	cr_assert_str_eq(resp.etag, "");
	cr_assert_eq(resp.body_len, 0);
	api_response_cleanup(&resp);
	req.if_none_match = "*"; /* a stream is never "not modified" */
	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 200);
	api_response_cleanup(&resp);
	req.method = "POST";
	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 405);
	cr_assert(!resp.stream);
	api_response_cleanup(&resp);
}
