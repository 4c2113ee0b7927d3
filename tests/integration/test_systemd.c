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
 *  - the notify protocol (server/notify.c), on a datagram socket as
 *    NOTIFY_SOCKET (an abstract name): READY=1 only when a GET already
 *    succeeds, with a STATUS= line; on SIGHUP RELOADING=1 with a
 *    MONOTONIC_USEC= of the manager's clock, then READY=1 once the reload
 *    is logged; STOPPING=1 on SIGTERM; and with WATCHDOG_USEC=1000000,
 *    WATCHDOG=1 within every half second, from the serving loop: stalled
 *    (the test-only SPLITKD_TEST_STALL_TICK), the pings stop with it and
 *    a request waits, and both come back when it turns again.
 * Everything on loopback; every wait bounded in time and in count.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/un.h>

#include "harness.h"

#include "api.h"
#include "catalog.h"
#include "embedded.h"

/* The pings are timed where the manager's thread hears them: on a loaded
 * two-core machine that thread runs some milliseconds after the datagram
 * was sent, so a gap between receipts may pass half the interval by that
 * much (a 510 ms gap was seen under make test). The daemon's own schedule
 * is held to half the interval exactly by tests/unit/test_notify.c; here
 * the bound stays far inside systemd's, the whole interval (1000 ms). */
#define PING_JITTER_MS 100

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

/* The daemon's log says `says` (NULL: anything) and not `never` (NULL:
 * no such line), once the announcement is whole: its last line (the
 * version's, after the sockets' and --listen's) comes a moment after the
 * "listening on" the harness waits for (under valgrind, a long one). */
static void expect_log(const char *says, const char *never)
{
	char *log = daemon_log(&d);

	for (int i = 0; i < 500 && strstr(log, "threads, catalog ") == NULL; i++) {
		free(log);
		sleep_ms(10);
		log = daemon_log(&d);
	}
	cr_assert(strstr(log, "threads, catalog ") != NULL, "no announcement in 5 s:\n%s", log);
	cr_assert(says == NULL || strstr(log, says) != NULL, "no \"%s\" in:\n%s", says, log);
	cr_assert(never == NULL || strstr(log, never) == NULL, "\"%s\" in:\n%s", never, log);
	free(log);
}

Test(activation, a_passed_socket_is_served_with_no_listen_and_nothing_bound, .fini = stop,
     .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-header", "2048", NULL};
	unsigned port;
	int held = held_socket(&port);
	struct daemon_with with = {.listen_fd = held};
	struct reply r;
	char header[3000], *raw_head[] = {header, NULL};

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
	expect_log("passed (LISTEN_FDS)", "is not among them"); /* no --listen: nothing expected */
	daemon_finish(&d);
	close(held);
}

