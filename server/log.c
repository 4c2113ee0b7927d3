/* SPDX-License-Identifier: AGPL-3.0-only */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jsonw.h"

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

static void emit(const struct log *log, char *line, size_t n, size_t cap)
{
	if (n >= cap) {
		n = cap - 1;
	}
	line[n++] = '\n';
	/* one write per line; a short write to stderr is not worth a retry loop
	 * that could block an engine */
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
		n += jsonw_escape(line + n, sizeof(line) - n - 3, msg, strlen(msg));
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
	mlen = jsonw_escape(m, sizeof(m), method, strnlen(method, 8));
	m[mlen] = '\0';
	if (log->json) {
		n += (size_t)snprintf(line, sizeof(line), "{\"ts\":\"");
		n += timestamp(line + n, sizeof(line) - n);
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "\",\"event\":\"access\",\"method\":\"%s\",\"path\":\"", m);
		n += jsonw_escape(line + n, sizeof(line) - n - 80, path, path_len);
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "\",\"status\":%u,\"bytes\":%zu,\"us\":%llu}", status, bytes,
				      (unsigned long long)micros);
	} else {
		n += timestamp(line, sizeof(line));
		n += (size_t)snprintf(line + n, sizeof(line) - n, " access %s \"", m);
		n += jsonw_escape(line + n, sizeof(line) - n - 80, path, path_len);
		n += (size_t)snprintf(line + n, sizeof(line) - n, "\" %u %zu %lluus", status, bytes,
				      (unsigned long long)micros);
	}
	emit(log, line, n, sizeof(line) - 1);
}
