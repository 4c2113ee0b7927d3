/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * respcache: a kept response is found again only for an answer with the
 * same status, content type, ETag, extra headers and bytes; the bytes
 * decide even when everything else (a forged tag included) agrees; the
 * oldest entry goes first; and cleanup returns every response (the
 * sanitizer and valgrind runs see a leak).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "respcache.h"

static struct api_response answer(const char *body, const char *etag)
{
	struct api_response a;

	memset(&a, 0, sizeof(a));
	a.status = 200;
	a.content_type = API_CT_JSON;
	snprintf(a.etag, sizeof(a.etag), "%s", etag);
	a.body = body;
	a.body_len = strlen(body);
	a.route = -1;
	return a;
}

/* A response as response.c builds one: MHD owns a copy of the bytes. */
static struct MHD_Response *built(struct respcache *rc, const struct api_response *a)
{
	char *copy = malloc(a->body_len + 1);
	struct MHD_Response *r;

	cr_assert_not_null(copy);
	memcpy(copy, a->body, a->body_len + 1);
	r = MHD_create_response_from_buffer(a->body_len, copy, MHD_RESPMEM_MUST_FREE);
	cr_assert_not_null(r);
	respcache_keep(rc, a, r, copy);
	return r;
}

Test(respcache, only_the_same_bytes_and_headers_find_a_kept_response)
{
	struct respcache rc;
	struct api_response a = answer("{\"num_splits\":11}", "\"00000000000000aa\"");
	struct api_response same = answer("{\"num_splits\":11}", "\"00000000000000aa\"");
	struct api_response forged = answer("{\"num_splits\":12}", "\"00000000000000aa\"");
	struct api_response longer = answer("{\"num_splits\":110}", "\"00000000000000aa\"");
	struct api_response tagged = answer("{\"num_splits\":11}", "\"00000000000000ab\"");
	struct api_response typed = same, headed = same, other = same;
	struct MHD_Response *r;

	typed.content_type = API_CT_PROBLEM;
	headed.num_headers = 1;
	headed.headers[0] = (struct api_header){"Vary", "Accept"};
	other.status = 404;
	respcache_init(&rc);
	cr_assert_null(respcache_find(&rc, &a));
	r = built(&rc, &a);
	cr_assert_eq(respcache_find(&rc, &same), r);
	cr_assert_null(respcache_find(&rc, &forged), "same tag and length, other bytes");
	cr_assert_null(respcache_find(&rc, &longer));
	cr_assert_null(respcache_find(&rc, &tagged));
	cr_assert_null(respcache_find(&rc, &typed));
	cr_assert_null(respcache_find(&rc, &headed));
	cr_assert_null(respcache_find(&rc, &other));
	/* with its headers kept, the headed answer finds its own */
	r = built(&rc, &headed);
	cr_assert_eq(respcache_find(&rc, &headed), r);
	cr_assert_neq(respcache_find(&rc, &same), r);
	cr_assert_eq(rc.hits, 3);
	respcache_cleanup(&rc);
	cr_assert_null(respcache_find(&rc, &same));
}

Test(respcache, the_oldest_entry_goes_first)
{
	struct respcache rc;
	char bodies[RESPCACHE_ENTRIES + 1][24];
	struct api_response a[RESPCACHE_ENTRIES + 1];

	respcache_init(&rc);
	for (int i = 0; i <= RESPCACHE_ENTRIES; i++) {
		snprintf(bodies[i], sizeof(bodies[i]), "{\"n\":%d}", i);
		a[i] = answer(bodies[i], "\"0000000000000001\"");
		built(&rc, &a[i]);
	}
	cr_assert_null(respcache_find(&rc, &a[0]), "the first of %d should be gone", RESPCACHE_ENTRIES + 1);
	for (int i = 1; i <= RESPCACHE_ENTRIES; i++) {
		cr_assert_not_null(respcache_find(&rc, &a[i]), "entry %d", i);
	}
	respcache_cleanup(&rc);
}

Test(respcache, only_plain_answers_are_kept)
{
	struct api_response a = answer("{}", "\"0000000000000001\"");
	struct api_response untagged = answer("{}", "");
	struct api_response allowed = a, closing = a, notmod = a, created = a;

	allowed.allow = "GET, HEAD";
	closing.close = true;
	notmod.status = 304;
	created.status = 201;
	cr_assert(respcache_eligible(&a, false));
	cr_assert_not(respcache_eligible(&a, true), "a draining server closes the connection");
	cr_assert_not(respcache_eligible(&untagged, false));
	cr_assert_not(respcache_eligible(&allowed, false));
	cr_assert_not(respcache_eligible(&closing, false));
	cr_assert_not(respcache_eligible(&notmod, false));
	cr_assert_not(respcache_eligible(&created, false));
}