Test(activation, listen_only_says_what_to_expect, .fini = stop, .timeout = 60)
{
	unsigned port, other_port;
	int held = held_socket(&port), other = held_socket(&other_port);
	struct daemon_with with = {.listen_fd = held};
	char expect[64];
	const char *args[] = {"--access-log", "off", "--listen", expect, NULL};
	struct reply r;

	/* the right address: no word of it */
	snprintf(expect, sizeof(expect), "127.0.0.1:%u", port);
	daemon_start_with(&d, args, &with);
	expect_log(NULL, "is not among them");
	daemon_finish(&d);

	/* another address, one this test listens on: a line says so, and
	 * the socket passed is served; a bind there would have failed (in
	 * use), and the start with it */
	snprintf(expect, sizeof(expect), "127.0.0.1:%u", other_port);
	daemon_start_with(&d, args, &with);
	cr_assert_eq(d.port, port);
	expect_log("is not among them", "cannot listen");
	expect_log(expect, NULL);
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
	cr_assert_eq(atomic_load(&l.failed), 0,
		     "%u of %u requests failed across %d restarts; the first: %s",
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

/* ------------------------------------------------------------ notify */

#define HEARD_MAX 256

/* The manager's side: a datagram socket bound to an abstract name, and
 * a thread that keeps every message with the time it came. */
struct manager {
	int fd;
	char name[64]; /* "@..." as NOTIFY_SOCKET takes it */
	char env[80];  /* "NOTIFY_SOCKET=@..." */
	pthread_t thread;
	pthread_mutex_t lock;
	atomic_bool stop;
	size_t n;
	char text[HEARD_MAX][512];
	uint64_t at[HEARD_MAX];
};

static void *hear(void *arg)
{
	struct manager *m = arg;

	while (!atomic_load(&m->stop)) {
		char buf[512];
		ssize_t got = recv(m->fd, buf, sizeof(buf) - 1, 0);

		if (got <= 0) {
			continue; /* the receive timeout: look at stop again */
		}
		buf[got] = '\0';
		pthread_mutex_lock(&m->lock);
		if (m->n < HEARD_MAX) {
			memcpy(m->text[m->n], buf, (size_t)got + 1);
			m->at[m->n++] = now_ms();
		}
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

static void manager_start(struct manager *m)
{
	static atomic_int serial;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval wait = {0, 100 * 1000};
	size_t len;

	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "@splitkd-test-%ld-%d", (long)getpid(),
		 atomic_fetch_add(&serial, 1));
	snprintf(m->env, sizeof(m->env), "NOTIFY_SOCKET=%s", m->name);
	len = strlen(m->name);
	memcpy(a.sun_path, m->name, len);
	a.sun_path[0] = '\0';
	m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(m->fd, 0);
	cr_assert_eq(bind(m->fd, (struct sockaddr *)&a,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)),
		     0);
	setsockopt(m->fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	pthread_mutex_init(&m->lock, NULL);
	cr_assert_eq(pthread_create(&m->thread, NULL, hear, m), 0);
}

static void manager_stop(struct manager *m)
{
	atomic_store(&m->stop, true);
	pthread_join(m->thread, NULL);
	close(m->fd);
	pthread_mutex_destroy(&m->lock);
}

/* Waits (up to ms) for the next message from index *from on, passing
 * over WATCHDOG=1 and the tick's STATUS= refreshes: it must start with
 * `start` (else the test fails). Its text is copied into out, *from
 * moves past it; returns its index. */
static size_t wait_for(struct manager *m, size_t *from, const char *start, long ms, char *out,
		       size_t cap)
{
	for (long waited = 0; waited <= ms; waited += 5) {
		pthread_mutex_lock(&m->lock);
		for (size_t i = *from; i < m->n; i++) {
			if (strcmp(m->text[i], "WATCHDOG=1") == 0 ||
			    strncmp(m->text[i], "STATUS=", 7) == 0) {
				continue;
			}
			if (strncmp(m->text[i], start, strlen(start)) != 0) {
				snprintf(out, cap, "%s", m->text[i]);
				pthread_mutex_unlock(&m->lock);
				cr_assert_fail("waiting for %s, heard: %s", start, out);
			}
			snprintf(out, cap, "%s", m->text[i]);
			*from = i + 1;
			pthread_mutex_unlock(&m->lock);
			return i;
		}
		pthread_mutex_unlock(&m->lock);
		sleep_ms(5);
	}
	cr_assert_fail("no %s within %ld ms", start, ms);
	return 0;
}

static uint64_t monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A GET /healthz that must succeed on its first try, within 2 s. */
static void get_succeeds_now(const struct daemon *one, const char *when)
{
	char url[96], body[8192] = "";
	CURL *curl = curl_easy_init();
	long status = 0;
	CURLcode rc;

	snprintf(url, sizeof(url), "%s/healthz", one->base);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	/* a named buffer: GCC's ASan ends a compound literal's life with its
	 * statement, before curl_easy_perform writes to it */
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	cr_assert(rc == CURLE_OK && status == 200, "%s: GET /healthz: %s, status %ld", when,
		  curl_easy_strerror(rc), status);
}

Test(notify, ready_reloading_and_stopping_each_when_true, .fini = stop, .timeout = 60)
{
	char cat_path[] = "/tmp/splitkd-notify-XXXXXX", text[512];
	struct manager m;
	const char *args[] = {"--access-log", "off", "--catalog", cat_path, NULL};
	const char *env[] = {m.env, NULL};
	struct daemon_with with = {.listen_fd = -1, .env = env};
	size_t from = 0;
	unsigned long long at;
	uint64_t before;
	int fd = mkstemp(cat_path), status;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, embedded_catalog_json, embedded_catalog_json_len),
		     (ssize_t)embedded_catalog_json_len);
	close(fd);
	manager_start(&m);
	daemon_start_with(&d, args, &with);

	/* READY=1 once: the port answers and the catalog is loaded */
	wait_for(&m, &from, "READY=1", 5000, text, sizeof(text));
	get_succeeds_now(&d, "at READY=1");
	cr_assert_not_null(strstr(text, "\nSTATUS=serving catalog default at fnv1a64:"), "%s", text);
	cr_assert_not_null(strstr(text, "connection"), "%s", text);

	/* SIGHUP: RELOADING=1 with the manager's clock, READY=1 once done */
	before = monotonic_us();
	kill(d.pid, SIGHUP);
	wait_for(&m, &from, "RELOADING=1\n", 5000, text, sizeof(text));
	cr_assert_eq(sscanf(text, "RELOADING=1\nMONOTONIC_USEC=%llu", &at), 1, "%s", text);
	cr_assert(at >= before && at <= monotonic_us(), "MONOTONIC_USEC=%llu is not now", at);
	cr_assert_not_null(strstr(text, "\nSTATUS=reloading"), "%s", text);
	wait_for(&m, &from, "READY=1\nSTATUS=serving", 5000, text, sizeof(text));
	expect_log("reload ok: ", NULL); /* over before READY=1 */
	expect_log("(signal)", NULL);
	get_succeeds_now(&d, "after the reload's READY=1");

	/* SIGTERM: STOPPING=1 as the drain starts, then a clean exit */
	kill(d.pid, SIGTERM);
	wait_for(&m, &from, "STOPPING=1\nSTATUS=draining", 5000, text, sizeof(text));
	status = daemon_wait(&d, 12000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit %d", status);
	pthread_mutex_lock(&m.lock);
	for (size_t i = 0; i < m.n; i++) {
		cr_assert(strcmp(m.text[i], "WATCHDOG=1") != 0, "a ping with no WATCHDOG_USEC");
	}
	pthread_mutex_unlock(&m.lock);
	manager_stop(&m);
	unlink(cat_path);
}

/* The longest gap between WATCHDOG=1s heard in [from_ms, to_ms), and how
 * many there were. */
static uint64_t longest_gap(struct manager *m, uint64_t from_ms, uint64_t to_ms, unsigned *pings)
{
	uint64_t last = 0, longest = 0;

	*pings = 0;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->text[i], "WATCHDOG=1") != 0 || m->at[i] < from_ms || m->at[i] >= to_ms) {
			continue;
		}
		longest = last != 0 && m->at[i] - last > longest ? m->at[i] - last : longest;
		last = m->at[i];
		(*pings)++;
	}
	pthread_mutex_unlock(&m->lock);
	return longest;
}

