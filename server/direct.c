/* SPDX-License-Identifier: AGPL-3.0-only */
#include "direct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

size_t direct_head(char *buf, size_t cap, unsigned status, const char *reason,
		   const char *content_type, size_t body_len, time_t now)
{
	char date[64];
	struct tm tm;
	int n;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	n = snprintf(buf, cap,
		     "HTTP/1.1 %u %s\r\nDate: %s\r\nContent-Type: %s\r\n"
		     "Cache-Control: no-cache\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n",
		     status, reason, date, content_type, body_len);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

int direct_write(int fd, unsigned status, const char *reason, const char *content_type,
		 const char *body, size_t body_len, bool head_only)
{
	char head[512];
	size_t n = direct_head(head, sizeof(head), status, reason, content_type, body_len, time(NULL));

	if (n == 0 || send(fd, head, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n) {
		return -1;
	}
	if (head_only || body_len == 0) {
		return 0;
	}
	return send(fd, body, body_len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)body_len ? 0 : -1;
}

int direct_send(direct_send_fn *send_fn, void *cls, unsigned status, const char *reason,
		const char *content_type, const char *body, size_t body_len, bool head_only)
{
	char head[512];
	size_t n = direct_head(head, sizeof(head), status, reason, content_type, body_len, time(NULL));
	size_t extra = head_only || body == NULL ? 0 : body_len;
	char *all = n > 0 ? malloc(n + extra) : NULL;
	int ret = -1;

	if (all != NULL) {
		memcpy(all, head, n);
		if (extra > 0) {
			memcpy(all + n, body, extra);
		}
		ret = send_fn(cls, all, n + extra);
	}
	free(all);
	return ret;
}
