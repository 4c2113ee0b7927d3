/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Integration harness: starts the real splitkd binary ($SPLITKD_BIN) on
 * 127.0.0.1 port 0 (or on a listening socket handed over as systemd's
 * socket activation does, daemon_start_with), learns its port from the
 * "listening on" line, and talks to it with libcurl (timeouts set,
 * CURLOPT_NOSIGNAL). The daemon's
 * stderr goes to a temporary file, so a chatty access log never fills a
 * pipe and blocks it.
 */
#ifndef SPLITKD_HARNESS_H
#define SPLITKD_HARNESS_H

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

struct daemon {
	pid_t pid;
	unsigned port;
	char log_path[64];
	char base[64];
};

struct reply {
	long status;
	char *body;
	size_t len;
	char content_type[128];
	char allow[64];
	char etag[80];
	char connection[32];
	cJSON *json;
	long connects;  /* CURLINFO_NUM_CONNECTS */
	char head[4096]; /* the whole header block, as far as it fits */
	size_t head_len;
};

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Replaces `path` with `text` in one rename, as a config manager or an
 * atomic writer does: a reader never sees half a file. */
static inline void replace_file(const char *path, const char *text)
{
	char tmp[256];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	cr_assert_not_null(f, "%s: %s", tmp, strerror(errno));
	cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, path), 0);
}

/* `needle` in `hay`, ASCII case ignored (strcasestr is GNU's), or NULL:
 * for header lines. */
static inline const char *find_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay != '\0'; hay++) {
		if (strncasecmp(hay, needle, n) == 0) {
			return hay;
		}
	}
	return NULL;
}

static inline const char *splitkd_bin(void)
{
	const char *bin = getenv("SPLITKD_BIN");

	return bin != NULL ? bin : "build/splitkd";
}

/* A raw TCP connection to 127.0.0.1:port, for the tests libcurl is too
 * polite for. */
