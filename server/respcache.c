/* SPDX-License-Identifier: AGPL-3.0-only */
#include "respcache.h"

#include <string.h>

void respcache_init(struct respcache *rc)
{
	memset(rc, 0, sizeof(*rc));
}

void respcache_cleanup(struct respcache *rc)
{
	for (size_t i = 0; i < RESPCACHE_ENTRIES; i++) {
		if (rc->entries[i].resp != NULL) {
			MHD_destroy_response(rc->entries[i].resp);
		}
	}
	memset(rc, 0, sizeof(*rc));
}

bool respcache_eligible(const struct api_response *a, bool closing)
{
	return a->status == 200 && a->etag[0] != '\0' && a->allow == NULL && !a->close && !closing;
}

static bool same_headers(const struct respcache_entry *e, const struct api_response *a)
{
	if (e->num_headers != a->num_headers) {
		return false;
	}
	for (size_t i = 0; i < a->num_headers; i++) {
		if (strcmp(e->headers[i].name, a->headers[i].name) != 0 ||
		    strcmp(e->headers[i].value, a->headers[i].value) != 0) {
			return false;
		}
	}
	return true;
}

struct MHD_Response *respcache_find(struct respcache *rc, const struct api_response *a)
{
	for (size_t i = 0; i < RESPCACHE_ENTRIES; i++) {
		const struct respcache_entry *e = &rc->entries[i];

		/* the tag, a hash of the body, rules out nearly every other entry
		 * in one compare; the bytes themselves decide */
		if (e->resp != NULL && e->body_len == a->body_len && e->status == a->status &&
		    strcmp(e->etag, a->etag) == 0 &&
		    /* static types: the same pointer, most often */
		    (e->content_type == a->content_type ||
		     strcmp(e->content_type, a->content_type) == 0) &&
		    same_headers(e, a) &&
		    memcmp(e->body, a->body, a->body_len) == 0) {
			rc->hits++;
			return e->resp;
		}
	}
	rc->misses++;
	return NULL;
}

void respcache_keep(struct respcache *rc, const struct api_response *a, struct MHD_Response *resp,
		    const char *body)
{
	struct respcache_entry *e = &rc->entries[rc->next];

	if (e->resp != NULL) {
		MHD_destroy_response(e->resp); /* connections sending it keep it alive */
	}
	e->resp = resp;
	e->status = a->status;
	e->content_type = a->content_type;
	memcpy(e->etag, a->etag, ETAG_MAX);
	memcpy(e->headers, a->headers, sizeof(e->headers));
	e->num_headers = a->num_headers;
	e->body = body;
	e->body_len = a->body_len;
	rc->next = (rc->next + 1) % RESPCACHE_ENTRIES;
}
