/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * beat_floor — what the heartbeats of idle change streams cost by
 * themselves, the peer of `make bench-streams`' idle CPU: the same client
 * opens the same streams here, and this does nothing but what a heartbeat
 * needs. It answers each GET with the headers and a hello event as one
 * chunk, then, on a 100 ms tick as splitkd's, sends every stream silent
 * for 15 s the heartbeat chunk splitkd sends (": heartbeat\n\n"), with one
 * send() each, and notices a client that left (EPOLLRDHUP). No HTTP
 * engine, no locks, no events: splitkd's idle CPU over this one's, in
 * the same run, is what splitkd adds to the sends.
 *
 * usage: beat_floor PORT MAX_STREAMS LIFETIME_SECONDS
 * Listens on 127.0.0.1:PORT; exits at SIGTERM or after LIFETIME_SECONDS.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 100
#define HEARTBEAT_NS (15ull * 1000000000ull)

/* One connection: its request until the blank line, then a stream. */
struct conn {
	int fd;
	bool streaming;
	char tail[4]; /* the last 4 bytes of its request read */
	uint64_t last_write;
	int prev, next; /* the FIFO of streams by last write; -1: none */
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			   "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
static const char hello[] = "retry: 1000\n\nid: 1@00000000\nevent: hello\n"
			    "data: {\"seq\":1}\n\n";
static const char beat[] = ": heartbeat\n\n";

static struct conn *conns; /* by fd */
static int fifo_head = -1, fifo_tail = -1;

static void fifo_push(int fd)
{
	conns[fd].prev = fifo_tail;
	conns[fd].next = -1;
	if (fifo_tail >= 0) {
		conns[fifo_tail].next = fd;
	} else {
		fifo_head = fd;
	}
	fifo_tail = fd;
}

static void fifo_unlink(int fd)
{
	struct conn *c = &conns[fd];

	if (c->prev >= 0) {
		conns[c->prev].next = c->next;
	} else {
		fifo_head = c->next;
	}
	if (c->next >= 0) {
		conns[c->next].prev = c->prev;
	} else {
		fifo_tail = c->prev;
	}
	c->prev = c->next = -1;
}

static void drop(int ep, int fd)
{
	if (conns[fd].streaming) {
		fifo_unlink(fd);
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	conns[fd] = (struct conn){.fd = -1, .prev = -1, .next = -1};
}

/* Reads what the client sent; at its blank line, the stream begins. */
static void on_readable(int ep, int fd, uint32_t events)
{
	struct conn *c = &conns[fd];
	char buf[4096], chunk[256];
	ssize_t n;

	if (c->streaming || (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		drop(ep, fd); /* a stream's client says nothing more: it left */
		return;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			memmove(c->tail, c->tail + 1, 3);
			c->tail[3] = buf[i];
		}
	}
	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		drop(ep, fd);
		return;
	}
	if (memcmp(c->tail, "\r\n\r\n", 4) == 0) {
		int len = snprintf(chunk, sizeof(chunk), "%s%zx\r\n%s\r\n", head, sizeof(hello) - 1,
				   hello);

		if (send(fd, chunk, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len) {
			drop(ep, fd);
			return;
		}
		c->streaming = true;
		c->last_write = now_ns();
		fifo_push(fd);
	}
}

/* The streams silent for 15 s, first in the FIFO: a heartbeat each, and
 * to the FIFO's end (written now, so a tick sends each once at most). */
static void tick(int ep, const char *chunk, size_t len)
{
	uint64_t now = now_ns();

	while (fifo_head >= 0 && now - conns[fifo_head].last_write >= HEARTBEAT_NS) {
		int fd = fifo_head;

		if (send(fd, chunk, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
			drop(ep, fd);
			continue;
		}
		fifo_unlink(fd);
		conns[fd].last_write = now;
		fifo_push(fd);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct epoll_event ev, evs[256];
	struct rlimit rl;
	char chunk[64];
	size_t chunk_len;
	int lfd, ep, one = 1, max;
	uint64_t end, next_tick;

	if (argc != 4) {
		fprintf(stderr, "usage: beat_floor PORT MAX_STREAMS LIFETIME_SECONDS\n");
		return 2;
	}
	max = atoi(argv[2]) + 64;
	end = now_ns() + (uint64_t)atoi(argv[3]) * 1000000000u;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)max ? rl.rlim_max : (rlim_t)max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	conns = calloc((size_t)max, sizeof(*conns));
	chunk_len = (size_t)snprintf(chunk, sizeof(chunk), "%zx\r\n%s\r\n", sizeof(beat) - 1, beat);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	addr.sin_port = htons((uint16_t)atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (conns == NULL || lfd < 0 || ep < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(lfd, 4096) != 0) {
		perror("beat_floor");
		return 1;
	}
	ev = (struct epoll_event){.events = EPOLLIN, .data.fd = lfd};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	next_tick = now_ns();
	while (!stop && now_ns() < end) {
		uint64_t now = now_ns();
		int wait = now >= next_tick ? 0 : (int)((next_tick - now) / 1000000u) + 1;
		int n = epoll_wait(ep, evs, 256, wait);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd != lfd) {
				on_readable(ep, fd, evs[i].events);
				continue;
			}
			for (int c; (c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
				if (c >= max) {
					close(c);
					continue;
				}
				setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				conns[c] = (struct conn){.fd = c, .prev = -1, .next = -1};
				ev = (struct epoll_event){.events = EPOLLIN | EPOLLRDHUP, .data.fd = c};
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
			}
		}
		if (now_ns() >= next_tick) {
			tick(ep, chunk, chunk_len);
			next_tick += TICK_MS * 1000000u;
		}
	}
	return 0;
}
