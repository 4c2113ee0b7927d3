/* SPDX-License-Identifier: AGPL-3.0-only */
#define _GNU_SOURCE /* accept4 */
#include "listener.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_received; glibc's lacks it */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ACCEPTS_PER_WAKE 64

uint64_t listener_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int resolve(const char *host, unsigned port, struct sockaddr_storage *addr,
		   socklen_t *len, char *err, size_t cap)
{
	struct addrinfo hints, *res = NULL;
	char service[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0 || res == NULL) {
		snprintf(err, cap, "cannot resolve listen address %s: %s", host, gai_strerror(rc));
		return -1;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		return 0;
	}
	if (a.ss_family == AF_INET6) {
		return ntohs(((struct sockaddr_in6 *)(void *)&a)->sin6_port);
	}
	return ntohs(((struct sockaddr_in *)(void *)&a)->sin_port);
}

/* Nothing open yet: listener_close is safe from here on. */
static void reset(struct listener *l)
{
	memset(l, 0, sizeof(*l));
	l->wake[0] = l->wake[1] = -1;
	l->kick[0] = l->kick[1] = -1;
}

unsigned listener_somaxconn(void)
{
	FILE *f = fopen("/proc/sys/net/core/somaxconn", "re");
	unsigned n = 0;

	if (f != NULL) {
		if (fscanf(f, "%u", &n) != 1) {
			n = 0;
		}
		fclose(f);
	}
	return n > 0 ? n : SOMAXCONN;
}

/* What a bound and an adopted listener both need before the thread. */
static int ready(struct listener *l, char *err, size_t err_cap)
{
	l->port = bound_port(l->fds[0]);
	if (pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(l->kick, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, err_cap, "pipe: %s", strerror(errno));
		listener_close(l);
		return -1;
	}
	atomic_init(&l->accepting, true);
	atomic_init(&l->in_accept, 0);
	return 0;
}

int listener_open(struct listener *l, const char *host, unsigned port, bool reuse_port,
		  unsigned backlog, char *err, size_t err_cap)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int one = 1, fd;

	reset(l);
	if (resolve(host, port, &addr, &len, err, err_cap) != 0) {
		return -1;
	}
	fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_cap, "socket: %s", strerror(errno));
		return -1;
	}
	l->fds[l->num_fds++] = fd;
	/* SO_REUSEADDR only lets a restart bind past TIME_WAIT; it never
	 * shares a port another process listens on. SO_REUSEPORT would, so it
	 * is set only when asked for. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuse_port) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	}
	/* listen() takes an int and the kernel caps it at somaxconn */
	if (backlog == 0 || backlog > INT_MAX) {
		backlog = listener_somaxconn();
	}
	if (bind(fd, (struct sockaddr *)&addr, len) != 0 || listen(fd, (int)backlog) != 0) {
		int e = errno;

		snprintf(err, err_cap, "cannot listen on %s%s%s:%u: %s%s", strchr(host, ':') ? "[" : "",
			 host, strchr(host, ':') ? "]" : "", port, strerror(e),
			 e == EADDRINUSE ? " (is another splitkd running? --reuse-port shares the "
					   "port on purpose)"
					 : "");
		listener_close(l);
		return -1;
	}
	return ready(l, err, err_cap);
}

/* Whether fd is a listening TCP socket; a message in err when not. */
static int listening_tcp(int fd, char *err, size_t err_cap)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	int type = 0, listening = 0;
	socklen_t n = sizeof(int), m = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &n) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &m) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		snprintf(err, err_cap, "descriptor %d from the service manager: %s", fd,
			 errno == ENOTSOCK ? "not a socket" : strerror(errno));
		return -1;
	}
	if (type != SOCK_STREAM || !listening || (a.ss_family != AF_INET && a.ss_family != AF_INET6)) {
		snprintf(err, err_cap, "descriptor %d from the service manager is not a listening TCP "
			 "socket (ListenStream= with an IP address and port, Accept=no)", fd);
		return -1;
	}
	return 0;
}

