/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The framing rules without a socket or libmicrohttpd: the tally against
 * the bytes a request really has, the RFC 9112 checks as a table, the
 * Content-Length reader, and the memory-fit arithmetic over a sweep.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "framing.h"

struct field {
	const char *key, *value;
};

/* Tallies a request as the engine would hand it over. */
static struct framing tally(const char *method, const char *uri, const struct field *fields,
			    size_t n)
{
	struct framing f;

	framing_init(&f, method, strlen(uri));
	for (size_t i = 0; i < n; i++) {
		framing_note(&f, fields[i].key, fields[i].value);
	}
	return f;
}

/* The tally is the wire length of the request line and header lines. */
Test(framing, bytes_are_the_wire_length)
{
	const struct field fields[] = {{"Host", "a"}, {"Accept", "*/*"}, {"X-Long", "0123456789"}};
	char wire[256];
	int n = snprintf(wire, sizeof(wire), "POST /v1/splits?x=1 HTTP/1.1\r\n");
	struct framing f;

	for (size_t i = 0; i < 3; i++) {
		n += snprintf(wire + n, sizeof(wire) - (size_t)n, "%s: %s\r\n", fields[i].key,
			      fields[i].value);
	}
	f = tally("POST", "/v1/splits?x=1", fields, 3);
	cr_assert_eq(f.bytes, (size_t)n);
}

Test(framing, first_value_kept_and_repeats_counted)
{
	const struct field fields[] = {
		{"content-type", "application/json"}, {"Content-Type", "text/plain"},
		{"Accept", "a"}, {"ACCEPT", "b"}, {"If-None-Match", "\"1\""}, {"If-None-Match", "\"2\""},
		{"Content-Length", "5"}, {"Content-Length", "6"}, {"Host", "h"}, {"host", "h"},
	};
	struct framing f = tally("GET", "/", fields, sizeof(fields) / sizeof(fields[0]));

	cr_assert_str_eq(f.content_type, "application/json");
	cr_assert_str_eq(f.accept, "a");
	cr_assert_str_eq(f.if_none_match, "\"1\"");
	cr_assert_str_eq(f.length, "5");
	cr_assert_eq(f.lengths, 2);
	cr_assert_eq(f.hosts, 2);
}

Test(framing, cookies_count_a_record_each)
{
	const struct field one[] = {{"Cookie", "a=1"}};
	const struct field three[] = {{"Cookie", "a=1; b=2; c=3"}};
	struct framing f1 = tally("GET", "/", one, 1), f3 = tally("GET", "/", three, 1);

	/* the header's own record, then one per cookie */
	cr_assert_eq(f3.fields - f1.fields, 2);
	cr_assert_eq(f3.bytes - f1.bytes, strlen("a=1; b=2; c=3") - strlen("a=1") +
						  strlen("a=1; b=2; c=3") - strlen("a=1"));
}

struct check_case {
	struct field fields[3];
	size_t n;
	bool http_1_1;
	enum problem_kind want;
};

