/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The change streams' hub (server/stream.c) through its own API, without
 * libmicrohttpd: a fake engine records every suspend and resume, sockets
 * are socketpairs. What a stream says first (hello, the replay of a
 * Last-Event-ID, a reset), a change rendered once and read by every
 * stream, a text that outlives its place in the history, a stream that
 * fell behind, heartbeats from the tick (resumed, or written straight to
 * a direct stream's socket), a client that left, the cap and the drain.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "catalog.h"
#include "listener.h"
#include "stream.h"

/* A connection as the fake engine sees it. Its send takes `take` bytes
 * of each (0: all of them) into sent, or fails with `fail` (0: never). */
struct fake_conn {
	int suspends, resumes, cuts, sends;
	bool suspended;
	size_t take;
	int fail;
	char sent[256];
	size_t sent_len;
};

static void fake_suspend(void *conn)
{
	struct fake_conn *c = conn;

	cr_assert(!c->suspended, "suspended twice");
	c->suspended = true;
	c->suspends++;
}

static void fake_resume(void *conn)
{
	struct fake_conn *c = conn;

	cr_assert(c->suspended, "resumed while not suspended");
	c->suspended = false;
	c->resumes++;
}

static void fake_cut(void *conn, int fd)
{
	struct fake_conn *c = conn;

	(void)fd;
	c->cuts++;
}

static ssize_t fake_send(void *conn, int fd, const char *bytes, size_t len)
{
	struct fake_conn *c = conn;
	size_t n = c->take > 0 && c->take < len ? c->take : len;

	(void)fd;
	cr_assert(c->suspended, "written to while not suspended");
	c->sends++;
	if (c->fail != 0) {
		errno = c->fail;
		return -1;
	}
	cr_assert_lt(c->sent_len + n, sizeof(c->sent));
	memcpy(c->sent + c->sent_len, bytes, n);
	c->sent_len += n;
	c->sent[c->sent_len] = '\0';
	return (ssize_t)n;
}

static const struct stream_engine fake = {fake_suspend, fake_resume, fake_cut, fake_send};

#define HEARTBEAT_S 15u
#define HEARTBEAT_NS ((uint64_t)HEARTBEAT_S * 1000000000u)

/* A catalog whose one target has `sm` SMs: each value another digest. */
static struct catalog *catalog_of(int sm)
{
	char json[512], err[256];
	int n = snprintf(json, sizeof(json),
			 "{\"targets\":[{\"name\":\"t\",\"sm_count\":%d,\"attn_decode_splitk\":\"auto\"}],"
			 "\"models\":[{\"name\":\"m\",\"num_q_heads\":24}]}",
			 sm);
	struct catalog *c = catalog_load(json, (size_t)n, err, sizeof(err));

	cr_assert_not_null(c, "%s", err);
	return c;
}

static struct stream_hub hub;
static struct catalog *cats[8]; /* cats[0] is served at start */
static unsigned changes;        /* made by change() */

static void start(unsigned max_streams, unsigned depth)
{
	for (int i = 0; i < 8; i++) {
		cats[i] = catalog_of(20 + 4 * i);
	}
	changes = 0;
	cr_assert_eq(stream_hub_init(&hub, cats[0], max_streams, HEARTBEAT_S, depth, &fake), 0);
}

static void stop(void)
{
	stream_hub_cleanup(&hub);
	for (int i = 0; i < 8; i++) {
		catalog_free(cats[i]);
	}
}

/* The next catalog, as a reload swaps it in. */
static void change(void)
{
	cr_assert_lt(changes + 1, 8u);
	stream_catalog_changed(&hub, cats[changes], cats[changes + 1]);
	changes++;
}

/* What a stream says until it has nothing more (it is then suspended),
 * `step` bytes a read at most; the text is NUL-terminated in out. Returns
 * the last read's result: 0 (idle), STREAM_READ_END or STREAM_READ_GONE. */
static ssize_t drain_stream(struct stream *s, char *out, size_t cap, size_t step, uint64_t now)
{
	size_t len = 0;
	ssize_t n;

	for (;;) {
		size_t room = cap - 1 - len < step ? cap - 1 - len : step;

		cr_assert_gt(room, 0u, "more than %zu bytes", cap);
		n = stream_read(s, out + len, room, now);
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
	}
	out[len] = '\0';
	return n;
}

static struct stream *join_as(struct fake_conn *c, int fd, bool direct, const char *last_id)
{
	enum stream_open_status st;
	struct stream *s = stream_join(&hub, c, fd, direct, last_id, &st);

	cr_assert_eq(st, STREAM_OPENED);
	cr_assert_not_null(s);
	return s;
}

/* A stream resumed for its heartbeats, as over TLS or HTTP/1.0. */
static struct stream *join(struct fake_conn *c, int fd, const char *last_id)
{
	return join_as(c, fd, false, last_id);
}

static char text[65536], other[65536];

/* Two streams (on c[0], c[1]; no socket) past their hello, suspended. */
static void two_idle(struct fake_conn c[2], struct stream **a, struct stream **b)
{
	*a = join(&c[0], -1, NULL);
	*b = join(&c[1], -1, NULL);
	drain_stream(*a, text, sizeof(text), 4096, listener_now_ns());
	drain_stream(*b, text, sizeof(text), 4096, listener_now_ns());
}

/* Both leave, and the hub goes. */
static void two_leave(struct stream *a, struct stream *b)
{
	stream_leave(a);
	stream_leave(b);
	cr_assert_eq(atomic_load(&hub.open), 0u);
	stop();
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

Test(stream, a_new_stream_says_retry_and_hello_then_suspends)
{
	struct fake_conn c = {0};
	struct stream *s;
	char id[64];

	start(4, 8);
	s = join(&c, -1, NULL);
	cr_assert_eq(drain_stream(s, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert(strncmp(text, "retry: ", 7) == 0, "%s", text);
	cr_assert_eq(count(text, "event: hello\n"), 1, "%s", text);
	snprintf(id, sizeof(id), "id: 1@%s\n", hub.boot);
	cr_assert_not_null(strstr(text, id), "%s", text);
	cr_assert(c.suspended && c.suspends == 1);
	cr_assert_eq(atomic_load(&hub.open), 1u);
	stream_leave(s);
	cr_assert_eq(atomic_load(&hub.open), 0u);
	stop();
}

Test(stream, a_change_wakes_every_stream_and_each_reads_the_same_bytes)
{
	struct fake_conn c[3] = {{0}};
	struct stream *s[3];
	char id[64];

	start(4, 8);
	for (int i = 0; i < 3; i++) {
		s[i] = join(&c[i], -1, NULL);
		drain_stream(s[i], text, sizeof(text), 4096, listener_now_ns());
	}
	/* the same catalog again is no change: nobody is woken */
	stream_catalog_changed(&hub, cats[0], cats[0]);
	for (int i = 0; i < 3; i++) {
		cr_assert(c[i].suspended && c[i].resumes == 0);
	}
	change();
	snprintf(id, sizeof(id), "id: 2@%s\nevent: catalog\n", hub.boot);
	for (int i = 0; i < 3; i++) {
		cr_assert(!c[i].suspended && c[i].resumes == 1, "stream %d not woken", i);
		/* odd read sizes: a change split over reads is the same bytes */
		cr_assert_eq(drain_stream(s[i], i == 0 ? other : text, sizeof(text), i == 0 ? 4096 : 7 + i,
					  listener_now_ns()),
			     0);
		if (i > 0) {
			cr_assert_str_eq(text, other);
		}
	}
	cr_assert_not_null(strstr(other, id), "%s", other);
	cr_assert_eq(count(other, "event: catalog\n"), 1);
	cr_assert_not_null(strstr(other, "refetchEvaluation"), "%s", other);
	for (int i = 0; i < 3; i++) {
		stream_leave(s[i]);
	}
	stop();
}

Test(stream, a_last_event_id_replays_exactly_the_changes_since)
{
	struct fake_conn c = {0};
	struct stream *s;
	char last[64], want[64];

	start(4, 8);
	change();
	change();
	change(); /* seq 4 now */
	snprintf(last, sizeof(last), "2@%s", hub.boot);
	s = join(&c, -1, last);
	cr_assert_eq(drain_stream(s, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert_eq(count(text, "event: hello"), 0, "%s", text);
	cr_assert_eq(count(text, "event: reset"), 0, "%s", text);
	cr_assert_eq(count(text, "event: catalog\n"), 2, "%s", text);
	for (int seq = 3; seq <= 4; seq++) {
		snprintf(want, sizeof(want), "id: %d@%s\n", seq, hub.boot);
		cr_assert_not_null(strstr(text, want), "no %s in %s", want, text);
	}
	snprintf(want, sizeof(want), "id: 2@%s\n", hub.boot);
	cr_assert_null(strstr(text, want), "an event it had seen: %s", text);
	stream_leave(s);
	/* the current id: nothing to replay, only the preamble */
	snprintf(last, sizeof(last), "4@%s", hub.boot);
	s = join(&c, -1, last);
	c.suspended = false;
	cr_assert_eq(drain_stream(s, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert(strncmp(text, "retry: ", 7) == 0 && strstr(text, "event:") == NULL, "%s", text);
	stream_leave(s);
	stop();
}

Test(stream, an_id_out_of_reach_or_foreign_is_a_reset)
{
	const char *ids[] = {"1@%s", "9@%s", "1@00000000", "garbage"};
	struct fake_conn c = {0};

	start(4, 2);
	change();
	change();
	change(); /* seq 4; depth 2 holds 3 and 4: from 1, change 2 is out of reach */
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char last[64];
		struct stream *s;

		snprintf(last, sizeof(last), ids[i], hub.boot);
		if (strcmp(last, "1@00000000") == 0 && strcmp(hub.boot, "00000000") == 0) {
			continue; /* the one boot it would not be foreign to */
		}
		c.suspended = false;
		s = join(&c, -1, last);
		cr_assert_eq(drain_stream(s, text, sizeof(text), 4096, listener_now_ns()), 0);
		cr_assert_eq(count(text, "event: reset\n"), 1, "%s: %s", last, text);
		cr_assert_eq(count(text, "event: catalog"), 0, "%s: %s", last, text);
		stream_leave(s);
	}
	stop();
}

Test(stream, a_stream_that_fell_behind_the_history_gets_a_reset_not_the_changes)
{
	struct fake_conn c[2] = {{0}};
	struct stream *lag, *keep;

	start(4, 2);
	two_idle(c, &lag, &keep);
	/* one keeps up, one reads nothing while three changes pass */
	for (int i = 0; i < 3; i++) {
		change();
		cr_assert_eq(drain_stream(keep, text, sizeof(text), 4096, listener_now_ns()), 0);
		cr_assert_eq(count(text, "event: catalog\n"), 1, "%s", text);
	}
	cr_assert_eq(drain_stream(lag, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert_eq(count(text, "event: reset\n"), 1, "%s", text);
	cr_assert_eq(count(text, "event: catalog"), 0, "%s", text);
	/* and after it, it is current: the next change is a change again */
	change();
	cr_assert_eq(drain_stream(lag, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert_eq(count(text, "event: catalog\n"), 1, "%s", text);
	two_leave(lag, keep);
}

/* A stream that has read nothing for two seconds while more than half
 * the history (--revisions 8: 4) passes it: ended, and its last id still
 * replays. `lag` last read 2 s ago (the grace is 1 s), `keep` now. */
static void five_pass_one(struct fake_conn c[2], struct stream **lag, struct stream **keep,
			  char *id, size_t cap)
{
	const char *at;

	start(4, 8);
	*lag = join(&c[0], -1, NULL);
	*keep = join(&c[1], -1, NULL);
	drain_stream(*lag, text, sizeof(text), 4096, listener_now_ns() - 2 * STREAM_CUT_GRACE_NS);
	at = strstr(text, "id: ");
	cr_assert_not_null(at, "%s", text);
	snprintf(id, cap, "%.*s", (int)strcspn(at + 4, "\n"), at + 4);
	drain_stream(*keep, other, sizeof(other), 4096, listener_now_ns());
	for (int i = 0; i < 5; i++) {
		change();
		cr_assert_eq(drain_stream(*keep, other, sizeof(other), 4096, listener_now_ns()), 0);
		cr_assert_eq(count(other, "event: catalog\n"), 1, "%s", other);
	}
	cr_assert_eq(hub.behind, 1u, "the one that reads nothing, only");
}

Test(stream, a_stream_too_far_behind_says_so_and_ends)
{
	struct fake_conn c[2] = {{0}};
	struct stream *lag, *keep;
	char id[EVENTS_ID_MAX];

	five_pass_one(c, &lag, &keep, id, sizeof(id));
	/* its client reads again: the final comment, no change, the end */
	cr_assert_eq(drain_stream(lag, text, sizeof(text), 4096, listener_now_ns()), STREAM_READ_END);
	cr_assert_str_eq(text, ": end: this stream fell behind; reconnect with Last-Event-ID\n\n");
	cr_assert_eq(c[0].cuts, 0);
	two_leave(lag, keep);
}

Test(stream, a_stream_that_still_reads_nothing_is_cut_and_its_id_replays)
{
	struct fake_conn c[3] = {{0}};
	struct stream *lag, *keep, *back;
	char id[EVENTS_ID_MAX];
	uint64_t now = listener_now_ns();

	five_pass_one(c, &lag, &keep, id, sizeof(id));
	stream_tick(&hub, now);
	cr_assert_eq(c[0].cuts, 0, "cut within the grace");
	stream_tick(&hub, now + STREAM_CUT_GRACE_NS + 1);
	stream_tick(&hub, now + 2 * STREAM_CUT_GRACE_NS + 1);
	cr_assert_eq(c[0].cuts, 1);
	cr_assert_eq(c[1].cuts, 0);
	cr_assert_eq(hub.behind, 0u);
	stream_leave(lag); /* the engine closed it */
	back = join(&c[2], -1, id);
	cr_assert_eq(drain_stream(back, text, sizeof(text), 4096, listener_now_ns()), 0);
	cr_assert_eq(count(text, "event: catalog\n"), 5, "%s", text);
	cr_assert_eq(count(text, "event: reset"), 0, "%s", text);
	two_leave(back, keep);
}

/* A stream half-way through a change keeps its bytes when the history
 * lets that change go (depth 1: the next change takes its place). */
Test(stream, a_change_being_sent_outlives_its_place_in_the_history)
{
	struct fake_conn c[2] = {{0}};
	struct stream *slow, *fast;
	size_t got = 0;
	ssize_t n;

	start(4, 1);
	two_idle(c, &slow, &fast);
	change();
	drain_stream(fast, other, sizeof(other), 4096, listener_now_ns()); /* change 2, whole */
	n = stream_read(slow, text, 10, listener_now_ns());
	cr_assert_eq(n, 10);
	got = 10;
	change(); /* change 3 replaces change 2 in the history */
	while ((n = stream_read(slow, text + got, 10, listener_now_ns())) > 0 &&
	       got + (size_t)n < strlen(other)) {
		got += (size_t)n;
	}
	cr_assert_gt(n, 0);
	got += (size_t)n;
	cr_assert_eq(got, strlen(other));
	text[got] = '\0';
	cr_assert_str_eq(text, other, "change 2 as the slow stream read it");
	two_leave(slow, fast);
}

Test(stream, the_tick_wakes_only_the_streams_whose_heartbeat_is_due)
{
	struct fake_conn c[2] = {{0}};
	struct stream *early, *late;
	uint64_t t0 = listener_now_ns() + 1000u;

	start(4, 8);
	early = join(&c[0], -1, NULL);
	late = join(&c[1], -1, NULL);
	drain_stream(early, text, sizeof(text), 4096, t0);
	drain_stream(late, text, sizeof(text), 4096, t0 + HEARTBEAT_NS / 2);
	stream_tick(&hub, t0 + HEARTBEAT_NS - 1);
	cr_assert(c[0].suspended && c[1].suspended, "woken before a heartbeat is due");
	stream_tick(&hub, t0 + HEARTBEAT_NS);
	cr_assert(!c[0].suspended && c[0].resumes == 1);
	cr_assert(c[1].suspended && c[1].resumes == 0, "woken with half its heartbeat to go");
	cr_assert_eq(drain_stream(early, text, sizeof(text), 4096, t0 + HEARTBEAT_NS), 0);
	cr_assert(text[0] == ':' && strstr(text, "event:") == NULL, "not a comment: %s", text);
	/* the early one wrote last now: the late one is due first */
	stream_tick(&hub, t0 + HEARTBEAT_NS + HEARTBEAT_NS / 2);
	cr_assert(c[0].suspended && !c[1].suspended);
	two_leave(early, late);
}

/* What one HTTP/1.1 chunk at `p` carries (its size line, its bytes and
 * its CRLF are all there), into out; returns where the next starts. */
static const char *one_chunk(const char *p, char *out, size_t cap)
{
	char *end;
	unsigned long n = strtoul(p, &end, 16);

	cr_assert(end != p && strncmp(end, "\r\n", 2) == 0, "no chunk size line: %s", p);
	cr_assert_lt(n, cap);
	cr_assert_geq(strlen(end + 2), n + 2, "a torn chunk: %s", p);
	memcpy(out, end + 2, n);
	out[n] = '\0';
	cr_assert(strncmp(end + 2 + n, "\r\n", 2) == 0, "no CRLF after the chunk: %s", p);
	return end + 2 + n + 2;
}

Test(stream, a_direct_streams_heartbeat_is_one_chunk_on_its_socket_without_a_resume)
{
	struct fake_conn c[2] = {{0}};
	struct stream *direct, *resumed;
	uint64_t t0 = listener_now_ns() + 1000u;
	char beat[64], got[64];
	const char *next;
	int a[2], b[2];

	start(4, 8);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	direct = join_as(&c[0], a[0], true, NULL);
	resumed = join(&c[1], b[0], NULL);
	drain_stream(direct, text, sizeof(text), 4096, t0);
	drain_stream(resumed, text, sizeof(text), 4096, t0);
	events_heartbeat(beat, sizeof(beat));
	stream_tick(&hub, t0 + HEARTBEAT_NS - 1);
	cr_assert_eq(c[0].sends, 0, "written to before its heartbeat is due");
	stream_tick(&hub, t0 + HEARTBEAT_NS);
	cr_assert(c[0].suspended && c[0].resumes == 0, "resumed for a heartbeat sent to its socket");
	cr_assert_eq(c[0].sends, 1);
	next = one_chunk(c[0].sent, got, sizeof(got));
	cr_assert_str_eq(got, beat);
	cr_assert_eq(*next, '\0', "more than one chunk: %s", c[0].sent);
	/* not a direct stream (TLS, HTTP/1.0): resumed, its callback says it */
	cr_assert(!c[1].suspended && c[1].resumes == 1 && c[1].sends == 0);
	cr_assert_eq(drain_stream(resumed, text, sizeof(text), 4096, t0 + HEARTBEAT_NS), 0);
	cr_assert_str_eq(text, beat);
	/* the heartbeat counts as its last write: the next is 15 s on */
	stream_tick(&hub, t0 + 2 * HEARTBEAT_NS - 1);
	cr_assert_eq(c[0].sends, 1, "a second heartbeat within 15 s");
	stream_tick(&hub, t0 + 2 * HEARTBEAT_NS);
	cr_assert_eq(c[0].sends, 2);
	cr_assert_eq(*one_chunk(next, got, sizeof(got)), '\0');
	cr_assert_str_eq(got, beat);
	/* a change resumes it, and its callback sends the event as before */
	change();
	cr_assert(!c[0].suspended && c[0].resumes == 1);
	cr_assert_eq(drain_stream(direct, text, sizeof(text), 4096, t0 + 2 * HEARTBEAT_NS), 0);
	cr_assert_eq(count(text, "event: catalog\n"), 1, "%s", text);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
	two_leave(direct, resumed);
}

/* A direct stream whose heartbeat the engine's send takes `take` bytes
 * of, or fails with `fail`: resumed, and its callback then says `want`
 * (0: the heartbeat, as a resumed stream's; else a STREAM_READ_ end). */
static void a_heartbeat_not_taken_whole(size_t take, int fail, ssize_t want)
{
	struct fake_conn c = {.take = take, .fail = fail};
	struct stream *s;
	uint64_t t0 = listener_now_ns() + 1000u;
	char beat[64];
	int a[2];

	start(4, 8);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	s = join_as(&c, a[0], true, NULL);
	drain_stream(s, text, sizeof(text), 4096, t0);
	stream_tick(&hub, t0 + HEARTBEAT_NS);
	cr_assert_eq(c.sends, 1);
	cr_assert(!c.suspended && c.resumes == 1, "not resumed");
	cr_assert_eq(drain_stream(s, text, sizeof(text), 4096, t0 + HEARTBEAT_NS), want);
	if (want == 0) {
		events_heartbeat(beat, sizeof(beat));
		cr_assert_str_eq(text, beat);
	}
	close(a[0]);
	close(a[1]);
	stream_leave(s);
	stop();
}

Test(stream, a_kernel_with_no_room_for_a_heartbeat_resumes_its_stream_which_sends_it)
{
	a_heartbeat_not_taken_whole(0, EAGAIN, 0);
}

Test(stream, a_heartbeat_the_kernel_took_part_of_ends_its_stream)
{
	/* no byte may follow a torn chunk: the stream ends, its client reconnects */
	a_heartbeat_not_taken_whole(5, 0, STREAM_READ_GONE);
}

Test(stream, a_heartbeat_on_a_failed_socket_ends_its_stream)
{
	a_heartbeat_not_taken_whole(0, EPIPE, STREAM_READ_GONE);
}

/* A client that closes, resets or half-closes its end: the next tick
 * wakes its stream, which then ends; a client that stays is left be. */
static void a_client_that_leaves_ends_its_stream(int how)
{
	struct fake_conn c[2] = {{0}};
	struct stream *leaves, *stays;
	int a[2], b[2];

	start(4, 8);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	leaves = join(&c[0], a[0], NULL);
	stays = join(&c[1], b[0], NULL);
	drain_stream(leaves, text, sizeof(text), 4096, listener_now_ns());
	drain_stream(stays, text, sizeof(text), 4096, listener_now_ns());
	stream_tick(&hub, listener_now_ns());
	cr_assert(c[0].suspended && c[1].suspended, "woken with both clients there");
	if (how == SHUT_WR) {
		cr_assert_eq(shutdown(a[1], SHUT_WR), 0);
	} else {
		close(a[1]);
		a[1] = -1;
	}
	/* data from a client that stays is not a departure */
	cr_assert_eq(write(b[1], "x", 1), 1);
	stream_tick(&hub, listener_now_ns());
	cr_assert(!c[0].suspended && c[0].resumes == 1, "not woken when its client left");
	cr_assert(c[1].suspended && c[1].resumes == 0, "woken while its client is there");
	cr_assert_eq(stream_read(leaves, text, sizeof(text), listener_now_ns()), STREAM_READ_GONE);
	/* told once: a later tick wakes nothing more */
	stream_tick(&hub, listener_now_ns());
	cr_assert_eq(c[0].resumes, 1);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
	two_leave(leaves, stays);
}

Test(stream, a_client_that_closes_ends_its_stream_at_the_next_tick)
{
	a_client_that_leaves_ends_its_stream(-1);
}

Test(stream, a_client_that_half_closes_ends_its_stream_at_the_next_tick)
{
	a_client_that_leaves_ends_its_stream(SHUT_WR);
}

Test(stream, the_cap_refuses_and_a_leave_makes_room)
{
	struct fake_conn c[3] = {{0}};
	struct stream *s[2];
	enum stream_open_status st;

	start(2, 8);
	s[0] = join(&c[0], -1, NULL);
	s[1] = join(&c[1], -1, NULL);
	cr_assert_null(stream_join(&hub, &c[2], -1, false, NULL, &st));
	cr_assert_eq(st, STREAM_FULL);
	stream_leave(s[0]);
	s[0] = join(&c[2], -1, NULL);
	stream_leave(s[0]);
	stream_leave(s[1]);
	stop();
}

Test(stream, the_drain_ends_every_stream_after_what_it_has_and_opens_none)
{
	struct fake_conn c[2] = {{0}};
	struct stream *idle, *behind;
	enum stream_open_status st;

	start(4, 8);
	two_idle(c, &idle, &behind);
	change();
	cr_assert_eq(drain_stream(idle, text, sizeof(text), 4096, listener_now_ns()), 0);
	stream_close_all(&hub);
	stream_close_all(&hub); /* idempotent */
	cr_assert(!c[0].suspended && c[0].resumes == 2);
	cr_assert_eq(drain_stream(idle, text, sizeof(text), 4096, listener_now_ns()), STREAM_READ_END);
	cr_assert_str_eq(text, "");
	/* the one behind is told the change before it ends */
	cr_assert_eq(drain_stream(behind, text, sizeof(text), 4096, listener_now_ns()),
		     STREAM_READ_END);
	cr_assert_eq(count(text, "event: catalog\n"), 1, "%s", text);
	cr_assert_null(stream_join(&hub, &c[0], -1, false, NULL, &st));
	cr_assert_eq(st, STREAM_CLOSING);
	two_leave(idle, behind);
}
