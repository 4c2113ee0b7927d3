/* SPDX-License-Identifier: AGPL-3.0-only */
#include "httpd.h"

#include <netinet/in.h>
#include <netinet/tcp.h> /* TCP_NODELAY, TCP_NOTSENT_LOWAT */
#include <string.h>

#include "framing.h"

/*
 * The most of an answer the kernel holds unsent for one connection
 * (TCP_NOTSENT_LOWAT): send() takes no more while this much waits for the
 * client's window. Without it a loopback socket's send buffer takes a
 * whole answer at once, so 256 slow readers asking for /openapi.json
 * (170 KiB) made the engines queue 44 MiB in the first second of a slow
 * read flood: 1 to 3 s of kernel CPU (skb allocation and copies) while an
 * honest client's request waited behind it, 100 to 350 ms (issue 33). It
 * bounds what is unsent, not what is in flight: a reader that keeps up
 * is sent to as before (the kernel sends as it copies), at the price of
 * more poll rounds for one that lags; a slow one holds 16 KiB of the
 * kernel's memory, not the whole answer.
 */
#define UNSENT_MAX (16 * 1024)

/* MHD decodes the path and every query key and value with this before
 * filing them; splitkd reads neither (the api decodes the target on_uri
 * kept, as sent), so they stay as they are: decoding them was 700
 * instructions a request for nothing. */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

struct MHD_Daemon *httpd_start(const struct server_config *cfg, unsigned max_connections,
				const struct tls *tls, const struct httpd_calls *calls)
{
	/* poll(), not MHD_USE_AUTO's epoll: with libmicrohttpd 0.9.75 (Debian
	 * 12) epoll left a connection of a 256-client burst unanswered and
	 * throughput fell from ~100k to ~1k requests/s; poll measured the same
	 * speed without the stall (limits::a_burst_of_connections_is_all_answered).
	 * TURBO: MHD does not shut a socket down before it reports the close,
	 * so splitkd can still answer a request MHD gave up on (http.c's
	 * session_end). */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
			 MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME /* idle streams (stream.h) */ |
			 (tls != NULL ? MHD_USE_TLS : 0);
	/* Over TLS the last options are the priorities and the per-handshake
	 * certificate (tls.c); without, the first of them ends the list. */
	enum MHD_OPTION tls_opt = tls != NULL ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END;
	const char *priority = tls != NULL ? tls->priority : NULL;

	return MHD_start_daemon(
		flags, 0, NULL, NULL, calls->request, calls->cls, MHD_OPTION_URI_LOG_CALLBACK,
		calls->uri, calls->cls, MHD_OPTION_NOTIFY_COMPLETED, calls->completed, calls->cls,
		MHD_OPTION_NOTIFY_CONNECTION, calls->connection, calls->cls,
		MHD_OPTION_CONNECTION_LIMIT, max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)cfg->idle_timeout, MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
		/* The pool holds the request line, the headers, MHD's records of
		 * them and the answer's headers (framing_fits keeps room for
		 * those). No bigger: MHD zeroes the whole pool after every
		 * request (a 48 KiB pool was 15% of the time under load). */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(cfg->max_header + FRAMING_POOL_EXTRA),
		tls_opt, priority, MHD_OPTION_HTTPS_CERT_CALLBACK, tls_retrieve, MHD_OPTION_END);
}

void httpd_stop(struct MHD_Daemon *engine)
{
	if (engine != NULL) {
		MHD_stop_daemon(engine);
	}
}

int httpd_add(struct MHD_Daemon *engine, int fd, const struct sockaddr *addr, socklen_t len)
{
	int one = 1, unsent_max = UNSENT_MAX;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &unsent_max, sizeof(unsent_max));
	return MHD_add_connection(engine, fd, addr, len) == MHD_YES ? 0 : -1;
}

void httpd_drain(int fd)
{
	char sink[4096];

	for (int i = 0; i < 16; i++) {
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0) {
			return;
		}
	}
}