static inline int connect_raw(unsigned port)
{
	struct sockaddr_in a = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Reads the daemon's log file into a fresh string. */
static inline char *daemon_log(const struct daemon *d)
{
	FILE *f = fopen(d->log_path, "rb");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;

	if (f != NULL && buf != NULL) {
		n = fread(buf, 1, (1 << 20) - 1, f);
		buf[n] = '\0';
	}
	if (f != NULL) {
		fclose(f);
	}
	return buf;
}

/* What a start hands the daemon besides its flags. */
struct daemon_with {
	/* a listening socket passed as systemd passes it (dup2 to fd 3,
	 * LISTEN_FDS=1, LISTEN_PID the child's pid), and then no --listen;
	 * -1: none, and --listen 127.0.0.1:0 */
	int listen_fd;
	const char *const *env;      /* "NAME=VALUE" set in the child; NULL-terminated or NULL */
	const char *const *pid_vars; /* NAMEs set to the child's pid (WATCHDOG_PID) */
};

/* The variables a service manager sets: never passed on from the tests'
 * own environment (a CI job run under systemd has some), only as a test
 * sets them. */
static inline int manager_variable(const char *entry)
{
	static const char *const names[] = {"LISTEN_", "NOTIFY_SOCKET=", "WATCHDOG_",
					    "SPLITKD_TEST_"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strncmp(entry, names[i], strlen(names[i])) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Waits (5 s at most) for the "listening on" line and takes the port and
 * base URL from it; kills the daemon and fails the test without one. */
static inline void daemon_wait_listening(struct daemon *d)
{
	for (int i = 0; i < 500; i++) {
		char *log = daemon_log(d);
		const char *p = log ? strstr(log, "listening on http://127.0.0.1:") : NULL;
		/* with --tls-cert: https, and the name the test certificates carry */
		const char *tls = log ? strstr(log, "listening on https://127.0.0.1:") : NULL;

		if (p != NULL || tls != NULL) {
			d->port = (unsigned)strtoul(p != NULL ? p + strlen("listening on http://127.0.0.1:")
							      : tls + strlen("listening on https://127.0.0.1:"),
						    NULL, 10);
			free(log);
			snprintf(d->base, sizeof(d->base), "%s://%s:%u", p != NULL ? "http" : "https",
				 p != NULL ? "127.0.0.1" : "localhost", d->port);
			return;
		}
		free(log);
		sleep_ms(10);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	cr_assert_fail("splitkd did not start listening within 5 s");
}

/* Starts splitkd with the given extra arguments (NULL-terminated) and
 * what `with` hands it (NULL: --listen 127.0.0.1:0 and nothing else).
 * Fails the test if it does not listen within 5 s. */
static inline void daemon_start_with(struct daemon *d, const char *const *extra,
				     const struct daemon_with *with)
{
	extern char **environ;
	const char *argv[32], *envp[256];
	char pid_entries[4][64], listen_pid[32] = "LISTEN_PID=";
	const char *const *pid_vars = with != NULL ? with->pid_vars : NULL;
	int argc = 0, envc = 0, num_pid = 0, fd, listen_fd = with != NULL ? with->listen_fd : -1;

	memset(d, 0, sizeof(*d));
	snprintf(d->log_path, sizeof(d->log_path), "/tmp/splitkd-test-XXXXXX");
	fd = mkstemp(d->log_path);
	cr_assert_geq(fd, 0);
	argv[argc++] = splitkd_bin();
	if (listen_fd < 0) {
		argv[argc++] = "--listen";
		argv[argc++] = "127.0.0.1:0";
	}
	for (int i = 0; extra != NULL && extra[i] != NULL && argc < 30; i++) {
		argv[argc++] = extra[i];
	}
	argv[argc] = NULL;
	for (char **e = environ; *e != NULL && envc < 200; e++) {
		if (!manager_variable(*e)) {
			envp[envc++] = *e;
		}
	}
	for (int i = 0; with != NULL && with->env != NULL && with->env[i] != NULL && envc < 220; i++) {
		envp[envc++] = with->env[i];
	}
	while (pid_vars != NULL && pid_vars[num_pid] != NULL && num_pid < 4) {
		envp[envc++] = pid_entries[num_pid++]; /* filled in the child, which knows its pid */
	}
	if (listen_fd >= 0) {
		envp[envc++] = "LISTEN_FDS=1";
		envp[envc++] = listen_pid;
	}
	envp[envc] = NULL;
	d->pid = fork();
	cr_assert_geq(d->pid, 0);
	if (d->pid == 0) {
		long self = (long)getpid();

		for (int i = 0; i < num_pid; i++) {
			snprintf(pid_entries[i], sizeof(pid_entries[i]), "%s=%ld", pid_vars[i], self);
		}
		snprintf(listen_pid + strlen("LISTEN_PID="), sizeof(listen_pid) - strlen("LISTEN_PID="),
			 "%ld", self);
		/* fd 3, open across the exec (dup2 clears close-on-exec; a
		 * socket that is fd 3 already keeps it, so it is cleared too) */
		if (listen_fd >= 0 && ((listen_fd != 3 && dup2(listen_fd, 3) != 3) ||
				       fcntl(3, F_SETFD, 0) != 0)) {
			_exit(126);
		}
		dup2(fd, STDERR_FILENO);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(fd);
	daemon_wait_listening(d);
}

/* Starts splitkd with --listen 127.0.0.1:0 and the given extra arguments
 * (NULL-terminated). Fails the test if it does not listen within 5 s. */
static inline void daemon_start(struct daemon *d, const char *const *extra)
{
	daemon_start_with(d, extra, NULL);
}

/* A listening socket on 127.0.0.1, a free port, as a service manager
 * holds one for socket activation (close-on-exec: only the fd 3 a start
 * hands over reaches the daemon); its port in *port. */
static inline int held_socket(unsigned *port)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0x7f000001);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, SOMAXCONN), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Waits up to ms for the daemon to exit; returns its wait status, or -1. */
static inline int daemon_wait(struct daemon *d, long ms)
{
	int status;

	for (long waited = 0; waited <= ms; waited += 10) {
		pid_t r = waitpid(d->pid, &status, WNOHANG);

		if (r == d->pid) {
			d->pid = 0;
			return status;
		}
		sleep_ms(10);
	}
	return -1;
}

/* SIGTERM and wait; SIGKILL if it does not exit in 12 s. Returns the wait
 * status (or -1 when it had to be killed). Removes the log file. */
static inline int daemon_stop(struct daemon *d)
{
	int status = 0;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		status = daemon_wait(d, 12000);
		if (status == -1) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, NULL, 0);
			d->pid = 0;
		}
	}
	unlink(d->log_path);
	return status;
}

/* Stops the daemon and asserts it exited 0. Call it at the end of a test:
 * Criterion does not count an assertion that fails in a .fini, so a
 * daemon that exits non-zero (a sanitizer or valgrind finding, a crash at
 * shutdown) must be caught in the test body. */
