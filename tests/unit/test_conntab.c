/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The connection table without sockets: admission, fair reclaim, the
 * header and body deadlines, and the client accounting, driven with a
 * clock and a byte counter the test controls. Descriptors are negative
 * (never shut down for real).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "conntab.h"

#define S 1000000000ull /* a second in ns */

static struct sockaddr_in client(unsigned last_octet)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)(40000 + last_octet));
	a.sin_addr.s_addr = htonl(0x7f000000u | last_octet);
	return a;
}

static struct conntab_conn *admit(struct conntab *t, int fd, unsigned who, uint64_t now,
				  enum conntab_reason *why)
{
	struct sockaddr_in a = client(who);

	return conntab_admit(t, fd, (struct sockaddr *)&a, now, why);
}

static void table(struct conntab *t, unsigned max, unsigned per_client)
{
	struct conntab_limits l = {max, per_client, 2, 10 * S, 10 * S, 1024, false, 0};

	cr_assert_eq(conntab_init(t, &l), 0);
}

static uint64_t closed(struct conntab *t, enum conntab_reason why)
{
	return atomic_load(&t->closed[why]);
}

Test(conntab, a_full_table_refuses_a_client_that_holds_it_all)
{
	struct conntab t;
	enum conntab_reason why;

	table(&t, 4, 0);
	for (int i = 0; i < 4; i++) {
		cr_assert_not_null(admit(&t, -10 - i, 1, 1 * S, &why));
	}
	cr_assert_null(admit(&t, -20, 1, 1 * S, &why), "a client may not push out its own");
	cr_assert_eq(why, CONNTAB_REFUSED_FULL);
	cr_assert_eq(conntab_count(&t), 4);
	cr_assert_eq(closed(&t, CONNTAB_REFUSED_FULL), 1);
	conntab_cleanup(&t);
}

Test(conntab, an_idle_keep_alive_connection_gives_way_first_the_longest_idle)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *c[4], *n;

	table(&t, 4, 0);
	for (int i = 0; i < 4; i++) {
		c[i] = admit(&t, -10 - i, 1, 0, &why);
		conntab_mark(c[i], CONNTAB_REPLY, 0);
	}
	/* c[1] answered at 1 s, c[2] at 2 s; both wait for their next request */
	atomic_store(&c[1]->requests, 1);
	conntab_mark(c[1], CONNTAB_WAITING, 1 * S);
	/* at 1.5 s nothing has been idle a second, and the newcomer's client
	 * holds them all: refused */
	cr_assert_null(admit(&t, -19, 1, S + S / 2, &why));
	atomic_store(&c[2]->requests, 1);
	conntab_mark(c[2], CONNTAB_WAITING, 2 * S);
	/* at 2.5 s only c[1] has been idle a second: any client may take it */
	n = admit(&t, -20, 1, 2 * S + S / 2, &why);
	cr_assert_not_null(n);
	cr_assert(c[1]->closing && !c[2]->closing && !c[0]->closing);
	cr_assert_eq(closed(&t, CONNTAB_RECLAIMED_IDLE), 1);
	cr_assert_eq(conntab_count(&t), 4, "the reclaimed one stops counting at once");
	conntab_cleanup(&t);
}

