/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * GET /v1/events against the real daemon: the event a reload sends, the
 * heartbeat, a Last-Event-ID replay, the stream cap, what idle streams
 * cost, and a drain with streams open. Streams are read over raw sockets
 * (libcurl would wait for an end that never comes).
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"

static const char *catalog_a =
	"{\"targets\":[{\"name\":\"t\",\"sm_count\":132,\"attn_decode_splitk\":\"auto\"}],"
	"\"models\":[{\"name\":\"m\",\"num_q_heads\":24}]}";
static const char *catalog_b =
	"{\"targets\":[{\"name\":\"t\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],"
	"\"models\":[{\"name\":\"m\",\"num_q_heads\":24}]}";

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* What a stream has sent so far. */
struct stream_read {
	int fd;
	char buf[65536];
	size_t len;
	bool eof;
};

static void stream_connect_to(struct stream_read *s, unsigned port, const char *path,
			      const char *last_id, const char *version)
{
	char req[320];
	int n;

	memset(s, 0, sizeof(*s));
	s->fd = connect_raw(port);
	n = snprintf(req, sizeof(req),
		     "GET %s %s\r\nHost: t\r\nAccept: text/event-stream\r\n%s%s%s\r\n", path,
		     version, last_id ? "Last-Event-ID: " : "", last_id ? last_id : "",
		     last_id ? "\r\n" : "");
	cr_assert_eq(send(s->fd, req, (size_t)n, MSG_NOSIGNAL), n);
}

static void stream_connect_as(struct stream_read *s, unsigned port, const char *last_id,
			      const char *version)
{
	stream_connect_to(s, port, "/v1/events", last_id, version);
}

static void stream_connect(struct stream_read *s, unsigned port, const char *last_id)
{
	stream_connect_as(s, port, last_id, "HTTP/1.1");
}

/* Reads until `needle` is in what arrived after byte `from`, or the
 * stream ends, or ms pass. Returns where the needle starts, or NULL. */
static const char *stream_until(struct stream_read *s, size_t from, const char *needle, long ms)
{
	uint64_t deadline = now_ms() + (uint64_t)ms;

	for (;;) {
		const char *hit = s->len > from ? strstr(s->buf + from, needle) : NULL;
		struct pollfd p = {s->fd, POLLIN, 0};
		uint64_t t = now_ms();
		ssize_t got;

		if (hit != NULL || s->eof || t >= deadline) {
			return hit;
		}
		if (poll(&p, 1, (int)(deadline - t)) <= 0) {
			continue;
		}
		got = recv(s->fd, s->buf + s->len, sizeof(s->buf) - 1 - s->len, 0);
		if (got <= 0) {
			s->eof = true;
		} else {
			s->len += (size_t)got;
			s->buf[s->len] = '\0';
		}
	}
}

/* The JSON data line of the event at `at` (the text from its "event:"). */
static cJSON *event_data(const char *at)
{
	const char *data = strstr(at, "data: ");
	const char *end = data ? strchr(data, '\n') : NULL;

	cr_assert(data != NULL && end != NULL, "no data line in %s", at);
	return cJSON_ParseWithLength(data + 6, (size_t)(end - data - 6));
}

/* The id of the event whose "event:" line is at `at`: the line before. */
static void event_id(const struct stream_read *s, const char *at, char *out, size_t cap)
{
	const char *line = at - 1;
	const char *id;
	size_t n;

	while (line > s->buf && line[-1] != '\n') {
		line--;
	}
	cr_assert(strncmp(line, "id: ", 4) == 0, "no id line before the event");
	id = line + 4;
	n = (size_t)(strchr(id, '\n') - id);
	cr_assert_lt(n, cap);
	memcpy(out, id, n);
	out[n] = '\0';
}

static const char *served_digest(const struct daemon *d, char *out, size_t cap)
{
	struct reply r = http(d, "GET", "/version", NULL, NULL);

	cr_assert_eq(r.status, 200);
	snprintf(out, cap, "%s", jstr(r.json, "catalog"));
	reply_free(&r);
	return out;
}

static void start_with_catalog(struct daemon *d, char *path, const char *const *more)
{
	const char *args[16] = {"--access-log", "off", "--catalog", path};
	int n = 4;

	snprintf(path, 64, "/tmp/splitkd-streams-XXXXXX");
	cr_assert_geq(mkstemp(path), 0);
	write_text(path, catalog_a);
	for (int i = 0; more != NULL && more[i] != NULL && n < 15; i++) {
		args[n++] = more[i];
	}
	args[n] = NULL;
	daemon_start(d, args);
}

