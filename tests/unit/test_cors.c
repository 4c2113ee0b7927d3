/* SPDX-License-Identifier: AGPL-3.0-only */
/* cors.c: what --cors-allow-origin takes, and the match of a request's Origin. */
#include <criterion/criterion.h>

#include "cors.h"

Test(cors, exact_origins_are_taken)
{
	const char *ok[] = {"http://127.0.0.2:9000", "https://dash.example.com", "http://localhost",
			    "https://[::1]:8443", "http://a-b.c:1", "http://x:65535"};
	const char *why = NULL;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert(cors_origin_ok(ok[i], &why), "%s: %s", ok[i], why);
	}
}

Test(cors, what_is_not_an_origin_says_why)
{
	const struct {
		const char *origin, *says;
	} bad[] = {
		{"*", "wildcard"},
		{"https://*.example.com", "wildcard"},
		{"http://127.0.0.2:9000/", "no path"},
		{"http://a/b", "no path"},
		{"127.0.0.2:9000", "http://HOST"},
		{"ftp://a", "http://HOST"},
		{"null", "http://HOST"},
		{"http://", "no host"},
		{"http://[]", "no host"},
		{"http://a:0", "port"},
		{"http://a:65536", "port"},
		{"http://a:080", "port"},
		{"http://a:", "port"},
		{"http://Dash.example", "lowercase"},
		{"http://a b", "letters"},
		{"http://[::g]", "IPv6"},
	};
	const char *why;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		cr_assert_not(cors_origin_ok(bad[i].origin, &why), "%s taken", bad[i].origin);
		cr_assert_not_null(why);
		cr_assert(strstr(why, bad[i].says) != NULL, "%s: %s", bad[i].origin, why);
	}
}

Test(cors, an_origin_matches_exactly)
{
	const char *list[] = {"http://a:1", "https://b"};

	cr_assert_eq(cors_match(list, 2, "https://b"), list[1]);
	cr_assert_null(cors_match(list, 2, "https://b:443"));
	cr_assert_null(cors_match(list, 2, "http://a"));
	cr_assert_null(cors_match(list, 2, "HTTP://a:1"));
	cr_assert_null(cors_match(list, 2, NULL));
	cr_assert_null(cors_match(list, 0, "http://a:1"));
}
