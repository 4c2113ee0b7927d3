/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The log (server/log.c) through its own API, into a temporary file: a
 * text line is "<RFC 3339 UTC, milliseconds> <event> <message>"; a JSON
 * line parses and holds ts, event and msg, whatever the message carries
 * (quotes, controls, bytes that are not UTF-8, a message longer than a
 * line); access lines only when asked, with the path escaped; and lines
 * written from several threads at once never interleave.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* Everything written to f, NUL-terminated (free it). */
static char *slurp(FILE *f, size_t *len)
{
	long n;
	char *s;

	fflush(f);
	n = lseek(fileno(f), 0, SEEK_END);
	cr_assert_geq(n, 0);
	s = malloc((size_t)n + 1);
	cr_assert_not_null(s);
	cr_assert_eq(pread(fileno(f), s, (size_t)n, 0), n);
	s[n] = '\0';
	*len = (size_t)n;
	return s;
}

/* Whether s starts with an RFC 3339 UTC time with milliseconds. */
static bool timestamped(const char *s)
{
	int y, mo, d, h, mi, sec, ms, n = 0;

	return sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &y, &mo, &d, &h, &mi, &sec, &ms, &n) == 7 &&
	       n == 24 && y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

Test(log, a_text_line_is_time_event_message)
{
	FILE *f = tmpfile();
	struct log log;
	size_t len;
	char *s;

	cr_assert_not_null(f);
	log_init(&log, false, false, fileno(f));
	log_event(&log, "reload", "ok: %s, catalog %s", "/etc/c.json", "fnv1a64:0123");
	s = slurp(f, &len);
	cr_assert(timestamped(s), "%s", s);
	cr_assert_str_eq(s + 24, " reload ok: /etc/c.json, catalog fnv1a64:0123\n");
	free(s);
	fclose(f);
}

Test(log, a_json_line_parses_whatever_the_message_carries)
{
	char long_one[3000];
	const char *const messages[] = {"plain", "a \"quoted\" path", "back\\slash", "tab\tnew\nline\x01",
					"\xff\xfe not UTF-8", "caf\xc3\xa9", long_one};

	memset(long_one, '\x02', sizeof(long_one) - 1); /* each byte escapes to six */
	long_one[sizeof(long_one) - 1] = '\0';
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++) {
		FILE *f = tmpfile();
		struct log log;
		cJSON *j;
		size_t len;
		char *s;

		cr_assert_not_null(f);
		log_init(&log, true, false, fileno(f));
		log_event(&log, "tls", "refused: %s", messages[i]);
		s = slurp(f, &len);
		cr_assert_gt(len, 0);
		cr_assert_eq(s[len - 1], '\n', "case %zu: no newline", i);
		cr_assert_null(memchr(s, '\n', len - 1), "case %zu: more than one line", i);
		j = cJSON_ParseWithLength(s, len - 1);
		cr_assert_not_null(j, "case %zu is no JSON: %s", i, s);
		cr_assert(timestamped(cJSON_GetStringValue(cJSON_GetObjectItem(j, "ts"))), "%s", s);
		cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "event")), "tls");
		cr_assert_eq(strncmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "refused: ", 9), 0,
			     "%s", s);
		if (i < 2) {
			/* what needs no cutting comes back as it went in */
			cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")) + 9, messages[i]);
		}
		cJSON_Delete(j);
		free(s);
		fclose(f);
	}
}

Test(log, access_lines_only_when_asked_with_the_path_escaped)
{
	FILE *f = tmpfile();
	struct log off, text, json;
	const char path[] = "/v1/splits?target=\"x\"\n";
	cJSON *j;
	size_t len;
	char *s;

	cr_assert_not_null(f);
	log_init(&off, false, false, fileno(f));
	log_access(&off, "GET", path, sizeof(path) - 1, 200, 512, 42);
	s = slurp(f, &len);
	cr_assert_eq(len, 0, "an access line with access logging off: %s", s);
	free(s);

	log_init(&text, false, true, fileno(f));
	log_access(&text, "GET", path, sizeof(path) - 1, 200, 512, 42);
	s = slurp(f, &len);
	cr_assert(timestamped(s), "%s", s);
	cr_assert_str_eq(s + 24, " access GET \"/v1/splits?target=\\\"x\\\"\\n\" 200 512 42us\n");
	free(s);
	cr_assert_eq(ftruncate(fileno(f), 0), 0);
	cr_assert_eq(lseek(fileno(f), 0, SEEK_SET), 0);

	log_init(&json, true, true, fileno(f));
	log_access(&json, "POST", path, sizeof(path) - 1, 413, 0, 7);
	s = slurp(f, &len);
	j = cJSON_ParseWithLength(s, len - 1);
	cr_assert_not_null(j, "%s", s);
	cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "event")), "access");
	cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "method")), "POST");
	cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "path")), path);
	cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "status")), 413);
	cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "us")), 7);
	cJSON_Delete(j);
	free(s);
	fclose(f);
}

#define WRITERS 4
#define LINES 500

struct writer {
	const struct log *log;
	int id;
};

static void *write_lines(void *arg)
{
	const struct writer *w = arg;

	for (int i = 0; i < LINES; i++) {
		log_event(w->log, "test", "writer %d line %d %s", w->id, i,
			  "padding padding padding padding padding padding padding padding");
	}
	return NULL;
}

Test(log, lines_from_threads_never_interleave, .timeout = 30)
{
	FILE *f = tmpfile();
	struct log log;
	pthread_t t[WRITERS];
	struct writer w[WRITERS];
	int seen[WRITERS] = {0};
	size_t len, lines = 0;
	char *s, *line, *next;

	cr_assert_not_null(f);
	log_init(&log, true, false, fileno(f));
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){&log, i};
		cr_assert_eq(pthread_create(&t[i], NULL, write_lines, &w[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++) {
		pthread_join(t[i], NULL);
	}
	s = slurp(f, &len);
	for (line = s; *line != '\0'; line = next) {
		cJSON *j;
		int id = -1, n = -1;

		next = strchr(line, '\n');
		cr_assert_not_null(next, "a line without its newline");
		*next++ = '\0';
		j = cJSON_Parse(line);
		cr_assert_not_null(j, "line %zu is torn: %s", lines, line);
		cr_assert_eq(sscanf(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "writer %d line %d",
				    &id, &n),
			     2);
		cr_assert(id >= 0 && id < WRITERS);
		cr_assert_eq(n, seen[id], "writer %d's lines out of order", id);
		seen[id]++;
		lines++;
		cJSON_Delete(j);
	}
	cr_assert_eq(lines, (size_t)WRITERS * LINES);
	free(s);
	fclose(f);
}