Test(streams, a_reload_is_an_event_within_a_second_naming_the_new_revision)
{
	struct daemon d;
	char path[64], before[64], after[64], id[64];
	struct stream_read s;
	const char *hello, *ev;
	cJSON *data, *prev, *cells, *cell;
	struct reply m1, m2;
	uint64_t sent;

	start_with_catalog(&d, path, NULL);
	served_digest(&d, before, sizeof(before));
	/* the decisions before and after, independently of the diff */
	m1 = http(&d, "GET", "/v1/matrix", NULL, NULL);
	cr_assert_eq(m1.status, 200);
	stream_connect(&s, d.port, NULL);
	cr_assert_not_null(stream_until(&s, 0, "\r\n\r\n", 2000), "no headers: %s", s.buf);
	cr_assert(strstr(s.buf, "HTTP/1.1 200") == s.buf, "%s", s.buf);
	cr_assert(find_ci(s.buf, "Content-Type: text/event-stream") != NULL, "%s", s.buf);
	cr_assert_not_null(stream_until(&s, 0, "retry: ", 2000));
	hello = stream_until(&s, 0, "event: hello\n", 2000);
	cr_assert_not_null(hello, "no hello: %s", s.buf);
	cr_assert_not_null(stream_until(&s, 0, "}\n\n", 2000));
	data = event_data(hello);
	cr_assert_eq(jnum(data, "seq"), 1);
	cr_assert_str_eq(jstr(data, "revision"), before);
	cJSON_Delete(data);

	/* a reload of the same file is no change: no event */
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 200; i++) {
		char *log = daemon_log(&d);
		bool done = strstr(log, "reload ok") != NULL;

		free(log);
		if (done) {
			break;
		}
		sleep_ms(10);
	}
	cr_assert_null(stream_until(&s, 0, "event: catalog", 300), "an unchanged reload is an event: %s",
		       s.buf);

	write_text(path, catalog_b);
	sent = now_ms();
	kill(d.pid, SIGHUP);
	/* The behaviour is the bound: the issue promises the event within 1 s. */
	ev = stream_until(&s, 0, "event: catalog\n", 1000);
	cr_assert_not_null(ev, "no catalog event within 1 s of SIGHUP: %s", s.buf);
	cr_assert_leq(now_ms() - sent, 1000);
	cr_assert_not_null(stream_until(&s, (size_t)(ev - s.buf), "}\n\n", 1000));
	data = event_data(ev);
	served_digest(&d, after, sizeof(after));
	cr_assert_str_neq(after, before);
	/* the revision is the digest, as GET /v1/revisions names it */
	cr_assert_eq(jnum(data, "seq"), 2);
	cr_assert_str_eq(jstr(data, "revision"), after);
	prev = cJSON_GetObjectItemCaseSensitive(data, "previous");
	cr_assert_eq(jnum(prev, "seq"), 1);
	cr_assert_str_eq(jstr(prev, "revision"), before);
	/* the one cell, t x m, from the matrix before to the matrix after
	 * (132 SMs to 20 under auto: the split count moves) */
	m2 = http(&d, "GET", "/v1/matrix", NULL, NULL);
	cr_assert_eq(m2.status, 200);
	cells = cJSON_GetObjectItemCaseSensitive(data, "cells");
	cr_assert_eq(cJSON_GetArraySize(cells), 1, "%s", ev);
	cr_assert_eq(jnum(data, "changed"), 1);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(data, "truncated")));
	cell = cJSON_GetArrayItem(cells, 0);
	cr_assert_str_eq(jstr(cell, "target"), "t");
	cr_assert_str_eq(jstr(cell, "model"), "m");
	for (int side = 0; side < 2; side++) {
		const cJSON *want = cJSON_GetArrayItem(
			cJSON_GetObjectItemCaseSensitive(side ? m2.json : m1.json, "cells"), 0);
		const cJSON *got = cJSON_GetObjectItemCaseSensitive(cell, side ? "to" : "from");

		cr_assert_eq(jnum(got, "num_splits"), jnum(want, "num_splits"), "side %d", side);
		cr_assert_eq(jnum(got, "workspace_slots"), jnum(want, "workspace_slots"));
		cr_assert_str_eq(jstr(got, "policy"), jstr(want, "policy"));
	}
	cr_assert_neq(jnum(cJSON_GetObjectItemCaseSensitive(cell, "from"), "num_splits"),
		      jnum(cJSON_GetObjectItemCaseSensitive(cell, "to"), "num_splits"));
	reply_free(&m1);
	reply_free(&m2);
	event_id(&s, ev, id, sizeof(id));
	cr_assert(strncmp(id, "2@", 2) == 0, "id %s", id);
	/* and the OFREP message before it, with the new catalog's digest */
	cr_assert(strstr(s.buf, "\"type\":\"refetchEvaluation\"") != NULL);
	cJSON_Delete(data);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
}

Test(streams, an_idle_stream_gets_heartbeats)
{
	const char *more[] = {"--stream-heartbeat", "1", NULL};
	struct daemon d;
	char path[64];
	struct stream_read s;
	const char *first;

	start_with_catalog(&d, path, more);
	stream_connect(&s, d.port, NULL);
	cr_assert_not_null(stream_until(&s, 0, "event: hello\n", 2000));
	/* 1 s apart, checked on a 100 ms tick: two within 3 s is a wide margin */
	first = stream_until(&s, 0, ": heartbeat\n\n", 3000);
	cr_assert_not_null(first, "no heartbeat: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(first - s.buf) + 1, ": heartbeat\n\n", 3000),
			   "one heartbeat only: %s", s.buf);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
}

/* The body of a chunked answer at `body` (after its header block), read
 * strictly (RFC 9112 7.1: a size in hex, CRLF, the bytes, CRLF; the last
 * chunk 0 and an empty trailer) into out; false at the first fault, or
 * when bytes follow the end. */
static bool dechunk(const char *body, const char *end, char *out, size_t cap, size_t *len)
{
	*len = 0;
	for (;;) {
		char *after;
		unsigned long n = strtoul(body, &after, 16);

		if (after == body || end - after < 2 || strncmp(after, "\r\n", 2) != 0) {
			return false;
		}
		body = after + 2;
		if (n == 0) {
			return end - body == 2 && strncmp(body, "\r\n", 2) == 0;
		}
		if ((size_t)(end - body) < n + 2 || strncmp(body + n, "\r\n", 2) != 0 ||
		    *len + n >= cap) {
			return false;
		}
		memcpy(out + *len, body, n);
		*len += n;
		out[*len] = '\0';
		body += n + 2;
	}
}

/* Heartbeats of a plain HTTP/1.1 stream go straight to its socket, not
 * through libmicrohttpd (stream.h): the body stays one well-formed
 * chunked body around them, through a change that libmicrohttpd sends
 * after them and the drain's end. */
