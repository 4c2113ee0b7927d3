/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd under a service manager, as systemd runs it, with the test as
 * the manager (issue 40):
 *  - socket activation (server/activation.c, listener_adopt): a listening
 *    socket passed as systemd passes it (fd 3, LISTEN_FDS=1, LISTEN_PID
 *    the child's) is served with no --listen, and bound to nothing else;
 *    --listen then only says what to expect (a mismatch is a log line);
 *    the limits hold on it (the TLS suite serves HTTPS on one). 10
 *    restarts on the held socket under 4 clients, each request on a
 *    fresh connection, fail none and every answer is the api's own; the
 *    same restarts without the held socket lose requests (the check can
 *    see a loss).
 * Everything on loopback; every wait bounded in time and in count.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"

#include "api.h"
#include "catalog.h"
#include "embedded.h"

static struct daemon d;

static void stop(void)
{
	daemon_stop(&d);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ activation */

Test(activation, a_passed_socket_is_served_with_no_listen_and_nothing_bound, .fini = stop,
     .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-header", "2048", NULL};
	unsigned port;
	int held = held_socket(&port);
	struct daemon_with with = {.listen_fd = held};
	struct reply r;
	char *log, header[3000], *raw_head[] = {header, NULL};

	daemon_start_with(&d, args, &with);
	cr_assert_eq(d.port, port, "the daemon says it listens on %u, the socket is %u", d.port, port);
	r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16", NULL, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(jnum(r.json, "num_splits"), 11);
	reply_free(&r);
	/* a limit holds on it as on a bound socket: --max-header */
	snprintf(header, sizeof(header), "X-Pad: %02990d", 0);
	r = http(&d, "GET", "/healthz", (const char *const *)raw_head, NULL);
	cr_assert_eq(r.status, 431, "status %ld", r.status);
	reply_free(&r);
	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "passed (LISTEN_FDS)"), "%s", log);
	cr_assert_null(strstr(log, "is not among them"), "no --listen, nothing to expect: %s", log);
	free(log);
	daemon_finish(&d);
	close(held);
}

Test(activation, listen_only_says_what_to_expect, .fini = stop, .timeout = 60)
{
	unsigned port, other_port;
	int held = held_socket(&port), other = held_socket(&other_port);
	struct daemon_with with = {.listen_fd = held};
	char expect[64], *log;
	const char *args[] = {"--access-log", "off", "--listen", expect, NULL};
	struct reply r;

	/* the right address: no word of it */
	snprintf(expect, sizeof(expect), "127.0.0.1:%u", port);
	daemon_start_with(&d, args, &with);
	log = daemon_log(&d);
	cr_assert_null(strstr(log, "is not among them"), "%s", log);
	free(log);
	daemon_finish(&d);

	/* another address, one this test listens on: a line says so, and
	 * the socket passed is served; a bind there would have failed (in
	 * use), and the start with it */
	snprintf(expect, sizeof(expect), "127.0.0.1:%u", other_port);
	daemon_start_with(&d, args, &with);
	cr_assert_eq(d.port, port);
	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "is not among them"), "%s", log);
	cr_assert_not_null(strstr(log, expect), "%s", log);
	cr_assert_null(strstr(log, "cannot listen"), "%s", log);
	free(log);
	r = http(&d, "GET", "/healthz", NULL, NULL);
	cr_assert_eq(r.status, 200);
	reply_free(&r);
	daemon_finish(&d);
	close(other);
	close(held);
}

#define CLIENTS 4
#define RESTARTS 10

/* The load: CLIENTS threads, each asking its own question on a fresh
 * connection every time, until told to stop; every answer held to the
 * api's own bytes for that question. */
struct load {
	unsigned port;
	char uri[CLIENTS][96];
	char *want[CLIENTS];
	atomic_bool stop;
	atomic_uint ok, failed;
	pthread_mutex_t lock;
	char first_failure[256];
};

struct client {
	struct load *load;
	int i;
};

static size_t collect(char *data, size_t size, size_t n, void *user)
{
	char *buf = user;
	size_t have = strlen(buf), add = size * n;

	if (have + add >= 8192) {
		return 0;
	}
	memcpy(buf + have, data, add);
	buf[have + add] = '\0';
	return add;
}

static void failure(struct load *l, const char *what)
{
	atomic_fetch_add(&l->failed, 1);
	pthread_mutex_lock(&l->lock);
	if (l->first_failure[0] == '\0') {
		snprintf(l->first_failure, sizeof(l->first_failure), "%s", what);
	}
	pthread_mutex_unlock(&l->lock);
}

static void *client(void *arg)
{
	struct client *c = arg;
	struct load *l = c->load;
	char url[160], *body = malloc(8192);
	CURL *curl = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", l->port, l->uri[c->i]);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L); /* a new connection every time */
	curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
	/* a restart's wait in the backlog, under valgrind too */
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	while (!atomic_load(&l->stop)) {
		long status = 0;
		CURLcode rc;
		char what[256];

		body[0] = '\0';
		rc = curl_easy_perform(curl);
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		if (rc == CURLE_OK && status == 200 && strcmp(body, l->want[c->i]) == 0) {
			atomic_fetch_add(&l->ok, 1);
			continue;
		}
		snprintf(what, sizeof(what), "%s: %s, status %ld, %.80s", l->uri[c->i],
			 curl_easy_strerror(rc), status, body);
		failure(l, what);
		if (rc == CURLE_COULDNT_CONNECT) {
			sleep_ms(1); /* refused: no need to spin */
		}
	}
	curl_easy_cleanup(curl);
	free(body);
	return NULL;
}