int listener_adopt(struct listener *l, const int *fds, unsigned n, char *err, size_t err_cap)
{
	reset(l);
	for (unsigned i = 0; i < n && i < LISTENER_MAX_SOCKETS; i++) {
		l->fds[l->num_fds++] = fds[i];
	}
	l->adopted = true;
	for (unsigned i = 0; i < l->num_fds; i++) {
		int flags;

		if (listening_tcp(l->fds[i], err, err_cap) != 0) {
			listener_close(l);
			return -1;
		}
		/* systemd passes blocking sockets (NonBlocking=no), and the
		 * accept loop must not block on an empty backlog */
		flags = fcntl(l->fds[i], F_GETFL);
		if (flags < 0 || fcntl(l->fds[i], F_SETFL, flags | O_NONBLOCK) != 0) {
			snprintf(err, err_cap, "descriptor %d: %s", l->fds[i], strerror(errno));
			listener_close(l);
			return -1;
		}
	}
	if (l->num_fds == 0) {
		snprintf(err, err_cap, "no socket to adopt");
		return -1;
	}
	return ready(l, err, err_cap);
}

/* Whether two socket addresses are one: the family, the address, and the
 * port unless `port` is 0. */
static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b,
			 unsigned port)
{
	if (a->ss_family != b->ss_family) {
		return false;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0 &&
		       (port == 0 || x->sin6_port == y->sin6_port);
	}
	return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr &&
	       (port == 0 || ((const struct sockaddr_in *)(const void *)a)->sin_port ==
				     ((const struct sockaddr_in *)(const void *)b)->sin_port);
}

bool listener_serves(const struct listener *l, const char *host, unsigned port)
{
	struct sockaddr_storage want, have;
	socklen_t len;
	char err[256];

	if (resolve(host, port, &want, &len, err, sizeof(err)) != 0) {
		return false;
	}
	for (unsigned i = 0; i < l->num_fds; i++) {
		len = sizeof(have);
		if (getsockname(l->fds[i], (struct sockaddr *)&have, &len) == 0 &&
		    same_address(&want, &have, port)) {
			return true;
		}
	}
	return false;
}