Test(streams, heartbeats_written_to_the_socket_keep_the_body_chunked_through_a_change_and_the_end)
{
	const char *more[] = {"--stream-heartbeat", "1", NULL};
	struct daemon d;
	char path[64];
	static char body[65536];
	struct stream_read s;
	const char *head_end, *ev, *beat = ": heartbeat\n\n";
	size_t len, at;
	int status;

	start_with_catalog(&d, path, more);
	stream_connect(&s, d.port, NULL);
	cr_assert_not_null(stream_until(&s, 0, "event: hello\n", 2000));
	/* 1 s apart on a 100 ms tick: three within 5 s is a wide margin */
	at = 0;
	for (int i = 0; i < 3; i++) {
		const char *hit = stream_until(&s, at, beat, 5000);

		cr_assert_not_null(hit, "heartbeat %d missing: %s", i, s.buf);
		at = (size_t)(hit - s.buf) + 1;
	}
	write_text(path, catalog_b);
	kill(d.pid, SIGHUP);
	ev = stream_until(&s, 0, "event: catalog\n", 5000);
	cr_assert_not_null(ev, "no change event: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(ev - s.buf), "}\n\n", 2000));
	cr_assert_not_null(stream_until(&s, (size_t)(ev - s.buf), beat, 5000),
			   "no heartbeat after the change: %s", s.buf);
	kill(d.pid, SIGTERM);
	stream_until(&s, s.len, "never", 5000);
	cr_assert(s.eof, "the stream is still open after SIGTERM");
	status = daemon_wait(&d, 6000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	head_end = strstr(s.buf, "\r\n\r\n");
	cr_assert_not_null(head_end);
	cr_assert(find_ci(s.buf, "Transfer-Encoding: chunked") != NULL, "%s", s.buf);
	cr_assert(dechunk(head_end + 4, s.buf + s.len, body, sizeof(body), &len),
		  "not one well-formed chunked body: %s", head_end + 4);
	cr_assert(strncmp(body, "retry: ", 7) == 0, "%s", body);
	ev = strstr(body, "event: catalog\n");
	cr_assert_not_null(ev, "%s", body);
	at = 0;
	for (const char *p = strstr(body, beat); p != NULL && p < ev; p = strstr(p + 1, beat)) {
		at++;
	}
	cr_assert_geq(at, 3u, "%zu heartbeats before the change: %s", at, body);
	cr_assert_not_null(strstr(ev, beat), "%s", body);
	close(s.fd);
	unlink(d.log_path);
	unlink(path);
}

/* An HTTP/1.0 client gets the body as it is, not chunked (libmicrohttpd
 * closes the connection at its end): its heartbeats go through
 * libmicrohttpd, not to its socket, which would frame them as chunks. */
Test(streams, an_http_1_0_stream_gets_its_heartbeats_unchunked)
{
	const char *more[] = {"--stream-heartbeat", "1", NULL};
	struct daemon d;
	char path[64];
	struct stream_read s;
	const char *head_end, *first;

	start_with_catalog(&d, path, more);
	stream_connect_as(&s, d.port, NULL, "HTTP/1.0");
	cr_assert_not_null(stream_until(&s, 0, "event: hello\n", 2000));
	first = stream_until(&s, 0, ": heartbeat\n\n", 3000);
	cr_assert_not_null(first, "no heartbeat: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(first - s.buf) + 1, ": heartbeat\n\n", 3000),
			   "one heartbeat only: %s", s.buf);
	head_end = strstr(s.buf, "\r\n\r\n");
	cr_assert_not_null(head_end);
	cr_assert(find_ci(s.buf, "Transfer-Encoding") == NULL, "%s", s.buf);
	/* the body is the events' text itself: it starts with retry and has
	 * no chunk framing (no CR at all) */
	cr_assert(strncmp(head_end + 4, "retry: ", 7) == 0, "%s", head_end + 4);
	cr_assert_null(strchr(head_end + 4, '\r'), "%s", head_end + 4);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
}

Test(streams, last_event_id_replays_the_changes_missed_in_order)
{
	struct daemon d;
	char path[64], id[64], rev1[64], rev2[64], rev3[64], boot[64], foreign[96];
	struct stream_read s;
	const char *at, *e2, *e3;
	cJSON *data;

	start_with_catalog(&d, path, NULL);
	served_digest(&d, rev1, sizeof(rev1));
	stream_connect(&s, d.port, NULL);
	at = stream_until(&s, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	event_id(&s, at, id, sizeof(id));
	cr_assert(strncmp(id, "1@", 2) == 0, "id %s", id);
	snprintf(boot, sizeof(boot), "%s", id + 2);
	close(s.fd);

	/* two changes while the client is away */
	write_text(path, catalog_b);
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 200 && strcmp(served_digest(&d, rev2, sizeof(rev2)), rev1) == 0; i++) {
		sleep_ms(10);
	}
	write_text(path, catalog_a);
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 200 && strcmp(served_digest(&d, rev3, sizeof(rev3)), rev2) == 0; i++) {
		sleep_ms(10);
	}
	cr_assert_str_neq(rev2, rev1);
	cr_assert_str_eq(rev3, rev1);

	stream_connect(&s, d.port, id);
	e2 = stream_until(&s, 0, "event: catalog\n", 2000);
	cr_assert_not_null(e2, "no replay: %s", s.buf);
	e3 = stream_until(&s, (size_t)(e2 - s.buf) + 1, "event: catalog\n", 2000);
	cr_assert_not_null(e3, "one change replayed, not two: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(e3 - s.buf), "}\n\n", 2000));
	cr_assert(strstr(s.buf, "event: hello") == NULL, "a replay is not a hello");
	event_id(&s, e2, id, sizeof(id));
	cr_assert(strncmp(id, "2@", 2) == 0 && strcmp(id + 2, boot) == 0, "id %s", id);
	data = event_data(e2);
	cr_assert_str_eq(jstr(data, "revision"), rev2);
	cr_assert_str_eq(jstr(cJSON_GetObjectItemCaseSensitive(data, "previous"), "revision"), rev1);
	cJSON_Delete(data);
	event_id(&s, e3, id, sizeof(id));
	cr_assert(strncmp(id, "3@", 2) == 0, "id %s", id);
	data = event_data(e3);
	cr_assert_eq(jnum(data, "seq"), 3);
	cr_assert_str_eq(jstr(data, "revision"), rev3);
	cr_assert_str_eq(jstr(cJSON_GetObjectItemCaseSensitive(data, "previous"), "revision"), rev2);
	cJSON_Delete(data);
	close(s.fd);

	/* up to date: nothing to replay, no hello either */
	stream_connect(&s, d.port, id);
	cr_assert_not_null(stream_until(&s, 0, "retry: ", 2000));
	cr_assert_null(stream_until(&s, 0, "event: ", 300), "%s", s.buf);
	close(s.fd);

	/* another run's id: the history does not reach it */
	snprintf(foreign, sizeof(foreign), "2@%s", strcmp(boot, "00000000") ? "00000000" : "00000001");
	stream_connect(&s, d.port, foreign);
	at = stream_until(&s, 0, "event: reset\n", 2000);
	cr_assert_not_null(at, "no reset: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(at - s.buf), "}\n\n", 2000));
	data = event_data(at);
	cr_assert_eq(jnum(data, "seq"), 3);
	cr_assert_str_eq(jstr(data, "revision"), rev3);
	cr_assert_str_eq(jstr(data, "last_event_id"), foreign);
	cJSON_Delete(data);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
}

