/* SPDX-License-Identifier: AGPL-3.0-only */
#include "events.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "jsonw.h"

void events_get(struct handler_call *c)
{
	c->content_type = API_CT_EVENT_STREAM;
	c->body = (struct slice){"", 0};
	c->resp->stream = true;
	/* nginx buffers a proxied answer unless told not to */
	(void)exchange_add_header(c->resp, "X-Accel-Buffering", "no");
}

/* snprintf that reports a cut as 0: a part of an event is no event. */
static size_t put(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

size_t events_preamble(char *out, size_t cap)
{
	return put(out, cap, "retry: %u\n\n", EVENTS_RETRY_MS);
}

size_t events_heartbeat(char *out, size_t cap)
{
	return put(out, cap, ": heartbeat\n\n");
}

#define REV_FMT "\"revision\":%llu,\"digest\":\"%s\",\"loaded_at\":%lld"
#define REV_ARGS(r) (unsigned long long)(r)->revision, (r)->digest, (long long)(r)->loaded_at

/* The OFREP message: no id (see the header), the digest as the etag. */
static size_t refetch(char *out, size_t cap, const struct events_revision *now)
{
	return put(out, cap,
		   "data: {\"type\":\"refetchEvaluation\",\"etag\":\"%s\",\"lastModified\":%lld}\n\n",
		   now->digest, (long long)now->loaded_at);
}

size_t events_hello(char *out, size_t cap, const char *boot, const struct events_revision *now)
{
	return put(out, cap, "id: %llu@%s\nevent: hello\ndata: {" REV_FMT "}\n\n",
		   (unsigned long long)now->revision, boot, REV_ARGS(now));
}

size_t events_change(char *out, size_t cap, const char *boot, const struct events_revision *now,
		     const struct events_revision *before)
{
	size_t n = refetch(out, cap, now), m;

	if (n == 0) {
		return 0;
	}
	m = put(out + n, cap - n,
		"id: %llu@%s\nevent: catalog\ndata: {" REV_FMT ",\"previous\":{" REV_FMT "}}\n\n",
		(unsigned long long)now->revision, boot, REV_ARGS(now), REV_ARGS(before));
	return m == 0 ? 0 : n + m;
}

size_t events_reset(char *out, size_t cap, const char *boot, const struct events_revision *now,
		    const char *last_id)
{
	char shown[6 * 64 + 1]; /* 64 bytes at most, each escaped to 6 at worst (\u00XX) */
	size_t len = strnlen(last_id, 64), n = refetch(out, cap, now), m;

	if (n == 0) {
		return 0;
	}
	shown[jsonw_escape(shown, sizeof(shown) - 1, last_id, len)] = '\0';
	m = put(out + n, cap - n,
		"id: %llu@%s\nevent: reset\ndata: {" REV_FMT ",\"last_event_id\":\"%s\","
		"\"reason\":\"the changes since that id are not held here: fetch afresh\"}\n\n",
		(unsigned long long)now->revision, boot, REV_ARGS(now), shown);
	return m == 0 ? 0 : n + m;
}

int events_parse_id(const char *last_id, const char *boot, uint64_t *revision)
{
	uint64_t v = 0;
	size_t i = 0;

	if (last_id == NULL) {
		return -1;
	}
	/* no sign, no leading zero, no overflow: the form splitkd writes */
	for (; last_id[i] >= '0' && last_id[i] <= '9'; i++) {
		if (i == 19 || (i > 0 && v == 0)) {
			return -1;
		}
		v = v * 10 + (uint64_t)(last_id[i] - '0');
	}
	if (i == 0 || v == 0 || last_id[i] != '@' || strcmp(last_id + i + 1, boot) != 0) {
		return -1;
	}
	*revision = v;
	return 0;
}
