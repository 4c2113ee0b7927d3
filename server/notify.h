/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * notify — the service manager's notify protocol (sd_notify(3)) and its
 * watchdog (sd_watchdog_enabled(3)), written by hand as OpenSSH has done
 * since CVE-2024-3094 rather than linking libsystemd: a message is
 * "NAME=VALUE" lines in one datagram to the AF_UNIX socket NOTIFY_SOCKET
 * names (a path, or "@name" for an abstract one). READY=1 once serving,
 * RELOADING=1 with MONOTONIC_USEC= at SIGHUP and READY=1 when the reload
 * is over, STOPPING=1 when the drain starts, STATUS= lines for `systemctl
 * status`, and, when WATCHDOG_USEC (and WATCHDOG_PID, if set) say so for
 * this process, WATCHDOG=1 from the serving loop's tick (notify_tick).
 *
 * Without NOTIFY_SOCKET every call does nothing: no socket, no send.
 * A send never blocks (MSG_DONTWAIT) and its failure is not an error: a
 * manager that is gone or busy does not stop the serving. notify_init
 * reads and unsets the variables (so no child inherits them): call it
 * once, in main, before any thread starts. Then notify_send and its
 * kin may be called from any thread (one datagram is one message);
 * notify_tick from one thread only (the listener's), which alone writes
 * the watchdog's clock. notify_init/notify_cleanup pair up.
 *
 * The test hook: SPLITKD_TEST_STALL_TICK="AFTER_MS FOR_MS" makes the
 * first tick past AFTER_MS (from the first tick) sleep FOR_MS, the
 * serving loop stalled as a wedged one would be: the integration tests
 * show that the pings stop with it. Test-only, never an interface.
 */
#ifndef SPLITKD_NOTIFY_H
#define SPLITKD_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct notify {
	int fd; /* an AF_UNIX datagram socket; -1: no NOTIFY_SOCKET */
	struct sockaddr_un addr;
	socklen_t addr_len;
	uint64_t watchdog_ns;   /* WATCHDOG_USEC for this process; 0: no watchdog */
	uint64_t ping_every_ns; /* how often the tick pings: within half of it */
	uint64_t last_ping_ns;  /* the tick's (0: none yet) */
	uint64_t stall_after_ns, stall_ns; /* the test hook; 0: none */
	uint64_t first_tick_ns;
};

/*
 * NOTIFY_SOCKET's value into an address: "/path" or "@abstract" (the '@'
 * is the leading NUL of an abstract name). Returns 0, or -1 for an
 * empty, relative or too long value (or another kind, as "vsock:").
 */
int notify_address(const char *value, struct sockaddr_un *addr, socklen_t *len);

/* The watchdog's interval in ns from WATCHDOG_USEC and WATCHDOG_PID
 * (NULL: unset) for process `self`: 0 when either is unset but the
 * interval, not a number, 0, or names another process. */
uint64_t notify_watchdog_ns(const char *usec, const char *pid, pid_t self);

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID and the test hook,
 * unsets them, and opens the socket. Returns 0 (nothing set: every call
 * a no-op), or -1 with why in err when NOTIFY_SOCKET is set but unusable
 * (the caller logs it and serves without: n is then a no-op too). */
int notify_init(struct notify *n, char *err, size_t err_cap);
void notify_cleanup(struct notify *n);

/* Whether a manager listens (NOTIFY_SOCKET was usable). */
bool notify_on(const struct notify *n);

/* Sends one message, formatted ("READY=1\nSTATUS=..."; at most 1 KiB).
 * Returns 0, or -1 when off or the send failed (nothing else to do). */
int notify_send(const struct notify *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* RELOADING=1 with MONOTONIC_USEC= now (CLOCK_MONOTONIC, as the manager
 * reads it) and STATUS=`status`. */
void notify_reloading(const struct notify *n, const char *status);

/* The serving loop's part, every tick (`now_ns` the listener's clock):
 * WATCHDOG=1 when due, and the test hook's stall. */
void notify_tick(struct notify *n, uint64_t now_ns);

#endif /* SPLITKD_NOTIFY_H */
