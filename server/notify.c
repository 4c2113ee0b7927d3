/* SPDX-License-Identifier: AGPL-3.0-only */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "listener.h"

#define MESSAGE_MAX 1024
#define TEST_STALL "SPLITKD_TEST_STALL_TICK"

int notify_address(const char *value, struct sockaddr_un *addr, socklen_t *len)
{
	size_t n = value != NULL ? strlen(value) : 0;

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	/* a path's NUL must fit too; an abstract name has none */
	if (n < 2 || (value[0] != '/' && value[0] != '@') ||
	    n >= sizeof(addr->sun_path) + (value[0] == '@')) {
		return -1;
	}
	memcpy(addr->sun_path, value, n);
	if (value[0] == '@') {
		addr->sun_path[0] = '\0';
	}
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (value[0] == '/'));
	return 0;
}

/* A whole decimal number, nothing else; 0 when it is not one. */
static unsigned long long number(const char *s)
{
	char *end = NULL;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9') {
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0' ? v : 0;
}

uint64_t notify_watchdog_ns(const char *usec, const char *pid, pid_t self)
{
	unsigned long long us = number(usec);

	if (pid != NULL && number(pid) != (unsigned long long)self) {
		return 0; /* another process's (and an unparsable pid is nobody's) */
	}
	return us <= UINT64_MAX / 1000u ? (uint64_t)us * 1000u : 0;
}

/* SPLITKD_TEST_STALL_TICK="AFTER_MS FOR_MS", in ns; 0 and 0 unless both
 * parse. */
static void test_stall(struct notify *n, const char *value)
{
	char after[24], lasting[24];

	if (value == NULL || sscanf(value, "%23s %23s", after, lasting) != 2) {
		return;
	}
	n->stall_after_ns = (uint64_t)number(after) * 1000000u;
	n->stall_ns = (uint64_t)number(lasting) * 1000000u;
}

int notify_init(struct notify *n, char *err, size_t err_cap)
{
	const char *where = getenv("NOTIFY_SOCKET");
	int ret = 0;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	n->watchdog_ns = notify_watchdog_ns(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"),
					    getpid());
	/* half the interval, less two ticks: the tick's own period and a late
	 * wake-up must not make a gap longer than half (at least one tick) */
	n->ping_every_ns = n->watchdog_ns / 2 > 3 * LISTENER_TICK_MS * 1000000ull
				   ? n->watchdog_ns / 2 - 2 * LISTENER_TICK_MS * 1000000ull
				   : LISTENER_TICK_MS * 1000000ull;
	test_stall(n, getenv(TEST_STALL));
	if (where != NULL) {
		if (notify_address(where, &n->addr, &n->addr_len) != 0) {
			snprintf(err, err_cap, "NOTIFY_SOCKET=%s is no AF_UNIX path or @name: not "
				 "notifying the service manager", where);
			ret = -1;
		} else {
			n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (n->fd < 0) {
				snprintf(err, err_cap, "NOTIFY_SOCKET: socket: %s: not notifying the "
					 "service manager", strerror(errno));
				ret = -1;
			}
		}
	}
	if (n->fd < 0) {
		n->watchdog_ns = 0; /* nobody to ping */
	}
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	unsetenv(TEST_STALL);
	return ret;
}

void notify_cleanup(struct notify *n)
{
	if (n != NULL && n->fd >= 0) {
		close(n->fd);
		n->fd = -1;
	}
}

bool notify_on(const struct notify *n)
{
	return n->fd >= 0;
}

int notify_send(const struct notify *n, const char *fmt, ...)
{
	char msg[MESSAGE_MAX];
	va_list ap;
	int len;

	if (n->fd < 0) {
		return -1;
	}
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0) {
		return -1;
	}
	/* unconnected, so a manager that re-executes (and binds its socket
	 * again) still hears the next message */
	return sendto(n->fd, msg, (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1,
		      MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&n->addr, n->addr_len) < 0
		       ? -1
		       : 0;
}

void notify_reloading(const struct notify *n, const char *status)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify_send(n, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=%s",
		    (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000u,
		    status);
}

void notify_tick(struct notify *n, uint64_t now_ns)
{
	if (n->first_tick_ns == 0) {
		n->first_tick_ns = now_ns;
	}
	if (n->stall_ns > 0 && now_ns - n->first_tick_ns >= n->stall_after_ns) {
		struct timespec pause = {(time_t)(n->stall_ns / 1000000000u),
					 (long)(n->stall_ns % 1000000000u)};

		n->stall_ns = 0; /* once */
		nanosleep(&pause, NULL);
		now_ns = listener_now_ns();
	}
	if (n->watchdog_ns > 0 &&
	    (n->last_ping_ns == 0 || now_ns - n->last_ping_ns >= n->ping_every_ns)) {
		notify_send(n, "WATCHDOG=1");
		n->last_ping_ns = now_ns;
	}
}