Test(conntab, a_newcomer_takes_the_oldest_unfinished_request_of_the_heaviest_client)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *a[3], *b, *n;

	table(&t, 4, 0);
	for (int i = 0; i < 3; i++) {
		a[i] = admit(&t, -10 - i, 1, (uint64_t)i * S, &why); /* client 1: three */
	}
	b = admit(&t, -13, 2, 0, &why); /* client 2: one */
	conntab_mark(a[0], CONNTAB_REPLY, 5 * S);   /* answering, recently */
	conntab_mark(a[1], CONNTAB_HEADERS, 4 * S); /* unfinished since 4 s */
	conntab_mark(a[2], CONNTAB_HEADERS, 3 * S); /* unfinished since 3 s: the oldest */
	conntab_mark(b, CONNTAB_HEADERS, 0);
	/* client 3 is new: client 1 holds 3 > 0 + 1 */
	n = admit(&t, -20, 3, 5 * S, &why);
	cr_assert_not_null(n);
	cr_assert(a[2]->closing, "the oldest unfinished request of the heaviest client");
	cr_assert(!a[1]->closing && !a[0]->closing && !b->closing);
	cr_assert_eq(closed(&t, CONNTAB_RECLAIMED_UNFINISHED), 1);
	/* now 1 holds 2, 2 and 3 hold 1 each: a newcomer of 2 would leave it
	 * holding as many as the heaviest, so it is refused */
	cr_assert_null(admit(&t, -21, 2, 5 * S, &why));
	cr_assert_eq(why, CONNTAB_REFUSED_FULL);
	conntab_cleanup(&t);
}

Test(conntab, the_heaviest_client_is_known_after_the_last_heaviest_shrinks)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *a[3], *b[2];

	table(&t, 5, 0);
	for (int i = 0; i < 3; i++) {
		a[i] = admit(&t, -10 - i, 1, 0, &why);
	}
	b[0] = admit(&t, -13, 2, 0, &why);
	b[1] = admit(&t, -14, 2, 0, &why);
	conntab_release(&t, a[0]);
	conntab_release(&t, a[1]); /* client 1: one left; client 2 is the heaviest */
	cr_assert_not_null(admit(&t, -15, 3, 0, &why));
	cr_assert_not_null(admit(&t, -16, 4, 0, &why)); /* full again */
	cr_assert_not_null(admit(&t, -17, 5, 1 * S, &why));
	cr_assert(b[0]->closing || b[1]->closing, "client 2 held two, more than any other");
	cr_assert(!a[2]->closing);
	conntab_cleanup(&t);
}

Test(conntab, an_over_share_client_loses_even_a_busy_connection)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *c[4];

	table(&t, 4, 0);
	for (int i = 0; i < 4; i++) {
		c[i] = admit(&t, -10 - i, 1, (uint64_t)(i + 1) * S, &why);
		atomic_store(&c[i]->requests, 7);
		conntab_mark(c[i], CONNTAB_REPLY, 9 * S + S / 2); /* all answering right now */
	}
	cr_assert_not_null(admit(&t, -20, 2, 10 * S, &why));
	cr_assert(c[0]->closing, "its oldest connection");
	conntab_cleanup(&t);
}

Test(conntab, the_per_client_limit)
{
	struct conntab t;
	enum conntab_reason why;

	table(&t, 100, 2);
	cr_assert_not_null(admit(&t, -10, 1, 0, &why));
	cr_assert_not_null(admit(&t, -11, 1, 0, &why));
	cr_assert_null(admit(&t, -12, 1, 0, &why));
	cr_assert_eq(why, CONNTAB_REFUSED_PER_CLIENT);
	cr_assert_not_null(admit(&t, -13, 2, 0, &why), "another client is not held to it");
	conntab_cleanup(&t);
}

Test(conntab, release_frees_the_slot_and_the_count_once)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *c[4];

	table(&t, 4, 0);
	for (int i = 0; i < 4; i++) {
		c[i] = admit(&t, -10 - i, 1, 0, &why);
	}
	cr_assert_eq(conntab_find(&t, -12), c[2]);
	conntab_release(&t, c[2]);
	cr_assert_null(conntab_find(&t, -12));
	cr_assert_eq(conntab_count(&t), 3);
	cr_assert_not_null(admit(&t, -20, 1, 0, &why));
	/* one splitkd closed: counted off when closed, not again when released */
	atomic_store(&c[0]->requests, 1);
	conntab_mark(c[0], CONNTAB_WAITING, 0);
	cr_assert_eq(conntab_close_idle(&t, false), 1);
	cr_assert_eq(conntab_count(&t), 3);
	conntab_release(&t, c[0]);
	cr_assert_eq(conntab_count(&t), 3);
	conntab_cleanup(&t);
}