void listener_address(const struct listener *l, unsigned i, char *out, size_t cap)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (getsockname(l->fds[i], (struct sockaddr *)&a, &len) != 0 ||
	    getnameinfo((struct sockaddr *)&a, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(out, cap, "(descriptor %d)", l->fds[i]);
		return;
	}
	snprintf(out, cap, a.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* Accepts what is waiting, a bounded number at a time so ticks keep
 * their pace under a connection storm. */
static void accept_some(struct listener *l, int from)
{
	/* announced before `accepting` is read (both sequentially
	 * consistent), so a stop either sees this batch and waits for it, or
	 * this batch sees the stop and accepts nothing */
	atomic_fetch_add(&l->in_accept, 1);
	for (int i = 0; i < ACCEPTS_PER_WAKE && atomic_load(&l->accepting); i++) {
		struct sockaddr_storage addr;
		socklen_t len = sizeof(addr);
		int fd = accept4(from, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* out of descriptors: pause rather than spin on a
				 * socket that stays readable */
				struct timespec pause = {0, 10 * 1000 * 1000};

				nanosleep(&pause, NULL);
			}
			break; /* EAGAIN, or an error the next wake retries */
		}
		if (l->on_accept(l->cls, fd, (struct sockaddr *)&addr, len) == LISTENER_PAUSE &&
		    l->on_kick != NULL) {
			/* the rest wait in the listen queue, not here */
			l->paused = true;
			break;
		}
	}
	atomic_fetch_sub(&l->in_accept, 1);
}

/* Empties the kick pipe and asks the server whether to accept again. */
static void kicked(struct listener *l, uint64_t now, bool *soon)
{
	char drain[64];

	while (read(l->kick[0], drain, sizeof(drain)) > 0) {
	}
	*soon = false;
	if (l->on_kick != NULL) {
		l->paused = l->on_kick(l->cls, now, soon) == LISTENER_PAUSE;
	}
}

static void *run(void *arg)
{
	struct listener *l = arg;
	uint64_t next_tick = listener_now_ns();
	bool soon = false;
	struct pollfd p[2 + LISTENER_MAX_SOCKETS];

	p[0] = (struct pollfd){l->wake[0], POLLIN, 0};
	p[1] = (struct pollfd){l->kick[0], POLLIN, 0};
	for (unsigned i = 0; i < l->num_fds; i++) {
		p[2 + i] = (struct pollfd){l->fds[i], POLLIN, 0};
	}
	for (;;) {
		/* paused: the listening sockets are out of the set, so what
		 * waits stays in the kernel's listen queue */
		bool accepting = atomic_load(&l->accepting) && !l->paused;
		uint64_t now = listener_now_ns(), wait_until = next_tick;
		int timeout;

		if (soon && now + LISTENER_SOON_MS * 1000000u < wait_until) {
			wait_until = now + LISTENER_SOON_MS * 1000000u;
		}
		timeout = now >= wait_until ? 0 : (int)((wait_until - now) / 1000000u) + 1;
		if (poll(p, accepting ? 2 + l->num_fds : 2, timeout) < 0 && errno != EINTR) {
			break;
		}
		if (p[0].revents != 0) {
			break;
		}
		now = listener_now_ns();
		if (p[1].revents != 0 || (soon && now >= wait_until)) {
			kicked(l, now, &soon); /* a resume polls the sockets next time round */
		}
		/* read again: an adopted socket is not shut when accepting
		 * stops, so it may poll readable after; what waits is the next
		 * process's */
		for (unsigned i = 0; accepting && atomic_load(&l->accepting) && !l->paused &&
				     i < l->num_fds;
		     i++) {
			if (p[2 + i].revents & POLLIN) {
				accept_some(l, l->fds[i]);
			}
		}
		now = listener_now_ns();
		if (now >= next_tick) {
			l->on_tick(l->cls, now);
			kicked(l, now, &soon);
			next_tick = now + LISTENER_TICK_MS * 1000000u;
		}
	}
	return NULL;
}

int listener_start(struct listener *l, listener_accept_fn *on_accept, listener_tick_fn *on_tick,
		   listener_kick_fn *on_kick, void *cls, char *err, size_t err_cap)
{
	int rc;

	l->on_accept = on_accept;
	l->on_tick = on_tick;
	l->on_kick = on_kick;
	l->cls = cls;
	rc = pthread_create(&l->thread, NULL, run, l);
	if (rc != 0) {
		snprintf(err, err_cap, "cannot start the listener thread: %s", strerror(rc));
		return -1;
	}
	l->running = true;
	return 0;
}

void listener_kick(struct listener *l)
{
	if (l->kick[1] >= 0) {
		(void)!write(l->kick[1], "k", 1); /* full: a kick is pending already */
	}
}

void listener_stop_accepting(struct listener *l)
{
	struct timespec pause = {0, 1000 * 1000};

	atomic_store(&l->accepting, false);
	/* a connection accepted a moment before is handed over (and so
	 * counted by the drain that calls this) before this returns: else the
	 * drain could see no connection, stop, and close one the thread was
	 * still handing on, unanswered (seen once in 4141 requests across 10
	 * restarts on a held socket) */
	while (atomic_load(&l->in_accept) != 0) {
		nanosleep(&pause, NULL);
	}
	if (l->adopted) {
		/* shut, the socket would be out of LISTEN for the service
		 * manager's copy too, and the next process would inherit a dead
		 * one; the thread stops watching it at its next wake (a tick at
		 * the latest) */
		return;
	}
	/* On Linux this takes the socket out of LISTEN: a new client is
	 * refused at once instead of waiting in a backlog nobody accepts
	 * from. The descriptor stays open until listener_close. */
	for (unsigned i = 0; i < l->num_fds; i++) {
		/* also wakes the thread: a shut socket polls readable, its
		 * accept fails, and the thread stops watching it */
		shutdown(l->fds[i], SHUT_RDWR);
	}
}

void listener_close(struct listener *l)
{
	if (l->running) {
		(void)!write(l->wake[1], "x", 1);
		pthread_join(l->thread, NULL);
		l->running = false;
	}
	for (int i = 0; i < 2; i++) {
		if (l->wake[i] >= 0) {
			close(l->wake[i]);
			l->wake[i] = -1;
		}
		if (l->kick[i] >= 0) {
			close(l->kick[i]);
			l->kick[i] = -1;
		}
	}
	for (unsigned i = 0; i < l->num_fds; i++) {
		if (l->fds[i] >= 0) {
			close(l->fds[i]);
			l->fds[i] = -1;
		}
	}
}

int64_t listener_received_bytes(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received)) {
		return -1;
	}
	return (int64_t)ti.tcpi_bytes_received;
}
