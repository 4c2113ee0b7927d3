/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * listener — splitkd's listening socket and the one thread that accepts
 * from it.
 *
 * splitkd binds the socket itself instead of letting libmicrohttpd do it:
 * so a port already in use is an error (SO_REUSEPORT only when asked), so
 * admission can follow the connection table (fair reclaim, per-client
 * limits), and so each connection goes to the least loaded engine
 * (each libmicrohttpd engine keeps what it is handed, and a burst of
 * connects could land on one). The same thread wakes every
 * LISTENER_TICK_MS to enforce the header and body deadlines and to hand
 * memory back after a burst.
 *
 * listener_open/listener_close pair up; listener_start runs the thread and
 * listener_close stops it. Not thread-safe itself: one owner (main) drives it.
 */
#ifndef SPLITKD_LISTENER_H
#define SPLITKD_LISTENER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define LISTENER_TICK_MS 100

/* Hands an admitted connection to an engine; returns 0, or -1 when the
 * engine would not take it (the socket is then closed by it). */
typedef int listener_accept_fn(void *cls, int fd, const struct sockaddr *addr, socklen_t len);
/* Called every tick with the monotonic time in nanoseconds. */
typedef void listener_tick_fn(void *cls, uint64_t now_ns);

struct listener {
	int fd;      /* the listening socket; -1 once closed */
	int wake[2]; /* a pipe that stops the thread */
	unsigned port;
	pthread_t thread;
	bool running;
	atomic_bool accepting;
	listener_accept_fn *on_accept;
	listener_tick_fn *on_tick;
	void *cls;
};

/* Binds and listens on host:port (port 0: any free port; the bound port is
 * in l->port). `reuse_port` sets SO_REUSEPORT so that several processes
 * may share the port on purpose. Returns 0, or -1 with a message in err. */
int listener_open(struct listener *l, const char *host, unsigned port, bool reuse_port,
		  char *err, size_t err_cap);

/* Starts the accepting thread. Returns 0, or -1 with a message in err. */
int listener_start(struct listener *l, listener_accept_fn *on_accept, listener_tick_fn *on_tick,
		   void *cls, char *err, size_t err_cap);

/* Stops accepting and shuts the socket, so new clients are refused at
 * once (and a load balancer tries elsewhere); the thread keeps ticking. */
void listener_stop_accepting(struct listener *l);

/* Stops the thread and closes the socket. Safe after a failed open. */
void listener_close(struct listener *l);

/* The clock of ticks and of the connection table: CLOCK_MONOTONIC_COARSE
 * (a few milliseconds' resolution, cheaper to read), in nanoseconds. */
uint64_t listener_now_ns(void);

/* The bytes a connected TCP socket has received in all (the kernel's
 * TCP_INFO), or -1 when unknown. */
int64_t listener_received_bytes(int fd);

#endif /* SPLITKD_LISTENER_H */