Test(conntab, connections_go_to_the_least_loaded_engine)
{
	struct conntab t;
	enum conntab_reason why;
	unsigned load[2] = {0, 0};
	struct conntab_conn *c[6];

	table(&t, 16, 0);
	for (int i = 0; i < 6; i++) {
		c[i] = admit(&t, -10 - i, 1, 0, &why);
		load[c[i]->engine]++;
	}
	cr_assert_eq(load[0], 3);
	cr_assert_eq(load[1], 3);
	/* both of engine 0's first two go: the next two land there */
	for (int i = 0; i < 6 && load[0] > 1; i++) {
		if (c[i]->engine == 0) {
			conntab_release(&t, c[i]);
			load[0]--;
		}
	}
	cr_assert_eq(admit(&t, -30, 1, 0, &why)->engine, 0);
	cr_assert_eq(admit(&t, -31, 1, 0, &why)->engine, 0);
	conntab_cleanup(&t);
}

Test(conntab, a_header_block_past_its_deadline_is_closed)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *slow, *quick;

	table(&t, 8, 0);
	slow = admit(&t, -10, 1, 0, &why);
	quick = admit(&t, -11, 1, 0, &why);
	conntab_mark(slow, CONNTAB_HEADERS, 1 * S);
	conntab_mark(quick, CONNTAB_HEADERS, 5 * S);
	cr_assert_eq(conntab_sweep(&t, 11 * S, NULL), 0, "10 s is not past 10 s");
	cr_assert_eq(conntab_sweep(&t, 11 * S + 1, NULL), 1);
	cr_assert(slow->closing && !quick->closing);
	cr_assert_eq(closed(&t, CONNTAB_HEADER_TIMEOUT), 1);
	conntab_cleanup(&t);
}

Test(conntab, a_phase_stamped_after_the_clock_was_read_is_no_time_at_all)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *c;

	table(&t, 8, 0);
	c = admit(&t, -10, 1, 0, &why);
	conntab_mark(c, CONNTAB_HEADERS, 5 * S); /* a worker, just after the sweep read 5 s - 1 */
	cr_assert_eq(conntab_sweep(&t, 5 * S - 1, NULL), 0);
	cr_assert(!c->closing);
	conntab_cleanup(&t);
}

Test(conntab, a_body_must_keep_the_minimum_rate)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *c;

	table(&t, 8, 0); /* 10 s, and a second more for each 1024 bytes */
	c = admit(&t, -10, 1, 0, &why);
	conntab_mark(c, CONNTAB_BODY, 0);
	atomic_store(&c->body_bytes, 5 * 1024);
	cr_assert_eq(conntab_sweep(&t, 15 * S, NULL), 0, "5 KiB bought 5 s more");
	cr_assert_eq(conntab_sweep(&t, 15 * S + 1, NULL), 1);
	cr_assert_eq(closed(&t, CONNTAB_BODY_TIMEOUT), 1);
	conntab_cleanup(&t);
}

/* The kernel's received-byte count, as the test sets it per descriptor. */
static int64_t rx_bytes[4];

static int64_t fake_rx(int fd)
{
	return rx_bytes[-10 - fd];
}

Test(conntab, a_request_line_that_dribbles_in_is_closed_an_idle_connection_is_not)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *dribble, *idle;

	table(&t, 8, 0);
	dribble = admit(&t, -10, 1, 0, &why);
	idle = admit(&t, -11, 1, 0, &why);
	rx_bytes[0] = rx_bytes[1] = 100;
	conntab_sweep(&t, 2 * S, fake_rx); /* a second of waiting: the baselines */
	rx_bytes[0] = 103;                 /* "GE" and a byte arrive on one */
	conntab_sweep(&t, 3 * S, fake_rx);
	cr_assert_eq(conntab_sweep(&t, 13 * S, fake_rx), 0, "10 s after its first byte: not past");
	cr_assert_eq(conntab_sweep(&t, 13 * S + 1, fake_rx), 1);
	cr_assert(dribble->closing && !idle->closing,
		  "a connection that sent nothing is the idle timeout's, not the header deadline's");
	conntab_cleanup(&t);
}