/* One catalog change, waited for: the file flips between a and b. */
/* Waits (a second at most) until the streams' hub has heard of `digest`:
 * reload.c answers with a new catalog (/version) a moment before it tells
 * its listeners, so a stream opened in between still stands a change
 * earlier. A fresh stream's hello says where the hub stands; with every
 * stream taken (503) the caller's own streams are what it waits on. */
static void hub_has(const struct daemon *d, const char *digest)
{
	struct stream_read *probe = calloc(1, sizeof(*probe));
	bool there = false;

	cr_assert_not_null(probe);
	for (int w = 0; w < 100 && !there; w++) {
		stream_connect(probe, d->port, NULL);
		if (stream_until(probe, 0, "}\n\n", 2000) == NULL) {
			close(probe->fd);
			break; /* 503: no hello to read */
		}
		there = strstr(probe->buf, digest) != NULL;
		close(probe->fd);
		if (!there) {
			sleep_ms(10);
		}
	}
	free(probe);
}

static void change_catalog(const struct daemon *d, const char *path, int i, char *digest)
{
	char was[64];

	served_digest(d, was, sizeof(was));
	write_text(path, i % 2 ? catalog_a : catalog_b);
	kill(d->pid, SIGHUP);
	for (int w = 0; w < 200 && strcmp(served_digest(d, digest, 64), was) == 0; w++) {
		sleep_ms(10);
	}
	cr_assert_str_neq(digest, was, "reload %d not seen", i);
	hub_has(d, digest);
}

/* The replay reaches as far as --revisions: 3 here, so three missed
 * changes replay and a fourth makes it a reset. */
Test(streams, the_replay_reaches_as_far_as_the_held_revisions)
{
	const char *more[] = {"--revisions", "3", NULL};
	struct daemon d;
	char path[64], id[64], digest[64];
	struct stream_read s;
	const char *at = NULL;
	cJSON *data;

	start_with_catalog(&d, path, more);
	stream_connect(&s, d.port, NULL);
	at = stream_until(&s, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	event_id(&s, at, id, sizeof(id));
	close(s.fd);
	for (int i = 0; i < 3; i++) {
		change_catalog(&d, path, i, digest);
	}
	stream_connect(&s, d.port, id);
	at = s.buf;
	for (int seq = 2; seq <= 4; seq++) {
		char got[64];

		at = stream_until(&s, (size_t)(at - s.buf) + 1, "event: catalog\n", 2000);
		cr_assert_not_null(at, "change %d not replayed: %s", seq, s.buf);
		event_id(&s, at, got, sizeof(got));
		cr_assert_eq(strtol(got, NULL, 10), seq, "id %s", got);
	}
	cr_assert_not_null(stream_until(&s, (size_t)(at - s.buf), "}\n\n", 2000));
	data = event_data(at);
	cr_assert_str_eq(jstr(data, "revision"), digest);
	cJSON_Delete(data);
	cr_assert(strstr(s.buf, "event: reset") == NULL, "%s", s.buf);
	close(s.fd);

	change_catalog(&d, path, 3, digest);
	stream_connect(&s, d.port, id);
	at = stream_until(&s, 0, "event: reset\n", 2000);
	cr_assert_not_null(at, "no reset: %s", s.buf);
	cr_assert_not_null(stream_until(&s, (size_t)(at - s.buf), "}\n\n", 2000));
	cr_assert(strstr(s.buf, "event: catalog") == NULL, "a partial replay: %s", s.buf);
	data = event_data(at);
	cr_assert_eq(jnum(data, "seq"), 5);
	cr_assert_str_eq(jstr(data, "revision"), digest);
	cJSON_Delete(data);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
}

static long metric(const struct daemon *d, const char *line_start)
{
	struct reply r = http(d, "GET", "/metrics", NULL, NULL);
	const char *p = strstr(r.body, line_start);
	long v = p ? strtol(p + strlen(line_start), NULL, 10) : -1;

	reply_free(&r);
	return v;
}

/* n streams, each at its hello, and /metrics counts them. */
static void open_streams(const struct daemon *d, struct stream_read *s, int n)
{
	for (int i = 0; i < n; i++) {
		stream_connect(&s[i], d->port, NULL);
		cr_assert_not_null(stream_until(&s[i], 0, "event: hello\n", 2000), "stream %d: %s", i,
				   s[i].buf);
	}
	cr_assert_eq(metric(d, "\nsplitkd_streams "), n);
}

Test(streams, past_the_cap_a_stream_is_503_and_queries_are_still_answered)
{
	/* more streams than connections: streams must not take their slots */
	const char *more[] = {"--max-streams", "12", "--max-connections", "8", NULL};
	struct daemon d;
	char path[64];
	struct stream_read s[12], extra;
	const char *body;
	cJSON *problem;

	start_with_catalog(&d, path, more);
	open_streams(&d, s, 12);
	stream_connect(&extra, d.port, NULL);
	body = stream_until(&extra, 0, "\r\n\r\n", 2000);
	cr_assert_not_null(body, "%s", extra.buf);
	cr_assert(strstr(extra.buf, "HTTP/1.1 503") == extra.buf, "%s", extra.buf);
	cr_assert(find_ci(extra.buf, "\r\nRetry-After: ") != NULL, "%s", extra.buf);
	cr_assert(find_ci(extra.buf, "\r\nContent-Type: application/problem+json") != NULL);
	stream_until(&extra, 0, "}", 2000);
	problem = cJSON_Parse(strchr(body, '{'));
	cr_assert_not_null(problem, "%s", extra.buf);
	cr_assert_str_eq(jstr(problem, "type"), "/problems/overloaded");
	cJSON_Delete(problem);
	close(extra.fd);
	/* 20 probes, each on a fresh connection, while the cap is reached */
	for (int i = 0; i < 20; i++) {
		struct reply r = http(&d, "GET", i % 2 ? "/healthz" : "/v1/splits?target=t&model=m", NULL,
				      NULL);

		cr_assert_eq(r.status, 200, "probe %d: %ld", i, r.status);
		reply_free(&r);
	}
	cr_assert_eq(metric(&d, "\nsplitkd_streams "), 12);
	for (int i = 0; i < 12; i++) {
		close(s[i].fd);
	}
	daemon_finish(&d);
	unlink(path);
}

/* The process's user + system CPU, in seconds. */
static double cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long utime = 0, stime = 0;
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command may hold spaces */
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime),
		     2);
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

