/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The listener (server/listener.c) through its own API, on loopback: port
 * 0 binds a free port and says which; a port in use is an error that says
 * so (and --reuse-port shares it on purpose); an address that is no host's
 * is an error before any socket; every connect reaches on_accept with the
 * client's address; ticks come while it runs, and keep coming after it
 * stops accepting, when a new client is refused at once; the received-byte
 * count is the kernel's; close is safe after a failed open. An adopted
 * socket (a service manager's) is served as it is, is never shut, and
 * what waits in its backlog after the stop stays for the holder; only a
 * listening TCP socket is adopted. Waits are bounded by polling, never
 * asserted on wall time.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "listener.h"

struct seen {
	atomic_int accepted, ticks;
	atomic_int last_fd;
	atomic_uint peer_port;
};

static int on_accept(void *cls, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct seen *s = cls;

	cr_assert_eq(addr->sa_family, AF_INET);
	cr_assert_geq(len, sizeof(struct sockaddr_in));
	atomic_store(&s->peer_port, ntohs(((const struct sockaddr_in *)(const void *)addr)->sin_port));
	atomic_store(&s->last_fd, fd);
	atomic_fetch_add(&s->accepted, 1);
	return 0;
}

static void on_tick(void *cls, uint64_t now_ns)
{
	struct seen *s = cls;

	cr_assert_gt(now_ns, 0);
	atomic_fetch_add(&s->ticks, 1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Waits (up to 5 s, polling) until *v reaches want; returns its value. */
static int wait_for(atomic_int *v, int want)
{
	for (int i = 0; i < 500 && atomic_load(v) < want; i++) {
		sleep_ms(10);
	}
	return atomic_load(v);
}

/* A client connected to 127.0.0.1:port; its local port in *local. -1 when
 * refused. */
static int connect_to(unsigned port, unsigned *local)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	if (local != NULL) {
		cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
		*local = ntohs(a.sin_port);
	}
	return fd;
}

Test(listener, port_zero_binds_a_free_port_and_a_port_in_use_says_so)
{
	struct listener a, b, c, d;
	char err[256];

	cr_assert_eq(listener_open(&a, "127.0.0.1", 0, false, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_gt(a.port, 0);
	cr_assert_eq(listener_open(&b, "127.0.0.1", a.port, false, 0, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "Address already in use"), "%s", err);
	cr_assert_not_null(strstr(err, "--reuse-port"), "%s", err);
	listener_close(&b); /* safe after a failed open */
	listener_close(&a);

	/* both with SO_REUSEPORT: the port is shared on purpose */
	cr_assert_eq(listener_open(&c, "127.0.0.1", 0, true, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(listener_open(&d, "127.0.0.1", c.port, true, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(d.port, c.port);
	listener_close(&d);
	listener_close(&c);
}

Test(listener, an_address_that_is_no_host_s_is_an_error)
{
	static const char *const hosts[] = {"256.1.1.1", "not a host", "192.0.2.1"};
	static const char *const says[] = {"cannot resolve", "cannot resolve", "cannot listen on"};
	struct listener l;
	char err[256];

	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		cr_assert_eq(listener_open(&l, hosts[i], 0, false, 0, err, sizeof(err)), -1, "%s", hosts[i]);
		cr_assert_not_null(strstr(err, says[i]), "%s: %s", hosts[i], err);
		listener_close(&l);
	}
}

Test(listener, connects_reach_on_accept_ticks_go_on_after_accepting_stops, .timeout = 30)
{
	struct listener l;
	struct seen s = {0};
	char err[256];
	unsigned local = 0;
	int client, ticks;

	atomic_store(&s.last_fd, -1);
	cr_assert_eq(listener_open(&l, "127.0.0.1", 0, false, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(listener_start(&l, on_accept, on_tick, NULL, &s, err, sizeof(err)), 0, "%s", err);
	client = connect_to(l.port, &local);
	cr_assert_geq(client, 0);
	cr_assert_eq(wait_for(&s.accepted, 1), 1);
	cr_assert_eq(atomic_load(&s.peer_port), local, "on_accept has the client's address");

	/* the kernel's count of what the server side received */
	cr_assert_eq(send(client, "hello", 5, 0), 5);
	for (int i = 0; i < 500 && listener_received_bytes(atomic_load(&s.last_fd)) < 5; i++) {
		sleep_ms(10);
	}
	cr_assert_eq(listener_received_bytes(atomic_load(&s.last_fd)), 5);
	cr_assert_eq(listener_received_bytes(-1), -1);
	close(atomic_load(&s.last_fd));
	close(client);

	cr_assert_geq(wait_for(&s.ticks, 2), 2, "no ticks while running");
	listener_stop_accepting(&l);
	cr_assert_eq(connect_to(l.port, NULL), -1, "a client after stop_accepting was let in");
	cr_assert_eq(errno, ECONNREFUSED);
	ticks = atomic_load(&s.ticks);
	cr_assert_gt(wait_for(&s.ticks, ticks + 2), ticks + 1, "the ticks stopped with accepting");
	cr_assert_eq(atomic_load(&s.accepted), 1);
	listener_close(&l);
	ticks = atomic_load(&s.ticks);
	sleep_ms(3 * LISTENER_TICK_MS);
	cr_assert_eq(atomic_load(&s.ticks), ticks, "a tick after close");
}

Test(listener, the_clock_never_goes_back)
{
	uint64_t last = listener_now_ns();

	for (int i = 0; i < 10000; i++) {
		uint64_t now = listener_now_ns();

		cr_assert_geq(now, last);
		last = now;
	}
	cr_assert_gt(last, 0);
}

/* A listening socket as a service manager holds it: bound, blocking. */
static int held_socket(unsigned *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

Test(listener, an_adopted_socket_is_served_and_never_shut, .timeout = 30)
{
	struct listener l;
	struct seen s = {0};
	char err[256], addr[64], want[64];
	unsigned port;
	int held = held_socket(&port), mine = dup(held), client, late, ticks;

	atomic_store(&s.last_fd, -1);
	cr_assert_eq(listener_adopt(&l, &mine, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.port, port);
	cr_assert(fcntl(mine, F_GETFL) & O_NONBLOCK, "the accept loop needs it non-blocking");
	cr_assert(listener_serves(&l, "127.0.0.1", port));
	cr_assert(listener_serves(&l, "127.0.0.1", 0), "port 0 expects any port");
	cr_assert_not(listener_serves(&l, "127.0.0.1", port == 65535 ? 1 : port + 1));
	cr_assert_not(listener_serves(&l, "::1", port));
	cr_assert_not(listener_serves(&l, "not a host", port));
	listener_address(&l, 0, addr, sizeof(addr));
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	cr_assert_str_eq(addr, want);

	cr_assert_eq(listener_start(&l, on_accept, on_tick, NULL, &s, err, sizeof(err)), 0, "%s", err);
	client = connect_to(port, NULL);
	cr_assert_geq(client, 0);
	cr_assert_eq(wait_for(&s.accepted, 1), 1);
	close(atomic_load(&s.last_fd));
	close(client);

	/* stopped: a new client is not refused but waits in the backlog, and
	 * is not accepted here; it is the holder's (the next process's) */
	listener_stop_accepting(&l);
	ticks = atomic_load(&s.ticks);
	cr_assert_gt(wait_for(&s.ticks, ticks + 2), ticks + 1, "the ticks stopped with accepting");
	late = connect_to(port, NULL);
	cr_assert_geq(late, 0, "a client after stop_accepting was refused: the socket was shut");
	ticks = atomic_load(&s.ticks);
	cr_assert_gt(wait_for(&s.ticks, ticks + 3), ticks + 2);
	cr_assert_eq(atomic_load(&s.accepted), 1, "accepted after stop_accepting");
	listener_close(&l);
	client = accept(held, NULL, NULL);
	cr_assert_geq(client, 0, "the waiting client was lost with the listener");
	close(client);
	close(late);
	close(held);
}

Test(listener, adopts_nothing_but_listening_tcp_sockets)
{
	struct listener l;
	char err[256];
	int pipe_fds[2], fd;
	unsigned port;

	cr_assert_eq(pipe(pipe_fds), 0);
	cr_assert_eq(listener_adopt(&l, &pipe_fds[0], 1, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "not a socket"), "%s", err);
	close(pipe_fds[1]);

	fd = socket(AF_INET, SOCK_STREAM, 0); /* not listening */
	cr_assert_eq(listener_adopt(&l, &fd, 1, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "not a listening TCP socket"), "%s", err);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_eq(listener_adopt(&l, &fd, 1, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "not a listening TCP socket"), "%s", err);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un a = {.sun_family = AF_UNIX};

		snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "splitkd-test-adopt-%ld", (long)getpid());
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		cr_assert_eq(listen(fd, 1), 0);
	}
	cr_assert_eq(listener_adopt(&l, &fd, 1, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "not a listening TCP socket"), "%s", err);

	/* and a good one after a bad one: all are closed when one is bad */
	{
		int two[2] = {held_socket(&port), socket(AF_INET, SOCK_STREAM, 0)};

		cr_assert_eq(listener_adopt(&l, two, 2, err, sizeof(err)), -1);
		cr_assert_eq(fcntl(two[0], F_GETFD), -1, "the good one was left open");
	}
}