/* The client table against a plain model, through many admissions and
 * releases (its entries are moved on removal). */
Test(conntab, client_counts_stay_right_through_churn)
{
	struct conntab t;
	enum conntab_reason why;
	struct conntab_conn *held[64] = {0};
	unsigned owner[64], model[9] = {0};

	table(&t, 64, 0);
	srand(7);
	for (int step = 0; step < 20000; step++) {
		int i = rand() % 64;

		if (held[i] != NULL) {
			conntab_release(&t, held[i]);
			model[owner[i]]--;
			held[i] = NULL;
		} else {
			owner[i] = 1 + (unsigned)(rand() % 8);
			held[i] = admit(&t, -100 - i, owner[i], 0, &why);
			cr_assert_not_null(held[i]);
			model[owner[i]]++;
		}
		if (step % 97 == 0) {
			unsigned total = 0;

			for (size_t c = 0; c < t.client_cap; c++) {
				total += t.clients[c].count;
			}
			for (int w = 1; w <= 8; w++) {
				struct sockaddr_in a = client((unsigned)w);
				unsigned char key[16] = {0};

				key[10] = key[11] = 0xff;
				memcpy(key + 12, &a.sin_addr, 4);
				for (size_t c = 0; c < t.client_cap; c++) {
					if (t.clients[c].count != 0 && memcmp(t.clients[c].addr, key, 16) == 0) {
						cr_assert_eq(t.clients[c].count, model[w]);
					}
				}
			}
			cr_assert_eq(total, conntab_count(&t));
		}
	}
	for (int i = 0; i < 64; i++) {
		if (held[i] != NULL) {
			cr_assert_eq(t.clients[held[i]->client].count, model[owner[i]]);
		}
	}
	conntab_cleanup(&t);
}

/* Over TLS the handshake is part of the header deadline: the bytes a
 * fresh connection received in its first second count, so a handshake
 * that stalls is closed; after a request, only new bytes count again. */
Test(conntab, over_tls_a_stalled_handshake_is_closed_a_kept_alive_connection_is_not)
{
	struct conntab t;
	struct conntab_limits limits = {8, 0, 1, 10 * S, 10 * S, 1024, true, 0};
	enum conntab_reason why;
	struct conntab_conn *stalled, *silent, *kept;

	cr_assert_eq(conntab_init(&t, &limits), 0);
	stalled = admit(&t, -10, 1, 0, &why);
	silent = admit(&t, -11, 1, 0, &why);
	kept = admit(&t, -12, 1, 0, &why);
	rx_bytes[0] = 200; /* half a ClientHello, then nothing */
	rx_bytes[1] = 0;   /* connected, sent nothing */
	rx_bytes[2] = 600; /* a handshake and a request, answered */
	atomic_store(&kept->requests, 1);
	conntab_sweep(&t, 2 * S, fake_rx);
	conntab_sweep(&t, 3 * S, fake_rx);
	cr_assert_eq(conntab_sweep(&t, 13 * S, fake_rx), 0, "10 s after the bytes were seen: not past");
	cr_assert_eq(conntab_sweep(&t, 13 * S + 1, fake_rx), 1);
	cr_assert(stalled->closing, "the stalled handshake is the header deadline's");
	cr_assert(!silent->closing && !kept->closing,
		  "a silent connection and an idle kept-alive one are the idle timeout's");
	cr_assert_eq(closed(&t, CONNTAB_HEADER_TIMEOUT), 1);
	conntab_cleanup(&t);
}