Test(framing, rfc9112_checks)
{
	const struct check_case cases[] = {
		{{{"Host", "a"}}, 1, true, PROBLEM_NONE},
		{{{"Accept", "a"}}, 1, true, PROBLEM_BAD_REQUEST},  /* no Host in 1.1 */
		{{{"Accept", "a"}}, 1, false, PROBLEM_NONE},        /* 1.0 needs none */
		{{{"Host", "a"}, {"Host", "b"}}, 2, false, PROBLEM_BAD_REQUEST},
		{{{"Host", "a"}, {"Content-Length", "1"}, {"Content-Length", "1"}}, 3, true,
		 PROBLEM_BAD_REQUEST},
		{{{"Host", "a"}, {"Content-Length", "1"}, {"Transfer-Encoding", "chunked"}}, 3, true,
		 PROBLEM_BAD_REQUEST},
		{{{"Host", "a"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}, 3,
		 true, PROBLEM_BAD_REQUEST},
		{{{"Host", "a"}, {"Transfer-Encoding", "CHUNKED"}}, 2, true, PROBLEM_NONE},
		{{{"Host", "a"}, {"Transfer-Encoding", "gzip"}}, 2, true, PROBLEM_NOT_IMPLEMENTED},
		{{{"Host", "a"}, {"Expect", "100-Continue"}}, 2, true, PROBLEM_NONE},
		{{{"Host", "a"}, {"Expect", "201-created"}}, 2, true, PROBLEM_EXPECTATION_FAILED},
		{{{"Host", "a"}, {"Expect", "100-continue"}, {"Expect", "100-continue"}}, 3, true,
		 PROBLEM_EXPECTATION_FAILED},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct framing f = tally("GET", "/", cases[i].fields, cases[i].n);
		const char *detail = "unset";
		enum problem_kind got = framing_check(&f, cases[i].http_1_1, &detail);

		cr_assert_eq(got, cases[i].want, "case %zu: kind %d, want %d", i, got, cases[i].want);
		cr_assert_eq(detail == NULL, got == PROBLEM_NONE, "case %zu: detail iff a fault", i);
	}
}

Test(framing, content_length_reader)
{
	const struct {
		const char *value;
		int rc;
		uint64_t n;
	} cases[] = {
		{"0", 0, 0},
		{"1048576", 0, 1048576},
		{"007", 0, 7},
		{"18446744073709551615", 0, UINT64_MAX},
		{"18446744073709551616", -1, 0},
		{"99999999999999999999", -1, 0},
		{"", -1, 0},
		{"-1", -1, 0},
		{"+1", -1, 0},
		{" 1", -1, 0},
		{"1 ", -1, 0},
		{"1,1", -1, 0},
		{"0x10", -1, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t n = 12345;
		int rc = framing_content_length(cases[i].value, &n);

		cr_assert_eq(rc, cases[i].rc, "\"%s\": rc %d", cases[i].value, rc);
		cr_assert_eq(n, cases[i].rc == 0 ? cases[i].n : 12345, "\"%s\": %llu", cases[i].value,
			     (unsigned long long)n);
	}
	cr_assert_eq(framing_content_length(NULL, &(uint64_t){0}), -1);
}

/* Over a sweep of pools: a request fits exactly when its bytes, a 64-byte
 * record per field (parameters counted exactly once the bound is too big)
 * and the answer's reserve fit. */
Test(framing, memory_fit_over_a_sweep)
{
	const struct field fields[] = {{"Host", "a"}, {"Cookie", "a=1; b=2"}};
	const char *uris[] = {"/", "/v1/splits?target=h100&model=qwen3-8b&max_batch_size=16",
			      "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	const size_t exact_params[] = {0, 3, 0};

	for (size_t u = 0; u < 3; u++) {
		size_t len = strlen(uris[u]);
		struct framing probe = tally("GET", uris[u], fields, 2);
		/* header records: Host, Cookie, and its two cookies */
		size_t exact = probe.bytes + FRAMING_FIELD_RECORD * (4 + exact_params[u] + 1) +
			       FRAMING_ANSWER_RESERVE;

		for (size_t pool = exact - 300; pool < exact + 300; pool++) {
			struct framing f = tally("GET", uris[u], fields, 2);

			cr_assert_eq(framing_fits(&f, uris[u], len, pool), pool >= exact,
				     "%s in a %zu-byte pool (fits from %zu)", uris[u], pool, exact);
		}
	}
}

/* framing_judge's order: no room for an answer, then the size limit, then
 * the framing; the version only matters to a request without Host. */
Test(framing, judge_order)
{
	const struct field no_host[] = {{"Accept", "a"}};
	const struct field hosted[] = {{"Host", "a"}, {"Transfer-Encoding", "gzip"}};
	enum problem_kind fault = PROBLEM_NONE;
	const char *detail = NULL;
	struct framing f = tally("GET", "/", no_host, 1);

	cr_assert_eq(framing_judge(&f, "/", 1, 1u << 16, 4096, "HTTP/1.0", &fault, &detail),
		     FRAMING_OK);
	f = tally("GET", "/", no_host, 1);
	cr_assert_eq(framing_judge(&f, "/", 1, 1u << 16, 4096, "HTTP/1.1", &fault, &detail),
		     FRAMING_FAULT);
	cr_assert_eq(fault, PROBLEM_BAD_REQUEST);
	f = tally("GET", "/", hosted, 2);
	cr_assert_eq(framing_judge(&f, "/", 1, 1u << 16, 4096, "HTTP/1.1", &fault, &detail),
		     FRAMING_FAULT);
	cr_assert_eq(fault, PROBLEM_NOT_IMPLEMENTED);
	/* the same faulty request over the size limit: 431 comes first */
	f = tally("GET", "/", hosted, 2);
	cr_assert_eq(framing_judge(&f, "/", 1, 1u << 16, f.bytes - 1, "HTTP/1.1", &fault, &detail),
		     FRAMING_TOO_LARGE);
	/* and with no room for an answer, that comes before either */
	f = tally("GET", "/", hosted, 2);
	cr_assert_eq(framing_judge(&f, "/", 1, 1024, f.bytes - 1, "HTTP/1.1", &fault, &detail),
		     FRAMING_NO_ROOM);
}