Test(streams, idle_streams_cost_no_cpu, .timeout = 60)
{
	/* a heartbeat every 5 s: the 10 s below include two rounds of them */
	const char *more[] = {"--stream-heartbeat", "5", NULL};
	struct daemon d;
	char path[64];
	static struct stream_read s[32];
	double before, used;

	start_with_catalog(&d, path, more);
	for (int i = 0; i < 32; i++) {
		stream_connect(&s[i], d.port, NULL);
		cr_assert_not_null(stream_until(&s[i], 0, "event: hello\n", 2000));
	}
	before = cpu_seconds(d.pid);
	sleep_ms(10000);
	used = cpu_seconds(d.pid) - before;
	/* The bound is the behaviour (no busy loop): a content callback that
	 * returned 0 without suspending would spin two threads for seconds;
	 * 0.3 s of CPU in 10 s is a wide margin over the 100 ms tick. */
	cr_log_info("32 idle streams: %.3f s of CPU in 10 s", used);
	cr_assert_lt(used, 0.3, "32 idle streams used %.2f s of CPU in 10 s", used);
	for (int i = 0; i < 32; i++) {
		cr_assert(!s[i].eof, "stream %d ended", i);
		cr_assert_not_null(stream_until(&s[i], 0, ": heartbeat", 10), "stream %d had no heartbeat", i);
		close(s[i].fd);
	}
	daemon_finish(&d);
	unlink(path);
}

Test(streams, sigterm_ends_every_stream_and_exits_0_within_the_drain)
{
	const char *more[] = {"--drain-timeout", "5", NULL};
	struct daemon d;
	char path[64];
	struct stream_read s[8];
	uint64_t t0;
	int status;

	start_with_catalog(&d, path, more);
	for (int i = 0; i < 8; i++) {
		stream_connect(&s[i], d.port, NULL);
		cr_assert_not_null(stream_until(&s[i], 0, "event: hello\n", 2000));
	}
	t0 = now_ms();
	kill(d.pid, SIGTERM);
	for (int i = 0; i < 8; i++) {
		/* the chunked end, then the close */
		stream_until(&s[i], 0, "\r\n0\r\n\r\n", 5000);
		stream_until(&s[i], s[i].len, "never", 5000);
		cr_assert(s[i].eof, "stream %d still open after SIGTERM", i);
		cr_assert(strstr(s[i].buf, "\r\n0\r\n\r\n") != NULL, "stream %d cut, not ended", i);
		close(s[i].fd);
	}
	status = daemon_wait(&d, 6000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	/* streams are not requests in flight to wait for: well inside the 5 s */
	cr_assert_lt(now_ms() - t0, 5000);
	unlink(d.log_path);
	unlink(path);
}

Test(streams, the_route_takes_get_and_head_only_and_no_parameters)
{
	struct daemon d;
	struct reply r;

	daemon_start(&d, (const char *const[]){"--access-log", "off", NULL});
	r = http(&d, "HEAD", "/v1/events", NULL, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(r.content_type, "text/event-stream; charset=utf-8");
	cr_assert_eq(r.len, 0);
	cr_assert_eq(r.etag[0], '\0', "a stream has no ETag");
	reply_free(&r);
	r = http(&d, "POST", "/v1/events", (const char *const[]){"Content-Type: application/json", NULL},
		 "{}");
	expect_problem(&r, 405, "method-not-allowed");
	cr_assert_str_eq(r.allow, "GET, HEAD");
	reply_free(&r);
	r = http(&d, "GET", "/v1/events?since=3", NULL, NULL);
	expect_problem(&r, 400, "unknown-parameter");
	reply_free(&r);
	daemon_finish(&d);
}

/* How a client leaves: a FIN (close), an RST (close with SO_LINGER 0), or
 * a half-close (shutdown of its sending side, the socket kept). */
enum leave { LEAVE_FIN, LEAVE_RST, LEAVE_HALF };

static void stream_leave_as(struct stream_read *s, enum leave how)
{
	struct linger hard = {1, 0};

	if (how == LEAVE_HALF) {
		cr_assert_eq(shutdown(s->fd, SHUT_WR), 0);
		return;
	}
	if (how == LEAVE_RST) {
		cr_assert_eq(setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard)), 0);
	}
	close(s->fd);
	s->fd = -1;
}

/* Issue 32: the cap's worth of streams, a quarter of them leave, and as
 * many new ones open within 2 s: every one is 200 (a stream whose client
 * left used to keep its slot until a heartbeat failed, 15 to 30 s here).
 * Then a change still reaches every stream open. */