/* ---- the held queue (back-pressure while the table is full) ---- */

static void held_table(struct conntab *t, unsigned max, unsigned max_held)
{
	struct conntab_limits l = {max, 0, 2, 10 * S, 10 * S, 1024, false, max_held};

	cr_assert_eq(conntab_init(t, &l), 0);
}

static enum conntab_entry enter(struct conntab *t, int fd, unsigned who, uint64_t now,
				struct conntab_conn **c)
{
	struct sockaddr_in a = client(who);
	enum conntab_reason why;

	return conntab_enter(t, fd, (struct sockaddr *)&a, sizeof(a), now, c, &why);
}

static void kicked(void *cls)
{
	(*(unsigned *)cls)++;
}

Test(conntab, a_newcomer_of_a_full_table_is_held_and_admitted_when_a_slot_frees)
{
	struct conntab t;
	struct conntab_conn *c[2], *n;
	struct conntab_held h;
	unsigned kicks = 0;
	size_t held;

	held_table(&t, 2, 4);
	conntab_on_room(&t, kicked, &kicks);
	cr_assert_eq(enter(&t, -10, 1, 1 * S, &c[0]), CONNTAB_ENTERED);
	cr_assert_eq(enter(&t, -11, 1, 1 * S, &c[1]), CONNTAB_ENTERED);
	cr_assert_eq(enter(&t, -12, 1, 1 * S, &n), CONNTAB_HELD, "held, not refused");
	cr_assert_null(n);
	cr_assert_eq(closed(&t, CONNTAB_REFUSED_FULL), 0, "a held one is not refused");
	cr_assert_eq(conntab_next_held(&t, 1 * S, &h, &n), CONNTAB_HELD, "no room yet");
	cr_assert(conntab_may_accept(&t, 1 * S, &held));
	cr_assert_eq(held, 1);
	cr_assert_eq(kicks, 0);
	conntab_release(&t, c[0]); /* a stream leaves the table */
	cr_assert_eq(kicks, 1, "a freed slot with someone held wakes the accept");
	cr_assert_eq(conntab_next_held(&t, 1 * S, &h, &n), CONNTAB_ENTERED);
	cr_assert_eq(h.fd, -12);
	cr_assert_not_null(n);
	cr_assert_eq(n->fd, -12);
	cr_assert_eq(conntab_next_held(&t, 1 * S, &h, &n), CONNTAB_NONE_HELD);
	conntab_release(&t, c[1]);
	cr_assert_eq(kicks, 1, "nothing held: no kick");
	conntab_cleanup(&t);
}

Test(conntab, a_full_hold_stops_the_accept_unless_that_would_starve_others)
{
	struct conntab t;
	struct conntab_conn *c, *n;
	struct conntab_held h;
	size_t held;

	held_table(&t, 1, 2);
	cr_assert_eq(enter(&t, -10, 1, 0, &c), CONNTAB_ENTERED);
	cr_assert_eq(enter(&t, -11, 1, 0, &n), CONNTAB_HELD);
	cr_assert_eq(enter(&t, -12, 1, 0, &n), CONNTAB_HOLD_FULL);
	/* the table's one connection is a first request in progress: it is
	 * about to move, so the rest wait in the listen queue */
	cr_assert(!conntab_may_accept(&t, 0, &held), "full: the rest wait in the listen queue");
	cr_assert(!conntab_may_accept(&t, S / 2, &held));
	/* now it has answered and is kept alive: it will not move for the
	 * held, and a newcomer of another client would take its place, so the
	 * accept goes on and refuses at once what it cannot take, as before */
	atomic_store(&c->requests, 1);
	conntab_mark(c, CONNTAB_REPLY, S / 2);
	cr_assert(conntab_may_accept(&t, S / 2 + CONNTAB_SLOW_MS * 1000000ull, &held));
	cr_assert_eq(held, 2);
	cr_assert_eq(enter(&t, -13, 1, S, &n), CONNTAB_REFUSED);
	cr_assert_eq(closed(&t, CONNTAB_REFUSED_FULL), 1);
	/* a slot frees: the first held comes in, first come first served */
	conntab_release(&t, c);
	cr_assert_eq(conntab_next_held(&t, S, &h, &n), CONNTAB_ENTERED);
	cr_assert_eq(h.fd, -11);
	cr_assert(conntab_may_accept(&t, S, &held), "room in the hold again");
	cr_assert_eq(held, 1);
	conntab_cleanup(&t);
}

