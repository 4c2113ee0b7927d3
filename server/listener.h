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
 * Or the sockets are a service manager's (socket activation,
 * activation.c): listener_adopt serves on them as they are, binds
 * nothing, and never shuts them, since the parent keeps its copy
 * listening across a restart and what waits in the backlog is the next
 * process's to accept. Everything after the accept is the same.
 *
 * Back-pressure: while the server can take no more connections (its
 * on_accept returns LISTENER_PAUSE), the listening sockets leave the poll
 * set, every one of them, adopted ones too, and new connections wait in
 * the kernel's listen queue; listener_kick (any thread) wakes the thread
 * to ask on_kick whether to accept again, which it also asks every tick.
 *
 * listener_open (or listener_adopt) and listener_close pair up;
 * listener_start runs the thread and listener_close stops it. Not
 * thread-safe itself: one owner (main) drives it.
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
#define LISTENER_MAX_SOCKETS 8 /* sockets adopted at most */

/* What on_accept and on_kick tell the thread to do next. */
enum listener_next {
	LISTENER_GO = 0,    /* accept on */
	LISTENER_PAUSE = 1, /* accept nothing until on_kick says LISTENER_GO */
};

/* Hands a new connection to the server, which takes the descriptor
 * whatever it does with it (admits, holds or closes it). Returns
 * LISTENER_PAUSE when it can take no more, else LISTENER_GO (or -1, an
 * engine that would not take it: accepting goes on). */
typedef int listener_accept_fn(void *cls, int fd, const struct sockaddr *addr, socklen_t len);
/* Called every tick with the monotonic time in nanoseconds. */
typedef void listener_tick_fn(void *cls, uint64_t now_ns);
/* Called after a kick and after every tick: the server moves what it
 * holds along and says whether accepting may go on; *soon set asks to be
 * called again within LISTENER_SOON_MS rather than at the next tick. */
typedef enum listener_next listener_kick_fn(void *cls, uint64_t now_ns, bool *soon);

#define LISTENER_SOON_MS 10

struct listener {
	int fds[LISTENER_MAX_SOCKETS]; /* the listening sockets; -1 once closed */
	unsigned num_fds;
	bool adopted; /* the sockets are the service manager's: never shut */
	int wake[2];  /* a pipe that stops the thread */
	int kick[2];  /* a pipe that asks the thread to call on_kick */
	bool paused;  /* on_accept said LISTENER_PAUSE, on_kick has not said go (the thread's) */
	unsigned port; /* the first socket's */
	pthread_t thread;
	bool running;
	atomic_bool accepting;
	/* the thread is between its check of `accepting` and handing the
	 * connections it accepted to on_accept (listener_stop_accepting waits
	 * it out) */
	atomic_int in_accept;
	listener_accept_fn *on_accept;
	listener_tick_fn *on_tick;
	listener_kick_fn *on_kick;
	void *cls;
};

/* Binds and listens on host:port (port 0: any free port; the bound port is
 * in l->port). `reuse_port` sets SO_REUSEPORT so that several processes
 * may share the port on purpose. `backlog` is the listen queue asked of
 * the kernel (which caps it at net.core.somaxconn); 0 asks for that cap.
 * Returns 0, or -1 with a message in err. */
int listener_open(struct listener *l, const char *host, unsigned port, bool reuse_port,
		  unsigned backlog, char *err, size_t err_cap);

/* The kernel's cap on a listen queue (net.core.somaxconn), or SOMAXCONN
 * when it cannot be read. */
unsigned listener_somaxconn(void);

/* Serves on `n` listening sockets a service manager passed (fds, taken:
 * listener_close closes them), each made non-blocking. Returns 0, or -1
 * with a message in err when one is no listening TCP socket (nothing is
 * taken then, but what listener_close closes). */
int listener_adopt(struct listener *l, const int *fds, unsigned n, char *err, size_t err_cap);

/* Whether a socket of l is bound to host:port (port 0: any port). */
bool listener_serves(const struct listener *l, const char *host, unsigned port);

/* Socket i's address as "127.0.0.1:8080" or "[::1]:8080" (i < num_fds). */
void listener_address(const struct listener *l, unsigned i, char *out, size_t cap);

/* Starts the accepting thread; on_kick may be NULL (no back-pressure:
 * LISTENER_PAUSE is then ignored). Returns 0, or -1 with a message in err. */
int listener_start(struct listener *l, listener_accept_fn *on_accept, listener_tick_fn *on_tick,
		   listener_kick_fn *on_kick, void *cls, char *err, size_t err_cap);

/* Asks the thread to call on_kick soon (a slot freed). Any thread; a
 * write to a pipe, never blocking: kicks pending already are enough. */
void listener_kick(struct listener *l);

/* Stops accepting and shuts the socket, so new clients are refused at
 * once (and a load balancer tries elsewhere); the thread keeps ticking.
 * An adopted socket is not shut: new clients wait in its backlog for the
 * process the service manager starts next. */
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