/* What the api answers for a GET, here and now: the bytes a client must get. */
static char *expected(const struct catalog *cat, const char *uri)
{
	struct api_context ctx = {.catalog = cat, .version = "x", .build = "x"};
	struct api_request req = {.method = "GET", .uri = uri, .uri_len = strlen(uri)};
	struct api_response resp;
	char *body;

	api_handle(&ctx, &req, &resp);
	cr_assert_eq(resp.status, 200, "%s", uri);
	body = strndup(resp.body, resp.body_len);
	api_response_cleanup(&resp);
	return body;
}

static void load_start(struct load *l, unsigned port, pthread_t *threads, struct client *cs)
{
	char err[256];
	struct catalog *cat = catalog_load(embedded_catalog_json, embedded_catalog_json_len, err,
					   sizeof(err));

	cr_assert_not_null(cat, "%s", err);
	memset(l, 0, sizeof(*l));
	l->port = port;
	pthread_mutex_init(&l->lock, NULL);
	for (int i = 0; i < CLIENTS; i++) {
		snprintf(l->uri[i], sizeof(l->uri[i]),
			 "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=%d", 1 << (i + 1));
		l->want[i] = expected(cat, l->uri[i]);
		cs[i] = (struct client){l, i};
	}
	catalog_free(cat);
	for (int i = 0; i < CLIENTS; i++) {
		cr_assert_eq(pthread_create(&threads[i], NULL, client, &cs[i]), 0);
	}
}

static void load_stop(struct load *l, pthread_t *threads)
{
	atomic_store(&l->stop, true);
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(threads[i], NULL);
		free(l->want[i]);
	}
	pthread_mutex_destroy(&l->lock);
}

/* Waits (up to 10 s) until `more` requests more than `from` were answered. */
static void wait_answered(struct load *l, unsigned from, unsigned more)
{
	for (int i = 0; i < 1000 && atomic_load(&l->ok) < from + more; i++) {
		sleep_ms(10);
	}
	cr_assert_geq(atomic_load(&l->ok), from + more, "the load stalled: %u answered",
		      atomic_load(&l->ok));
}

/* SIGTERM, then the exit, which must be clean. */
static void stop_one(struct daemon *one)
{
	int status;

	kill(one->pid, SIGTERM);
	status = daemon_wait(one, 15000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "splitkd's exit status %d", status);
	unlink(one->log_path);
}

Test(activation, ten_restarts_on_the_held_socket_fail_no_request, .fini = stop, .timeout = 150)
{
	const char *args[] = {"--access-log", "off", NULL};
	unsigned port;
	int held = held_socket(&port);
	struct daemon_with with = {.listen_fd = held};
	struct load l;
	pthread_t threads[CLIENTS];
	struct client cs[CLIENTS];
	uint64_t t0 = now_ms();

	daemon_start_with(&d, args, &with);
	load_start(&l, port, threads, cs);
	for (int i = 0; i < RESTARTS; i++) {
		/* under load: answers since the last restart, by the new process */
		wait_answered(&l, atomic_load(&l.ok), 40);
		stop_one(&d);
		daemon_start_with(&d, args, &with);
		cr_assert_eq(d.port, port);
	}
	wait_answered(&l, atomic_load(&l.ok), 40);
	load_stop(&l, threads);
	cr_assert_eq(atomic_load(&l.failed), 0, "%u of %u requests failed across %d restarts; the first: %s",
		     atomic_load(&l.failed), atomic_load(&l.failed) + atomic_load(&l.ok), RESTARTS,
		     l.first_failure);
	cr_log_info("%d restarts on the held socket: %u requests, none failed, in %llu ms", RESTARTS,
		    atomic_load(&l.ok), (unsigned long long)(now_ms() - t0));
	daemon_finish(&d);
	close(held);
}

/* The check's own test: the same restarts with splitkd binding the port
 * itself (the socket closed with the old process, bound by the new) lose
 * requests, refused in between. */
Test(activation, the_same_restarts_binding_the_port_lose_requests, .fini = stop, .timeout = 150)
{
	char listen[64];
	const char *args[] = {"--access-log", "off", "--listen", listen, NULL};
	unsigned port;
	int probe = held_socket(&port);
	struct load l;
	pthread_t threads[CLIENTS];
	struct client cs[CLIENTS];

	close(probe); /* a free port, for --listen */
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
	/* the harness gives --listen 127.0.0.1:0 first; this one, later, wins */
	daemon_start(&d, args);
	cr_assert_eq(d.port, port);
	load_start(&l, port, threads, cs);
	for (int i = 0; i < 3 && atomic_load(&l.failed) == 0; i++) {
		wait_answered(&l, atomic_load(&l.ok), 40);
		stop_one(&d);
		daemon_start(&d, args);
	}
	load_stop(&l, threads);
	cr_assert_gt(atomic_load(&l.failed), 0, "restarts that bind the port lost nothing: the "
		     "restart test could not see a loss");
	cr_log_info("binding the port: %u of %u requests failed; the first: %s",
		    atomic_load(&l.failed), atomic_load(&l.failed) + atomic_load(&l.ok), l.first_failure);
	daemon_finish(&d);
}