/* The first WATCHDOG=1 heard at or after `from_ms`, or 0. */
static uint64_t first_ping(struct manager *m, uint64_t from_ms)
{
	uint64_t at = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n && at == 0; i++) {
		if (strcmp(m->text[i], "WATCHDOG=1") == 0 && m->at[i] >= from_ms) {
			at = m->at[i];
		}
	}
	pthread_mutex_unlock(&m->lock);
	return at;
}

Test(notify, the_watchdog_is_pinged_by_the_serving_loop_and_stops_with_it, .fini = stop,
     .timeout = 60)
{
	struct manager m;
	const char *args[] = {"--access-log", "off", NULL};
	/* the serving loop stalls for 2 s, 2 s after its first tick */
	const char *env[] = {m.env, "WATCHDOG_USEC=1000000", "SPLITKD_TEST_STALL_TICK=2000 2000", NULL};
	const char *pid_vars[] = {"WATCHDOG_PID", NULL};
	struct daemon_with with = {.listen_fd = -1, .env = env, .pid_vars = pid_vars};
	char text[512];
	size_t from = 0;
	uint64_t ready, gap, stalled = 0, resumed, asked, answered;
	unsigned pings;

	manager_start(&m);
	daemon_start_with(&d, args, &with);
	wait_for(&m, &from, "READY=1", 5000, text, sizeof(text));
	ready = now_ms();
	/* serving: a ping within every half second */
	sleep_ms(1500);
	gap = longest_gap(&m, ready, now_ms(), &pings);
	cr_assert_geq(pings, 3, "%u pings in 1.5 s", pings);
	cr_assert_leq(gap, 500 + PING_JITTER_MS, "a gap of %llu ms between pings, over half of WATCHDOG_USEC",
		      (unsigned long long)gap);

	/* stalled: the pings stop, and a request waits with them */
	for (int i = 0; i < 300 && stalled == 0; i++) {
		uint64_t t = now_ms(), last = 0;

		pthread_mutex_lock(&m.lock);
		for (size_t k = 0; k < m.n; k++) {
			last = strcmp(m.text[k], "WATCHDOG=1") == 0 ? m.at[k] : last;
		}
		pthread_mutex_unlock(&m.lock);
		stalled = last != 0 && t - last >= 700 ? last : 0;
		sleep_ms(10);
	}
	cr_assert_neq(stalled, 0, "the pings never stopped: they do not come from the serving loop");
	asked = now_ms();
	get_succeeds_now(&d, "after the stall");
	answered = now_ms();
	for (int i = 0; i < 100 && (resumed = first_ping(&m, stalled + 1)) == 0; i++) {
		sleep_ms(10); /* heard on the manager's thread: a moment after it was sent */
	}
	cr_assert_neq(resumed, 0, "the pings did not come back with the loop");
	cr_assert_geq(resumed - stalled, 1500, "the stall of 2 s was a gap of only %llu ms",
		      (unsigned long long)(resumed - stalled));
	cr_assert_geq(answered + 100, resumed, "a request was answered %llu ms before the loop "
		      "turned again", (unsigned long long)(resumed - answered));
	cr_assert_geq(answered - asked, 300, "a request asked during the stall was answered in "
		      "%llu ms: the stall was not the serving loop's", (unsigned long long)(answered - asked));

	/* turning again: a ping within every half second */
	sleep_ms(1500);
	gap = longest_gap(&m, resumed, now_ms(), &pings);
	cr_assert_geq(pings, 3, "%u pings in 1.5 s after the stall", pings);
	cr_assert_leq(gap, 500 + PING_JITTER_MS, "a gap of %llu ms after the stall", (unsigned long long)gap);
	daemon_finish(&d);
	manager_stop(&m);
}