static void a_quarter_leaves_and_comes_back(enum leave how)
{
	/* heartbeats at 15 s: what frees a slot within the test is the
	 * departure itself, never a heartbeat that failed */
	const char *more[] = {"--max-streams", "40", "--stream-heartbeat", "15", NULL};
	struct stream_read *s = calloc(50, sizeof(*s));
	struct daemon d;
	char path[64], digest[64];
	uint64_t left_at;

	cr_assert_not_null(s);
	start_with_catalog(&d, path, more);
	open_streams(&d, s, 40);
	left_at = now_ms();
	for (int i = 0; i < 10; i++) {
		stream_leave_as(&s[i * 4], how);
	}
	/* The bound is the behaviour (issue 32: noticed "within a second",
	 * reopened within 2 s); splitkd reads departures every 100 ms, so
	 * 2 s is a wide margin on a loaded machine. */
	for (int i = 0; i < 10; i++) {
		struct stream_read *n = &s[40 + i];

		for (;;) {
			stream_connect(n, d.port, NULL);
			cr_assert_not_null(stream_until(n, 0, "\r\n\r\n", 2000), "no answer: %s", n->buf);
			if (strstr(n->buf, "HTTP/1.1 503") != n->buf || now_ms() - left_at >= 2000) {
				break;
			}
			close(n->fd); /* a client retries a 503 */
			sleep_ms(50);
		}
		cr_assert(strstr(n->buf, "HTTP/1.1 200") == n->buf,
			  "new stream %d not open 2 s after a quarter left: %s", i, n->buf);
		cr_assert_not_null(stream_until(n, 0, "event: hello\n", 2000), "%s", n->buf);
	}
	cr_assert_leq(now_ms() - left_at, 2000 + 2000);
	cr_assert_eq(metric(&d, "\nsplitkd_streams "), 40);
	/* the cap is whole again: one more is refused */
	{
		struct stream_read *extra = calloc(1, sizeof(*extra));
		const char *after;

		cr_assert_not_null(extra);
		stream_connect(extra, d.port, NULL);
		cr_assert_not_null(stream_until(extra, 0, "\r\n\r\n", 2000));
		cr_assert(strstr(extra->buf, "HTTP/1.1 503") == extra->buf, "%s", extra->buf);
		/* spread, so refused reconnects do not come back together */
		after = find_ci(extra->buf, "\r\nRetry-After: ");
		cr_assert_not_null(after, "%s", extra->buf);
		cr_assert(after[15] >= '1' && after[15] <= '4' && after[16] == '\r', "%s", extra->buf);
		close(extra->fd);
		free(extra);
	}
	/* a change reaches the 30 that stayed and the 10 new ones */
	change_catalog(&d, path, 0, digest);
	for (int i = 0; i < 50; i++) {
		if (i < 40 && i % 4 == 0) {
			continue; /* left */
		}
		cr_assert_not_null(stream_until(&s[i], 0, "event: catalog\n", 2000), "stream %d: %s", i,
				   s[i].buf);
	}
	for (int i = 0; i < 50; i++) {
		if (s[i].fd >= 0) {
			close(s[i].fd);
		}
	}
	free(s);
	daemon_finish(&d);
	unlink(path);
}

Test(streams, a_quarter_that_closes_is_replaced_within_2_s, .timeout = 30)
{
	a_quarter_leaves_and_comes_back(LEAVE_FIN);
}

Test(streams, a_quarter_that_resets_is_replaced_within_2_s, .timeout = 30)
{
	a_quarter_leaves_and_comes_back(LEAVE_RST);
}

Test(streams, a_quarter_that_half_closes_is_replaced_within_2_s, .timeout = 30)
{
	a_quarter_leaves_and_comes_back(LEAVE_HALF);
}

/* --state-dir: a Last-Event-ID from before a restart (a SIGKILL) replays
 * the changes it missed, under the same ids; one older than the held
 * revisions reach is a reset. */
Test(streams, a_last_event_id_from_before_a_restart_replays_the_missed_changes, .timeout = 60)
{
	char state_dir[] = "/tmp/splitkd-streams-state-XXXXXX", cmd[96];
	const char *more[] = {"--state-dir", state_dir, "--revisions", "3", NULL};
	const char *again[] = {"--access-log", "off", "--catalog", NULL, "--state-dir", state_dir,
			       "--revisions", "3", NULL};
	struct daemon d;
	char path[64], id[64], digest[64], got[64];
	struct stream_read s;
	const char *at;
	int status;

	cr_assert_not_null(mkdtemp(state_dir));
	start_with_catalog(&d, path, more);
	stream_connect(&s, d.port, NULL);
	at = stream_until(&s, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	event_id(&s, at, id, sizeof(id)); /* 1@<boot> */
	close(s.fd);
	for (int i = 0; i < 2; i++) {
		change_catalog(&d, path, i, digest); /* seqs 2 and 3 */
	}
	kill(d.pid, SIGKILL);
	status = daemon_wait(&d, 5000);
	cr_assert(status != -1 && WIFSIGNALED(status));
	again[3] = path;
	daemon_start(&d, again);
	stream_connect(&s, d.port, id);
	at = s.buf;
	for (int seq = 2; seq <= 3; seq++) {
		at = stream_until(&s, (size_t)(at - s.buf) + 1, "event: catalog\n", 2000);
		cr_assert_not_null(at, "change %d not replayed after the restart: %s", seq, s.buf);
		event_id(&s, at, got, sizeof(got));
		cr_assert_eq(strtol(got, NULL, 10), seq, "id %s", got);
		cr_assert_str_eq(strchr(got, '@'), strchr(id, '@'), "the boot part goes on: %s, %s", got, id);
	}
	cr_assert_not_null(stream_until(&s, (size_t)(at - s.buf), "}\n\n", 2000));
	cr_assert(strstr(s.buf, "event: reset") == NULL, "%s", s.buf);
	close(s.fd);
	/* an id before the oldest held change: a reset naming the current seq */
	snprintf(got, sizeof(got), "0%s", strchr(id, '@'));
	stream_connect(&s, d.port, got);
	at = stream_until(&s, 0, "event: reset\n", 2000);
	cr_assert_not_null(at, "no reset for %s: %s", got, s.buf);
	close(s.fd);
	daemon_finish(&d);
	unlink(path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state_dir);
	cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------ a stream per catalog */

/* A catalog of one target whose sm_count is `sms`: each value another
 * revision. */
static void write_catalog_sms(const char *path, unsigned sms)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "{\"targets\":[{\"name\":\"t\",\"sm_count\":%u,\"attn_decode_splitk\":\"auto\"}],"
		 "\"models\":[{\"name\":\"m\",\"num_q_heads\":24}]}", sms);
	replace_file(path, text);
}

