/* SPDX-License-Identifier: AGPL-3.0-only */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 2048

void log_init(struct log *log, bool json, bool access, int fd)
{
	log->json = json;
	log->access = access;
	log->fd = fd;
}

static size_t timestamp(char *out, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(out + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000);
	return n;
}

/* Appends s as JSON-string content (or, for text, with control bytes and
 * quotes escaped the same way): a log line is one line whatever a client sent. */
static size_t escape(char *out, size_t cap, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (size_t i = 0; i < len && n + 7 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c < 0x20 || c == 0x7f || c >= 0x80) {
			/* bytes >= 0x80 too: a path is not trusted to be UTF-8 */
			memcpy(out + n, "\\u00", 4);
			out[n + 4] = hex[c >> 4];
			out[n + 5] = hex[c & 15];
			n += 6;
		} else {
			out[n++] = (char)c;
		}
	}
	return n;
}

static void emit(const struct log *log, char *line, size_t n, size_t cap)
{
	if (n >= cap) {
		n = cap - 1;
	}
	line[n++] = '\n';
	/* one write per line; a short write to stderr is not worth a retry loop
	 * that could block a worker */
	if (write(log->fd, line, n) < 0) {
		return;
	}
}

void log_event(const struct log *log, const char *event, const char *fmt, ...)
{
	char line[LINE_MAX_BYTES], msg[1024];
	size_t n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log->json) {
		n += (size_t)snprintf(line, sizeof(line), "{\"ts\":\"");
		n += timestamp(line + n, sizeof(line) - n);
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\",\"event\":\"%s\",\"msg\":\"", event);
		n += escape(line + n, sizeof(line) - n - 3, msg, strlen(msg));
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\"}");
	} else {
		n += timestamp(line, sizeof(line));
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %s", event, msg);
	}
	emit(log, line, n, sizeof(line) - 1);
}

void log_access(const struct log *log, const char *method, const char *path, size_t path_len,
		unsigned status, size_t bytes, uint64_t micros)
{
	char line[LINE_MAX_BYTES], m[16];
	size_t n = 0, mlen;

	if (!log->access) {
		return;
	}
	mlen = escape(m, sizeof(m), method, strnlen(method, 8));
	m[mlen] = '\0';
	if (log->json) {
		n += (size_t)snprintf(line, sizeof(line), "{\"ts\":\"");
		n += timestamp(line + n, sizeof(line) - n);
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\",\"event\":\"access\",\"method\":\"%s\",\"path\":\"", m);
		n += escape(line + n, sizeof(line) - n - 80, path, path_len);
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "\",\"status\":%u,\"bytes\":%zu,\"us\":%llu}", status, bytes,
				      (unsigned long long)micros);
	} else {
		n += timestamp(line, sizeof(line));
		n += (size_t)snprintf(line + n, sizeof(line) - n, " access %s \"", m);
		n += escape(line + n, sizeof(line) - n - 80, path, path_len);
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\" %u %zu %lluus", status, bytes,
				      (unsigned long long)micros);
	}
	emit(log, line, n, sizeof(line) - 1);
}