Test(conntab, a_held_connection_is_closed_past_the_header_deadline)
{
	struct conntab t;
	struct conntab_conn *c, *n;
	struct conntab_held h;

	held_table(&t, 1, 4);
	cr_assert_eq(enter(&t, -10, 1, 0, &c), CONNTAB_ENTERED);
	cr_assert_eq(enter(&t, -11, 1, 1 * S, &n), CONNTAB_HELD);
	cr_assert_eq(conntab_next_held(&t, 11 * S, &h, &n), CONNTAB_HELD, "10 s: not past it");
	cr_assert_eq(conntab_next_held(&t, 11 * S + 1, &h, &n), CONNTAB_REFUSED);
	cr_assert_eq(h.fd, -11, "the caller closes it");
	cr_assert_eq(closed(&t, CONNTAB_REFUSED_FULL), 1);
	cr_assert_eq(conntab_next_held(&t, 11 * S + 1, &h, &n), CONNTAB_NONE_HELD);
	conntab_cleanup(&t);
}

/* A burst from one client fills the table with first requests that are
 * about to be answered: a newcomer from another client takes none of
 * them (each would be closed unanswered), it is held at the front and
 * comes in at the next freed slot; once a request has stalled, it takes
 * that one's place, as before. */
Test(conntab, a_burst_in_progress_is_spared_another_client_waits_at_the_front)
{
	struct conntab t;
	struct conntab_conn *c[3], *n;
	struct conntab_held h;

	held_table(&t, 3, 8);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(enter(&t, -10 - i, 1, 0, &c[i]), CONNTAB_ENTERED);
	}
	cr_assert_eq(enter(&t, -20, 1, 0, &n), CONNTAB_HELD); /* the burst's own, at the back */
	conntab_mark(c[0], CONNTAB_HEADERS, 10 * 1000000ull);
	conntab_mark(c[1], CONNTAB_REPLY, 15 * 1000000ull);
	/* c[2] waits for its request to be read, 20 ms after its accept */
	cr_assert_eq(enter(&t, -30, 2, 20 * 1000000ull, &n), CONNTAB_HELD, "nothing has stalled");
	cr_assert(!c[0]->closing && !c[1]->closing && !c[2]->closing);
	cr_assert_eq(conntab_next_held(&t, 25 * 1000000ull, &h, &n), CONNTAB_HELD);
	/* the header block of c[0] has now arrived for CONNTAB_SLOW_MS */
	cr_assert_eq(conntab_next_held(&t, (10 + CONNTAB_SLOW_MS) * 1000000ull, &h, &n),
		     CONNTAB_ENTERED);
	cr_assert_eq(h.fd, -30, "the other client's, from the front");
	cr_assert(c[0]->closing && !c[1]->closing && !c[2]->closing);
	cr_assert_eq(closed(&t, CONNTAB_RECLAIMED_UNFINISHED), 1);
	/* the burst's own still waits for a slot of its own client's */
	cr_assert_eq(conntab_next_held(&t, S / 2, &h, &n), CONNTAB_HELD);
	conntab_release(&t, c[1]);
	cr_assert_eq(conntab_next_held(&t, S / 2, &h, &n), CONNTAB_ENTERED);
	cr_assert_eq(h.fd, -20);
	conntab_cleanup(&t);
}
