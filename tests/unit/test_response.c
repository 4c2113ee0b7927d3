/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The refusals the server answers itself (server/response.c), without an
 * engine: each kind's status, whether it closes the connection and its
 * Retry-After, and the words of a limit's refusal with the limit in them.
 * The queueing and the answers written past the engine are the daemon's
 * to show (tests/integration/test_hostile.c, test_tls.c).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "response.h"

/* The value of header `name`, or NULL. */
static const char *header(const struct api_response *a, const char *name)
{
	for (size_t i = 0; i < a->num_headers; i++) {
		if (strcmp(a->headers[i].name, name) == 0) {
			return a->headers[i].value;
		}
	}
	return NULL;
}

Test(response, each_refusal_s_status_close_and_retry_after)
{
	static const struct {
		enum problem_kind kind;
		int status;
		bool close; /* a framing error: where the body ends is unknown */
	} cases[] = {
		{PROBLEM_PAYLOAD_TOO_LARGE, 413, false},
		{PROBLEM_HEADER_TOO_LARGE, 431, false},
		{PROBLEM_OVERLOADED, 503, true},
		{PROBLEM_BAD_REQUEST, 400, true},
		{PROBLEM_EXPECTATION_FAILED, 417, true},
		{PROBLEM_NOT_IMPLEMENTED, 501, true},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_response a;
		const char *retry;

		response_refusal(&a, cases[i].kind, "the detail", "3");
		cr_assert_eq(a.status, cases[i].status, "case %zu", i);
		cr_assert_eq(a.close, cases[i].close, "case %zu", i);
		cr_assert_not_null(strstr(a.body, "the detail"), "case %zu: %s", i, a.body);
		retry = header(&a, "Retry-After");
		if (cases[i].kind == PROBLEM_OVERLOADED) {
			cr_assert_str_eq(retry, "3", "a 503 says when to come back");
		} else {
			cr_assert_null(retry, "case %zu", i);
		}
		api_response_cleanup(&a);
	}
}

Test(response, a_limit_s_words_name_the_limit)
{
	const struct server_config cfg = {.max_body = 1234, .body_budget = 56789,
					  .max_header = 8192};
	char out[160];

	response_limit_detail(PROBLEM_PAYLOAD_TOO_LARGE, &cfg, out, sizeof(out));
	cr_assert_str_eq(out, "the body is over 1234 bytes");
	response_limit_detail(PROBLEM_OVERLOADED, &cfg, out, sizeof(out));
	cr_assert_str_eq(out, "request bodies already hold the 56789 bytes this server keeps for "
			      "them; retry");
	response_limit_detail(PROBLEM_HEADER_TOO_LARGE, &cfg, out, sizeof(out));
	cr_assert_str_eq(out, "the request line and headers are over 8192 bytes");
}