/* A --catalog-dir of a.json (the default), b.json and c.json. */
static void catalog_dir(char *dir, char paths[3][96])
{
	cr_assert_not_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(paths[i], 96, "%s/%c.json", dir, 'a' + i);
		write_catalog_sms(paths[i], 132);
	}
}

static void remove_dir(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A change to b.json is on b's stream and on the stream of every catalog
 * (naming b) within 2 s, and not on c's; an unknown name is a 404 with a
 * suggestion; c.json removed ends c's stream with a removed event, and
 * the stream of every catalog says so and goes on. */
Test(streams, each_catalog_streams_its_own_changes_and_star_streams_all, .timeout = 60)
{
	char dir[] = "/tmp/splitkd-catstreams-XXXXXX", paths[3][96];
	const char *args[] = {"--catalog-dir", dir, "--access-log", "off", NULL};
	struct stream_read b, all, c, plain;
	struct daemon d;
	const char *at;
	cJSON *data;
	struct reply r;

	catalog_dir(dir, paths);
	daemon_start(&d, args);
	stream_connect_to(&b, d.port, "/v1/events?catalog=b", NULL, "HTTP/1.1");
	stream_connect_to(&all, d.port, "/v1/events?catalog=*", NULL, "HTTP/1.1");
	stream_connect_to(&c, d.port, "/v1/events?catalog=c", NULL, "HTTP/1.1");
	stream_connect(&plain, d.port, NULL);
	cr_assert_not_null(stream_until(&b, 0, "event: hello\n", 2000));
	at = stream_until(&all, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	data = event_data(at);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(data, "catalogs")), 3, "%s", all.buf);
	cJSON_Delete(data);
	cr_assert_not_null(stream_until(&c, 0, "event: hello\n", 2000));
	cr_assert_not_null(stream_until(&plain, 0, "event: hello\n", 2000));
	write_catalog_sms(paths[1], 20);
	at = stream_until(&b, 0, "event: catalog\n", 2000);
	cr_assert_not_null(at, "b's change not on b's stream within 2 s: %s", b.buf);
	data = event_data(at);
	cr_assert_null(cJSON_GetObjectItem(data, "catalog_name"), "as the default's stream: %s",
		       b.buf);
	cJSON_Delete(data);
	at = stream_until(&all, 0, "event: catalog\n", 2000);
	cr_assert_not_null(at, "b's change not on * within 2 s: %s", all.buf);
	data = event_data(at);
	cr_assert_str_eq(jstr(data, "catalog_name"), "b");
	cJSON_Delete(data);
	cr_assert_null(stream_until(&c, 0, "event: catalog\n", 1000), "c heard b's: %s", c.buf);
	cr_assert_null(stream_until(&plain, 0, "event: catalog\n", 10), "a heard b's: %s",
		       plain.buf);
	r = http(&d, "GET", "/v1/events?catalog=bb", NULL, NULL);
	expect_problem(&r, 404, "unknown-catalog");
	cr_assert_str_eq(jstr(r.json, "suggestion"), "b");
	reply_free(&r);
	cr_assert_eq(unlink(paths[2]), 0);
	at = stream_until(&c, 0, "event: removed\n", 3000);
	cr_assert_not_null(at, "c's stream not told of its removal: %s", c.buf);
	stream_until(&c, 0, "never", 2000);
	cr_assert(c.eof, "c's stream goes on after its removal: %s", c.buf);
	at = stream_until(&all, 0, "event: removed\n", 2000);
	cr_assert_not_null(at, "* not told of c's removal: %s", all.buf);
	data = event_data(at);
	cr_assert_str_eq(jstr(data, "catalog_name"), "c");
	cJSON_Delete(data);
	cr_assert(!all.eof);
	close(b.fd);
	close(all.fd);
	close(c.fd);
	close(plain.fd);
	daemon_finish(&d);
	remove_dir(dir);
}

/* --state-dir: a Last-Event-ID of b's stream from before a restart
 * replays b's change under the same id; the stream of every catalog goes
 * on numbering past what it said (an id from before is a reset, never
 * another event's). */
