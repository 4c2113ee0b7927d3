/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The HTTP engine's limit on this machine: libmicrohttpd with splitkd's own
 * daemon options, answering every request with the same bytes (body and
 * headers) from one persistent response. `make bench` puts splitkd beside
 * it, so the ratio says what splitkd's own work costs on top of the engine.
 *
 * splitkd's options (server/http.c start_daemons): THREADS daemons, each
 * polling on one internal thread, with ITC, TURBO, no listening socket of
 * their own, per-connection memory --max-header + 2048, idle timeout 30 s,
 * and the URI log, completion and connection callbacks; one thread accepts
 * and hands connections round the daemons (splitkd: to the least loaded),
 * as splitkd's listener does.
 *
 * It reads whatever body a request carries (and throws it away), so for a
 * batch it is the limit of the same POST: the body read, the same answer
 * bytes sent.
 *
 * usage: mhd_static PORT THREADS BODY-FILE ETAG ("-": no ETag header)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

static struct MHD_Response *answer;

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	(void)cls;
	(void)uri;
	(void)conn;
	return NULL; /* splitkd copies the target here; nothing is needed */
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls;
	(void)conn;
	(void)why;
	*req_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	(void)cls;
	(void)conn;
	(void)socket_context;
	(void)code;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	static int headers_seen;

	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	/* answer on the second call, as splitkd does: an answer queued with the
	 * headers makes MHD close the connection after it */
	if (*req_cls != &headers_seen) {
		*req_cls = &headers_seen;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	return MHD_queue_response(conn, MHD_HTTP_OK, answer);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 20);

	if (f == NULL || buf == NULL) {
		exit(2);
	}
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* splitkd's own: the path and query are not decoded (it reads the raw target) */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

static struct MHD_Daemon *start_one(void)
{
	return MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
					MHD_USE_TURBO,
				0, NULL, NULL, on_request, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				MHD_OPTION_CONNECTION_LIMIT, 1216u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(4096 + 2048), MHD_OPTION_END);
}

static int listen_on(int port)
{
	struct sockaddr_in addr;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 4096) != 0) {
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct MHD_Daemon *d[64];
	unsigned threads, next = 0;
	size_t len;
	char *body;
	int lfd;

	if (argc != 5 || (threads = (unsigned)atoi(argv[2])) < 1 || threads > 64) {
		fprintf(stderr, "usage: mhd_static PORT THREADS(1-64) BODY-FILE ETAG|-\n");
		return 2;
	}
	body = slurp(argv[3], &len);
	answer = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(answer, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(answer, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	if (strcmp(argv[4], "-") != 0) { /* a batch answer has no ETag */
		MHD_add_response_header(answer, MHD_HTTP_HEADER_ETAG, argv[4]);
	}
	signal(SIGPIPE, SIG_IGN);
	for (unsigned i = 0; i < threads; i++) {
		d[i] = start_one();
		if (d[i] == NULL) {
			return 1;
		}
	}
	lfd = listen_on(atoi(argv[1]));
	if (lfd < 0) {
		fprintf(stderr, "mhd_static: cannot listen on %s\n", argv[1]);
		return 1;
	}
	fprintf(stderr, "listening\n");
	for (;;) { /* until killed: make bench stops it */
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		int fd = accept(lfd, (struct sockaddr *)&peer, &plen);
		int one = 1;

		if (fd < 0) {
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		MHD_add_connection(d[next++ % threads], fd, (struct sockaddr *)&peer, plen);
	}
}
