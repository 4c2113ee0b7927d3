/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The notify client (server/notify.c) through its own API: NOTIFY_SOCKET's
 * forms as a table (a path, an abstract @name, and what is neither), the
 * watchdog's variables as sd_watchdog_enabled(3) reads them, messages
 * received as sent on a real datagram socket (an abstract one, as
 * systemd's own tests use), RELOADING=1 with a MONOTONIC_USEC= of the
 * manager's clock, the variables unset once read, everything a no-op
 * without a manager, and the tick's pings swept over intervals and late
 * ticks on a made-up clock: no gap ever reaches half the interval.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "listener.h"
#include "notify.h"

Test(notify, notify_socket_is_a_path_or_an_abstract_name)
{
	char long_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	const size_t base = offsetof(struct sockaddr_un, sun_path);
	const struct {
		const char *value;
		int rc;
		size_t len; /* the address length past sun_path */
	} cases[] = {
		{"/run/systemd/notify", 0, sizeof("/run/systemd/notify")}, /* its NUL too */
		{"@splitkd", 0, sizeof("@splitkd") - 1},                  /* no NUL */
		{"", -1, 0},           {"@", -1, 0},          {"/", -1, 0},
		{"relative/notify", -1, 0}, {"vsock:2:1234", -1, 0}, {long_path, -1, 0},
	};

	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_un addr;
		socklen_t len = 0;
		int rc = notify_address(cases[i].value, &addr, &len);

		cr_assert_eq(rc, cases[i].rc, "\"%s\": %d", cases[i].value, rc);
		if (rc == 0) {
			cr_assert_eq(len, base + cases[i].len, "\"%s\"", cases[i].value);
			cr_assert_eq(addr.sun_family, AF_UNIX);
		}
	}
	{
		struct sockaddr_un addr;
		socklen_t len;

		cr_assert_eq(notify_address("@splitkd", &addr, &len), 0);
		cr_assert_eq(addr.sun_path[0], '\0', "an abstract name starts with a NUL");
		cr_assert_eq(memcmp(addr.sun_path + 1, "splitkd", 7), 0);
	}
	/* the longest path that fits with its NUL, and the longest abstract name */
	long_path[sizeof(long_path) - 3] = '\0';
	cr_assert_eq(strlen(long_path), sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	{
		struct sockaddr_un addr;
		socklen_t len;

		cr_assert_eq(notify_address(long_path, &addr, &len), 0);
		long_path[0] = '@';
		long_path[sizeof(long_path) - 3] = 'x';
		long_path[sizeof(long_path) - 2] = '\0'; /* the whole of sun_path, no NUL */
		cr_assert_eq(notify_address(long_path, &addr, &len), 0, "a whole sun_path of name");
		cr_assert_eq(len, sizeof(addr));
	}
}

Test(notify, the_watchdog_is_this_process_s_only)
{
	char self[24], other[24];
	const struct {
		const char *usec, *pid;
		uint64_t ns;
	} cases[] = {
		{"1000000", NULL, 1000000000u}, {"1000000", self, 1000000000u},
		{"1000000", other, 0},          {"1000000", "12x", 0},
		{"0", NULL, 0},                 {"1s", NULL, 0},
		{"", self, 0},                  {NULL, self, 0},
		{"-5", NULL, 0},                {"30000000", NULL, 30000000000u},
	};

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	snprintf(other, sizeof(other), "%ld", (long)getpid() + 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ns = notify_watchdog_ns(cases[i].usec, cases[i].pid, getpid());

		cr_assert_eq(ns, cases[i].ns, "case %zu: %llu", i, (unsigned long long)ns);
	}
}

/* A datagram socket bound to an abstract name, as a manager's; its name
 * ("@...") in name. */
static int manager(char *name, size_t cap)
{
	struct sockaddr_un addr;
	socklen_t len;
	struct timeval wait = {5, 0};
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	snprintf(name, cap, "@splitkd-test-notify-%ld", (long)getpid());
	cr_assert_eq(notify_address(name, &addr, &len), 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&addr, len), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	return fd;
}

/* The next message (NUL-terminated in buf). */
static const char *heard(int fd, char *buf, size_t cap)
{
	ssize_t n = recv(fd, buf, cap - 1, 0);

	cr_assert_gt(n, 0, "no message within 5 s");
	buf[n] = '\0';
	return buf;
}

static uint64_t monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

Test(notify, messages_arrive_as_sent_and_the_variables_are_gone)
{
	char name[64], pid[24], buf[2048];
	struct notify n;
	char err[256] = "";
	int fd = manager(name, sizeof(name));
	unsigned long long at;
	uint64_t before, after;

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("NOTIFY_SOCKET", name, 1);
	setenv("WATCHDOG_USEC", "1000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	cr_assert_eq(notify_init(&n, err, sizeof(err)), 0, "%s", err);
	cr_assert(notify_on(&n));
	cr_assert_eq(n.watchdog_ns, 1000000000u);
	cr_assert_null(getenv("NOTIFY_SOCKET"));
	cr_assert_null(getenv("WATCHDOG_USEC"));
	cr_assert_null(getenv("WATCHDOG_PID"));

	cr_assert_eq(notify_send(&n, "READY=1\nSTATUS=%s", "serving"), 0);
	cr_assert_str_eq(heard(fd, buf, sizeof(buf)), "READY=1\nSTATUS=serving");
	before = monotonic_us();
	notify_reloading(&n, "reloading");
	after = monotonic_us();
	cr_assert_eq(sscanf(heard(fd, buf, sizeof(buf)), "RELOADING=1\nMONOTONIC_USEC=%llu\n", &at), 1,
		     "%s", buf);
	cr_assert(at >= before && at <= after, "MONOTONIC_USEC=%llu not in [%llu, %llu]", at,
		  (unsigned long long)before, (unsigned long long)after);
	cr_assert_not_null(strstr(buf, "\nSTATUS=reloading"), "%s", buf);
	notify_tick(&n, listener_now_ns());
	cr_assert_str_eq(heard(fd, buf, sizeof(buf)), "WATCHDOG=1", "the first tick pings");
	notify_cleanup(&n);
	cr_assert_eq(notify_send(&n, "READY=1"), -1, "a send after cleanup");
	close(fd);
}

Test(notify, without_a_manager_everything_is_a_no_op)
{
	struct notify n;
	char err[256] = "";

	unsetenv("NOTIFY_SOCKET");
	setenv("WATCHDOG_USEC", "1000000", 1); /* nobody to ping */
	cr_assert_eq(notify_init(&n, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(notify_on(&n));
	cr_assert_eq(n.watchdog_ns, 0);
	cr_assert_eq(notify_send(&n, "READY=1"), -1);
	notify_reloading(&n, "x");
	notify_tick(&n, listener_now_ns());
	notify_cleanup(&n);

	setenv("NOTIFY_SOCKET", "relative/notify", 1);
	cr_assert_eq(notify_init(&n, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "NOTIFY_SOCKET=relative/notify"), "%s", err);
	cr_assert_not(notify_on(&n));
	cr_assert_null(getenv("NOTIFY_SOCKET"));
	notify_cleanup(&n);
	notify_cleanup(NULL);
}

/* Ticks every LISTENER_TICK_MS, up to `late_ms` late (a fixed pattern),
 * for 60 s of a made-up clock: the longest gap between two pings, and
 * how many there were. */
static uint64_t longest_gap(struct notify *n, unsigned late_ms, unsigned *pings)
{
	uint64_t now = 1000000000u, last = 0, longest = 0;

	n->last_ping_ns = 0;
	*pings = 0;
	for (unsigned i = 0; now < 61000000000ull; i++) {
		uint64_t was = n->last_ping_ns;

		notify_tick(n, now);
		if (n->last_ping_ns != was) {
			longest = last != 0 && now - last > longest ? now - last : longest;
			last = now;
			(*pings)++;
		}
		now += (LISTENER_TICK_MS + (late_ms != 0 ? i * 7 % (late_ms + 1) : 0)) * 1000000ull;
	}
	return longest;
}

Test(notify, no_gap_between_pings_reaches_half_the_interval)
{
	static const uint64_t intervals_ms[] = {1000, 2000, 3000, 10000, 20000, 30000};
	static const unsigned late_ms[] = {0, 20, 50, 90};
	char name[64];
	int fd = manager(name, sizeof(name)); /* never read: a full queue drops, never blocks */

	for (size_t i = 0; i < sizeof(intervals_ms) / sizeof(intervals_ms[0]); i++) {
		for (size_t k = 0; k < sizeof(late_ms) / sizeof(late_ms[0]); k++) {
			struct notify n;
			char usec[24], err[256];
			unsigned pings;
			uint64_t gap, half = intervals_ms[i] * 1000000u / 2;

			setenv("NOTIFY_SOCKET", name, 1);
			snprintf(usec, sizeof(usec), "%llu", (unsigned long long)intervals_ms[i] * 1000u);
			setenv("WATCHDOG_USEC", usec, 1);
			cr_assert_eq(notify_init(&n, err, sizeof(err)), 0, "%s", err);
			gap = longest_gap(&n, late_ms[k], &pings);
			cr_assert_lt(gap, half, "WATCHDOG_USEC=%s, ticks up to %u ms late: a gap of %llu ms",
				     usec, late_ms[k], (unsigned long long)gap / 1000000u);
			/* and not every tick: about two pings an interval, at most four */
			cr_assert_leq(pings, 60000u / intervals_ms[i] * 4 + 4, "WATCHDOG_USEC=%s: %u pings",
				      usec, pings);
			notify_cleanup(&n);
		}
	}
	close(fd);
}