Test(streams, a_catalogs_stream_replays_across_a_restart, .timeout = 60)
{
	char dir[] = "/tmp/splitkd-catstreams-XXXXXX", paths[3][96];
	char state_dir[] = "/tmp/splitkd-catstreams-state-XXXXXX";
	const char *args[] = {"--catalog-dir", dir, "--state-dir", state_dir, "--access-log", "off",
			      NULL};
	char hello[64], change[64], star[64], got[64];
	struct stream_read b, all;
	struct daemon d;
	const char *at;

	catalog_dir(dir, paths);
	cr_assert_not_null(mkdtemp(state_dir));
	daemon_start(&d, args);
	stream_connect_to(&b, d.port, "/v1/events?catalog=b", NULL, "HTTP/1.1");
	stream_connect_to(&all, d.port, "/v1/events?catalog=*", NULL, "HTTP/1.1");
	at = stream_until(&b, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	event_id(&b, at, hello, sizeof(hello));
	write_catalog_sms(paths[1], 20);
	at = stream_until(&b, 0, "event: catalog\n", 3000);
	cr_assert_not_null(at, "%s", b.buf);
	event_id(&b, at, change, sizeof(change));
	at = stream_until(&all, 0, "event: catalog\n", 2000);
	cr_assert_not_null(at, "%s", all.buf);
	event_id(&all, at, star, sizeof(star));
	close(b.fd);
	close(all.fd);
	cr_assert_eq(daemon_stop(&d), 0);
	daemon_start(&d, args);
	stream_connect_to(&b, d.port, "/v1/events?catalog=b", hello, "HTTP/1.1");
	at = stream_until(&b, 0, "event: catalog\n", 2000);
	cr_assert_not_null(at, "b's change not replayed after the restart: %s", b.buf);
	event_id(&b, at, got, sizeof(got));
	cr_assert_str_eq(got, change);
	cr_assert(strstr(b.buf, "event: reset") == NULL, "%s", b.buf);
	close(b.fd);
	/* a's stream knows no id of b's */
	stream_connect(&b, d.port, change);
	cr_assert_not_null(stream_until(&b, 0, "event: reset\n", 2000), "%s", b.buf);
	close(b.fd);
	stream_connect_to(&all, d.port, "/v1/events?catalog=*", star, "HTTP/1.1");
	at = stream_until(&all, 0, "event: reset\n", 2000);
	cr_assert_not_null(at, "%s", all.buf);
	event_id(&all, at, got, sizeof(got));
	cr_assert_gt(strtol(got, NULL, 10), strtol(star, NULL, 10), "%s after %s", got, star);
	cr_assert_str_eq(strchr(got, '@'), strchr(star, '@'));
	close(all.fd);
	daemon_finish(&d);
	remove_dir(dir);
	remove_dir(state_dir);
}

/* The views a reader loops over, and what each says is b's revision. */
enum view { VIEW_DECISION, VIEW_STATUS, VIEW_METRICS, VIEW_REVISIONS, VIEW_COUNT };

static void view_revision(CURL *curl, const struct daemon *d, enum view v, char *out, size_t cap)
{
	static const char *const paths[VIEW_COUNT] = {
		"/v1/splits?target=t&model=m&catalog=b", "/v1/status?catalog=b", "/metrics",
		"/v1/revisions?catalog=b"};
	struct reply r = http_on(curl, d, "GET", paths[v], NULL, NULL, 0);
	const char *at;

	cr_assert_eq(r.status, 200, "%s: %s", paths[v], r.body);
	out[0] = '\0';
	if (v == VIEW_METRICS) {
		at = strstr(r.body, "splitkd_catalog_info{catalog=\"b\",digest=\"");
		cr_assert_not_null(at, "%s", r.body);
		at += strlen("splitkd_catalog_info{catalog=\"b\",digest=\"");
		snprintf(out, cap, "%.*s", (int)(strchr(at, '"') - at), at);
	} else {
		snprintf(out, cap, "%s", jstr(r.json, v == VIEW_DECISION ? "catalog"
						    : v == VIEW_STATUS ? "revision" : "current"));
	}
	reply_free(&r);
}

#define PUBLISH_CHANGES 12
#define PUBLISH_READS 4000

struct reader {
	const struct daemon *d;
	atomic_bool stop;
	char seen[PUBLISH_READS][32]; /* each read's revision, in order */
	size_t num_seen;
};

static void *read_views(void *cls)
{
	struct reader *rd = cls;
	CURL *curl = curl_easy_init();

	while (!atomic_load(&rd->stop) && rd->num_seen + VIEW_COUNT <= PUBLISH_READS) {
		for (int v = 0; v < VIEW_COUNT; v++) {
			view_revision(curl, rd->d, (enum view)v, rd->seen[rd->num_seen++], 32);
		}
	}
	curl_easy_cleanup(curl);
	return NULL;
}

/* 12 changes of b while a reader loops decision -> status -> metrics ->
 * revisions: no view read later shows an older revision than one read
 * before it; and when b's stream tells of a change, the decision and the
 * status already answer it (no sleep between the event and the asks). */
Test(streams, a_change_is_in_every_view_before_its_event, .timeout = 120)
{
	char dir[] = "/tmp/splitkd-catstreams-XXXXXX", paths[3][96];
	const char *args[] = {"--catalog-dir", dir, "--access-log", "off", NULL};
	char order[PUBLISH_CHANGES + 1][32], now[32];
	static struct reader rd;
	struct stream_read b;
	struct daemon d;
	pthread_t reader;
	const char *at;
	size_t from = 0;
	long last = 0;

	catalog_dir(dir, paths);
	daemon_start(&d, args);
	stream_connect_to(&b, d.port, "/v1/events?catalog=b", NULL, "HTTP/1.1");
	at = stream_until(&b, 0, "event: hello\n", 2000);
	cr_assert_not_null(at);
	cJSON *hello = event_data(at);
	snprintf(order[0], sizeof(order[0]), "%s", jstr(hello, "revision"));
	cJSON_Delete(hello);
	memset(&rd, 0, sizeof(rd));
	rd.d = &d;
	cr_assert_eq(pthread_create(&reader, NULL, read_views, &rd), 0);
	for (int i = 1; i <= PUBLISH_CHANGES; i++) {
		CURL *curl = curl_easy_init();
		cJSON *data;

		write_catalog_sms(paths[1], 100u + (unsigned)i);
		at = stream_until(&b, from, "event: catalog\n", 5000);
		cr_assert_not_null(at, "change %d not streamed: %s", i, b.buf + from);
		cr_assert_not_null(stream_until(&b, (size_t)(at - b.buf), "}\n\n", 2000));
		from = (size_t)(at - b.buf) + 1;
		data = event_data(at);
		snprintf(order[i], sizeof(order[i]), "%s", jstr(data, "revision"));
		cJSON_Delete(data);
		view_revision(curl, &d, VIEW_DECISION, now, sizeof(now));
		cr_assert_str_eq(now, order[i], "the decision lags its event %d", i);
		view_revision(curl, &d, VIEW_STATUS, now, sizeof(now));
		cr_assert_str_eq(now, order[i], "/v1/status lags its event %d", i);
		curl_easy_cleanup(curl);
	}
	atomic_store(&rd.stop, true);
	pthread_join(reader, NULL);
	cr_assert_gt(rd.num_seen, (size_t)4 * VIEW_COUNT, "the reader read too little");
	for (size_t k = 0; k < rd.num_seen; k++) {
		long rank = -1;

		for (int i = 0; i <= PUBLISH_CHANGES; i++) {
			if (strcmp(rd.seen[k], order[i]) == 0) {
				rank = i;
			}
		}
		cr_assert_geq(rank, 0, "read %zu names no revision written: %s", k, rd.seen[k]);
		cr_assert_geq(rank, last, "read %zu (view %zu) went back from change %ld to %ld", k,
			      k % VIEW_COUNT, last, rank);
		last = rank;
	}
	close(b.fd);
	daemon_finish(&d);
	remove_dir(dir);
}