static inline void daemon_finish(struct daemon *d)
{
	int status;

	if (d->pid <= 0) {
		return;
	}
	status = daemon_stop(d);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "splitkd exit status %d (exit code %d)", status,
		  status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static inline size_t on_body(char *data, size_t size, size_t n, void *user)
{
	struct reply *r = user;
	char *grown = realloc(r->body, r->len + size * n + 1);

	if (grown == NULL) {
		return 0;
	}
	r->body = grown;
	memcpy(r->body + r->len, data, size * n);
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static inline void copy_header(const char *line, size_t len, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);

	if (len > n && strncasecmp(line, name, n) == 0) {
		size_t v = len - n;

		while (v > 0 && (line[n + v - 1] == '\r' || line[n + v - 1] == '\n')) {
			v--;
		}
		if (v >= cap) {
			v = cap - 1;
		}
		memcpy(out, line + n, v);
		out[v] = '\0';
	}
}

static inline size_t on_header(char *data, size_t size, size_t n, void *user)
{
	struct reply *r = user;

	if (r->head_len + size * n < sizeof(r->head)) {
		memcpy(r->head + r->head_len, data, size * n);
		r->head_len += size * n;
		r->head[r->head_len] = '\0';
	}
	copy_header(data, size * n, "Content-Type: ", r->content_type, sizeof(r->content_type));
	copy_header(data, size * n, "Allow: ", r->allow, sizeof(r->allow));
	copy_header(data, size * n, "ETag: ", r->etag, sizeof(r->etag));
	copy_header(data, size * n, "Connection: ", r->connection, sizeof(r->connection));
	return size * n;
}

/* One request on an easy handle (reused across calls for keep-alive).
 * `headers` is a NULL-terminated list of "Name: value". */
static inline struct reply http_on(CURL *curl, const struct daemon *d, const char *method,
				   const char *path, const char *const *headers, const char *body,
				   long body_len)
{
	struct reply r;
	struct curl_slist *list = NULL;
	char url[8448];
	CURLcode rc;

	memset(&r, 0, sizeof(r));
	snprintf(url, sizeof(url), "%s%s", d->base, path);
	for (int i = 0; headers != NULL && headers[i] != NULL; i++) {
		list = curl_slist_append(list, headers[i]);
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
	if (body != NULL) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, body_len);
	} else {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	}
	/* after HTTPGET, which would reset it */
	curl_easy_setopt(curl, CURLOPT_NOBODY, strcmp(method, "HEAD") == 0 ? 1L : 0L);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST,
			 strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ? NULL : method);
	rc = curl_easy_perform(curl);
	curl_slist_free_all(list);
	cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
	curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &r.connects);
	if (r.body == NULL) {
		r.body = calloc(1, 1);
	}
	r.json = cJSON_ParseWithLength(r.body, r.len);
	return r;
}

static inline struct reply http(const struct daemon *d, const char *method, const char *path,
				const char *const *headers, const char *body)
{
	CURL *curl = curl_easy_init();
	struct reply r;

	cr_assert_not_null(curl);
	r = http_on(curl, d, method, path, headers, body, body ? (long)strlen(body) : 0);
	curl_easy_cleanup(curl);
	return r;
}

static inline void reply_free(struct reply *r)
{
	free(r->body);
	cJSON_Delete(r->json);
}

static inline double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsNumber(v), "%s is not a number", k);
	return v->valuedouble;
}

static inline const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsString(v), "%s is not a string", k);
	return v->valuestring;
}

/* The value after `key` in a plain scrape of /metrics (no parser), or -1. */
static inline double metric_value(const struct daemon *d, const char *key)
{
	struct reply m = http(d, "GET", "/metrics", NULL, NULL);
	const char *p = strstr(m.body, key);
	double v = p != NULL ? strtod(p + strlen(key), NULL) : -1;

	reply_free(&m);
	return v;
}

static inline void expect_problem(const struct reply *r, long status, const char *slug)
{
	char type[64];

	snprintf(type, sizeof(type), "/problems/%s", slug);
	cr_assert_eq(r->status, status, "status %ld, want %ld: %s", r->status, status, r->body);
	cr_assert_str_eq(r->content_type, "application/problem+json");
	cr_assert_not_null(r->json, "not JSON: %s", r->body);
	cr_assert_str_eq(jstr(r->json, "type"), type);
	cr_assert_eq((long)jnum(r->json, "status"), status);
	cr_assert_gt(strlen(jstr(r->json, "detail")), 0);
}

#endif
