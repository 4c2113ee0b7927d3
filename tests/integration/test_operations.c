/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Running splitkd: conditional GET, /metrics (checked with the Prometheus
 * project's own parser), SIGHUP reload and SIGTERM drain under concurrent
 * load, and every limit answering as documented.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"

static struct daemon d;

/* Cleanup only: exit status is asserted in each test (daemon_finish). */
static void stop(void)
{
	daemon_stop(&d);
}

/* ---------------------------------------------------- conditional GET */

Test(ops, etag_304_and_stale_200, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	const char *path = "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16";
	char header[128];
	const char *cond[] = {header, NULL};
	struct reply a, same, stale, head;

	daemon_start(&d, args);
	a = http(&d, "GET", path, NULL, NULL);
	cr_assert_eq(a.status, 200);
	cr_assert_eq(strlen(a.etag), 18, "ETag: %s", a.etag);
	snprintf(header, sizeof(header), "If-None-Match: %s", a.etag);
	same = http(&d, "GET", path, cond, NULL);
	cr_assert_eq(same.status, 304);
	cr_assert_eq(same.len, 0);
	cr_assert_str_eq(same.etag, a.etag);
	head = http(&d, "HEAD", path, cond, NULL);
	cr_assert_eq(head.status, 304);
	snprintf(header, sizeof(header), "If-None-Match: \"0000000000000000\"");
	stale = http(&d, "GET", path, cond, NULL);
	cr_assert_eq(stale.status, 200);
	cr_assert_str_eq(stale.body, a.body);
	reply_free(&a);
	reply_free(&same);
	reply_free(&stale);
	reply_free(&head);
	daemon_finish(&d);
}

Test(ops, replicas_give_the_same_tags, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	struct daemon other;
	struct reply a, b;

	daemon_start(&d, args);
	daemon_start(&other, args);
	a = http(&d, "GET", "/v1/matrix?max_batch_size=8", NULL, NULL);
	b = http(&other, "GET", "/v1/matrix?max_batch_size=8", NULL, NULL);
	cr_assert_str_eq(a.etag, b.etag);
	reply_free(&a);
	reply_free(&b);
	cr_assert_eq(daemon_stop(&other), 0);
	cr_assert_eq(daemon_stop(&d), 0);
	daemon_finish(&d);
}

/* Sends raw bytes on a new connection and reads until the peer closes or
 * 2 s pass; returns the bytes read (free them). */
static char *raw_exchange(unsigned port, const char *req)
{
	int fd = connect_raw(port);
	char *buf = calloc(1, 65536);
	size_t n = 0;

	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t got;

		if (poll(&p, 1, 2000) != 1) {
			break;
		}
		got = read(fd, buf + n, 65535 - n);
		if (got <= 0) {
			break;
		}
		n += (size_t)got;
	}
	close(fd);
	return buf;
}

/* RFC 9110 8.6 and 15.4.5: a 304 has no content and so no Content-Type,
 * and a Content-Length only if it is the 200's (issue 9, point 3). */
Test(ops, a_304_announces_the_200s_length_and_no_content_type, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	struct reply full = {0};
	char req[512], want[64];
	char *raw;

	daemon_start(&d, args);
	full = http(&d, "GET", "/openapi.json", NULL, NULL);
	cr_assert_eq(full.status, 200);
	snprintf(req, sizeof(req),
		 "GET /openapi.json HTTP/1.1\r\nHost: t\r\nIf-None-Match: %s\r\nConnection: close\r\n\r\n",
		 full.etag);
	raw = raw_exchange(d.port, req);
	cr_assert(strncmp(raw, "HTTP/1.1 304 ", 13) == 0, "%.200s", raw);
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", full.len);
	cr_assert(strstr(raw, want) != NULL, "want%s in\n%s", want, raw);
	cr_assert(strstr(raw, "\r\nContent-Type:") == NULL, "%s", raw);
	cr_assert(strstr(raw, full.etag) != NULL);
	cr_assert_str_eq(strstr(raw, "\r\n\r\n") + 4, "", "a 304 has no body");
	free(raw);
	reply_free(&full);
	daemon_finish(&d);
}

/* A second splitkd on a port in use is an error (issue 9, point 7), unless
 * both ask to share it. */
Test(ops, a_busy_port_is_an_error_unless_sharing_is_asked_for, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--reuse-port", NULL};
	char listen[64], cmd[256];
	FILE *p;
	char out[512] = {0};
	int status;

	daemon_start(&d, NULL);
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", d.port);
	snprintf(cmd, sizeof(cmd), "%s --listen %s 2>&1", splitkd_bin(), listen);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_gt(fread(out, 1, sizeof(out) - 1, p), 0);
	status = pclose(p);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit status %d: %s", status, out);
	cr_assert(strstr(out, "Address already in use") != NULL, "%s", out);
	cr_assert(strstr(out, listen) != NULL, "%s", out);
	daemon_finish(&d);

	/* both with --reuse-port: the second starts beside the first */
	daemon_start(&d, args);
	{
		struct daemon second;
		const char *same[] = {"--access-log", "off", "--reuse-port", NULL};
		struct reply r;

		daemon_start(&second, same);
		cr_assert_neq(second.port, 0);
		r = http(&second, "GET", "/healthz", NULL, NULL);
		cr_assert_eq(r.status, 200);
		reply_free(&r);
		cr_assert_eq(daemon_stop(&second), 0);
	}
	daemon_finish(&d);
}

/* ------------------------------------------------------------ metrics */

/* The value of one sample, as the Prometheus parser reads it; -1 if absent. */
static double sample(const char *parsed, const char *key)
{
	const char *p = strstr(parsed, key);

	return p != NULL ? strtod(p + strlen(key) + 1, NULL) : -1;
}

/* Scrapes /metrics, runs it through check_metrics.py, returns its output. */
static char *scrape_parsed(void)
{
	struct reply r = http(&d, "GET", "/metrics", NULL, NULL);
	char in[] = "/tmp/splitkd-metrics-XXXXXX", cmd[256];
	int fd = mkstemp(in);
	FILE *p;
	char *out = calloc(1, 1 << 16);
	size_t n;
	int status;

	cr_assert_eq(r.status, 200);
	cr_assert(strncmp(r.content_type, "text/plain; version=0.0.4", 25) == 0, "%s", r.content_type);
	cr_assert_eq(write(fd, r.body, r.len), (ssize_t)r.len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/integration/check_metrics.py < %s", in);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(out, 1, (1 << 16) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	unlink(in);
	cr_assert_eq(status, 0, "the Prometheus parser refused the scrape:\n%s", r.body);
	reply_free(&r);
	return out;
}

Test(ops, metrics_parse_and_move_with_traffic, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	const char *key200 = "splitkd_requests_total{route=\"/v1/splits\",status=\"200\"}";
	const char *key404 = "splitkd_requests_total{route=\"/v1/splits\",status=\"404\"}";
	const char *hopper = "splitkd_decisions_total{catalog=\"default\",policy=\"auto\",target=\"hopper\"}";
	const char *hist = "splitkd_request_duration_seconds_count{route=\"/v1/splits\"}";
	char *before, *after;
	struct reply r;

	daemon_start(&d, args);
	before = scrape_parsed();
	cr_assert(strstr(before, "splitkd_build_info{") != NULL, "%s", before);
	cr_assert(strstr(before, "process_resident_memory_bytes{} ") != NULL);
	cr_assert(strstr(before, "splitkd_catalog_info{catalog=\"default\",digest=\"fnv1a64:") != NULL);
	cr_assert_gt(sample(before, "process_start_time_seconds{}"), 1.7e9);
	for (int i = 0; i < 5; i++) {
		r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b", NULL, NULL);
		reply_free(&r);
	}
	r = http(&d, "GET", "/v1/splits?target=zzz&model=qwen3.8-27b", NULL, NULL);
	reply_free(&r);
	after = scrape_parsed();
	cr_assert_eq(sample(after, key200) - (sample(before, key200) < 0 ? 0 : sample(before, key200)), 5,
		     "%s", after);
	cr_assert_eq(sample(after, key404), 1);
	cr_assert_eq(sample(after, hopper), 5);
	cr_assert_eq(sample(after, hist), 6);
	cr_assert_geq(sample(after, "splitkd_connections{}"), 1);
	free(before);
	free(after);
	daemon_finish(&d);
}

Test(ops, metrics_never_label_with_raw_input, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	struct reply r, m;

	daemon_start(&d, args);
	r = http(&d, "GET", "/evil%22label?target=%22x", NULL, NULL);
	reply_free(&r);
	r = http(&d, "GET", "/v1/splits?target=%22injected&model=qwen3-8b", NULL, NULL);
	reply_free(&r);
	m = http(&d, "GET", "/metrics", NULL, NULL);
	cr_assert(strstr(m.body, "injected") == NULL);
	cr_assert(strstr(m.body, "evil") == NULL);
	cr_assert(strstr(m.body, "route=\"other\",status=\"404\"") != NULL, "%s", m.body);
	reply_free(&m);
	daemon_finish(&d);
}

/* Every status splitkd sends has its own label (issue 9, point 9: 417 and
 * 501 were counted as "other"). */
Test(ops, metrics_count_417_and_501_by_their_status, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	char *raw, *parsed;

	daemon_start(&d, args);
	raw = raw_exchange(d.port, "GET /healthz HTTP/1.1\r\nHost: t\r\nExpect: teapot\r\n\r\n");
	cr_assert(strncmp(raw, "HTTP/1.1 417 ", 13) == 0, "%.100s", raw);
	free(raw);
	raw = raw_exchange(d.port, "POST /v1/splits HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n");
	cr_assert(strncmp(raw, "HTTP/1.1 501 ", 13) == 0, "%.100s", raw);
	free(raw);
	parsed = scrape_parsed();
	cr_assert_eq(sample(parsed, "splitkd_requests_total{route=\"/healthz\",status=\"417\"}"), 1,
		     "%s", parsed);
	cr_assert_eq(sample(parsed, "splitkd_requests_total{route=\"/v1/splits\",status=\"501\"}"), 1);
	cr_assert(strstr(parsed, "status=\"other\"") == NULL, "%s", parsed);
	free(parsed);
	daemon_finish(&d);
}

/* ------------------------------------------- load, reload and drain */

struct load {
	const struct daemon *d;
	atomic_bool stop;
	atomic_long ok, failed, refused;
	char want_sm[2][32]; /* either catalog's answer is right; a mix is not */
	char last_error[256];
};

static void *load_thread(void *arg)
{
	struct load *l = arg;
	CURL *curl = curl_easy_init();

	while (!atomic_load(&l->stop)) {
		struct reply r;
		char url[256];
		CURLcode rc;
		long header_bytes = 0;

		memset(&r, 0, sizeof(r));
		snprintf(url, sizeof(url), "%s/v1/splits?target=x&num_q_heads=2", l->d->base);
		curl_easy_setopt(curl, CURLOPT_URL, url);
		curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
		rc = curl_easy_perform(curl);
		curl_easy_getinfo(curl, CURLINFO_HEADER_SIZE, &header_bytes);
		if (rc != CURLE_OK && header_bytes == 0) {
			/* Not a byte of an answer: the server never took this request
			 * (a drain shut the listener, or closed a kept-alive connection
			 * as the request went out). A load balancer sends it elsewhere,
			 * as the fleet test shows; here it is counted, not failed. A
			 * request the server began to answer must finish. */
			atomic_fetch_add(&l->refused, 1);
		} else {
			long status = 0;

			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
			if (rc == CURLE_OK && status == 200 && r.body != NULL &&
			    (strstr(r.body, l->want_sm[0]) != NULL || strstr(r.body, l->want_sm[1]) != NULL)) {
				atomic_fetch_add(&l->ok, 1);
			} else {
				atomic_fetch_add(&l->failed, 1);
				snprintf(l->last_error, sizeof(l->last_error), "rc=%d status=%ld body=%.120s", rc,
					 status, r.body ? r.body : "");
			}
		}
		free(r.body);
	}
	curl_easy_cleanup(curl);
	return NULL;
}

/* ok + error reloads, from /metrics. */
static int reloads_seen(const struct daemon *dd)
{
	struct reply r = http(dd, "GET", "/metrics", NULL, NULL);
	const char *ok = strstr(r.body, "splitkd_reloads_total{result=\"ok\"} ");
	const char *bad = strstr(r.body, "splitkd_reloads_total{result=\"error\"} ");
	int n = -1;

	if (ok != NULL && bad != NULL) {
		n = (int)strtol(ok + strlen("splitkd_reloads_total{result=\"ok\"} "), NULL, 10) +
		    (int)strtol(bad + strlen("splitkd_reloads_total{result=\"error\"} "), NULL, 10);
	}
	reply_free(&r);
	return n;
}

/* Four load threads against d; an answer is right if it holds either
 * marker (one per catalog a reload may be serving). */
static void load_start(struct load *l, pthread_t th[4], const char *want_a, const char *want_b)
{
	memset(l, 0, sizeof(*l));
	l->d = &d;
	snprintf(l->want_sm[0], sizeof(l->want_sm[0]), "%s", want_a);
	snprintf(l->want_sm[1], sizeof(l->want_sm[1]), "%s", want_b);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (int i = 0; i < 4; i++) {
		pthread_create(&th[i], NULL, load_thread, l);
	}
}

static const char *catalog_a =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
static const char *catalog_b =
	"{\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}";
static const char *catalog_broken = "{\"targets\":[{\"name\":\"x\",\"sm_count\":20}],\"models\":[]}";

Test(ops, sighup_under_load_loses_nothing, .fini = stop, .timeout = 90)
{
	char path[] = "/tmp/splitkd-hup-XXXXXX";
	int fd = mkstemp(path);
	/* SIGHUP alone (no watch), so every reload counted is one sent */
	const char *args[] = {"--access-log", "off", "--catalog", path, "--catalog-check", "0", NULL};
	struct load l;
	pthread_t th[4];
	struct reply r;

	close(fd);
	replace_file(path, catalog_a);
	daemon_start(&d, args);
	load_start(&l, th, "\"sm_count\":10", "\"sm_count\":20");
	for (int round = 0; round < 11; round++) {
		replace_file(path, round == 10 ? catalog_b
					       : (round % 3 == 2 ? catalog_broken : (round % 2 ? catalog_b : catalog_a)));
		kill(d.pid, SIGHUP);
		/* signals of one kind do not queue: wait for this reload to be
		 * counted before sending the next, or two could merge */
		for (int waited = 0; reloads_seen(&d) < round + 1 && waited < 500; waited++) {
			sleep_ms(10);
		}
		cr_assert_eq(reloads_seen(&d), round + 1, "reload %d was not counted", round);
		sleep_ms(50); /* load runs across each swap */
	}
	atomic_store(&l.stop, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
	}
	cr_assert_eq(atomic_load(&l.failed), 0, "%ld failed, e.g. %s", atomic_load(&l.failed), l.last_error);
	cr_assert_eq(atomic_load(&l.refused), 0);
	cr_assert_gt(atomic_load(&l.ok), 100, "only %ld requests", atomic_load(&l.ok));
	r = http(&d, "GET", "/v1/splits?target=x&num_q_heads=2", NULL, NULL);
	cr_assert_eq(jnum(r.json, "sm_count"), 20, "the last good catalog is not the one served");
	reply_free(&r);
	r = http(&d, "GET", "/metrics", NULL, NULL);
	cr_assert(strstr(r.body, "splitkd_reloads_total{result=\"error\"} 3") != NULL, "%s", r.body);
	cr_assert(strstr(r.body, "splitkd_reloads_total{result=\"ok\"} 8") != NULL, "%s", r.body);
	reply_free(&r);
	unlink(path);
	daemon_finish(&d);
}

/* A POST whose body trickles in over ~600 ms, so it is in flight when
 * SIGTERM lands. */
struct slow {
	int chunks_sent;
};

/* Set once the slow POST's headers and first chunk are on the wire, so a
 * test signals the daemon only when that request is really in flight. */
static atomic_bool slow_begun;

static size_t slow_read(char *buf, size_t size, size_t n, void *user)
{
	struct slow *s = user;
	static const char *parts[] = {"{\"target\":", "\"x\",", "\"num_q_heads\"", ":2", "}"};

	(void)size;
	(void)n;
	if (s->chunks_sent == 5) {
		return 0;
	}
	if (s->chunks_sent == 1) {
		atomic_store(&slow_begun, true); /* curl asks for more once it sent the first */
	}
	sleep_ms(120);
	memcpy(buf, parts[s->chunks_sent], strlen(parts[s->chunks_sent]));
	return strlen(parts[s->chunks_sent++]);
}

static void *slow_post(void *arg)
{
	const struct daemon *dd = arg;
	CURL *curl = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	struct slow s = {0};
	struct reply *r = calloc(1, sizeof(*r));
	char url[128];

	h = curl_slist_append(h, "Transfer-Encoding: chunked");
	snprintf(url, sizeof(url), "%s/v1/splits", dd->base);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, slow_read);
	curl_easy_setopt(curl, CURLOPT_READDATA, &s);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	if (curl_easy_perform(curl) == CURLE_OK) {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(curl);
	return r;
}

/* Starts the slow POST and waits (5 s at most) until it is in flight. */
static void start_slow_post(pthread_t *th, const struct daemon *dd)
{
	atomic_store(&slow_begun, false);
	pthread_create(th, NULL, slow_post, (void *)dd);
	for (int i = 0; i < 500 && !atomic_load(&slow_begun); i++) {
		sleep_ms(10);
	}
	cr_assert(atomic_load(&slow_begun), "the slow POST never started");
	sleep_ms(50);
}

Test(ops, sigterm_under_load_drains_and_exits_zero, .timeout = 90)
{
	char path[] = "/tmp/splitkd-term-XXXXXX";
	int fd = mkstemp(path);
	const char *args[] = {"--access-log", "off", "--catalog", path, "--drain-timeout", "5", NULL};
	struct load l;
	pthread_t th[4], slow;
	struct reply *sr, ready;
	int status;

	close(fd);
	replace_file(path, catalog_a);
	daemon_start(&d, args);
	load_start(&l, th, "\"sm_count\":10", "\"sm_count\":10");
	start_slow_post(&slow, &d); /* in flight; load is running */
	ready = http(&d, "GET", "/readyz", NULL, NULL);
	cr_assert_eq(ready.status, 200);
	reply_free(&ready);
	kill(d.pid, SIGTERM);
	pthread_join(slow, (void **)&sr);
	status = daemon_wait(&d, 10000);
	atomic_store(&l.stop, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
	}
	cr_assert_eq(sr->status, 200, "the in-flight POST was cut: %s", sr->body ? sr->body : "");
	cr_assert(strstr(sr->body, "\"num_splits\"") != NULL);
	cr_assert_eq(atomic_load(&l.failed), 0, "%ld failed in flight, e.g. %s", atomic_load(&l.failed),
		     l.last_error);
	cr_assert_gt(atomic_load(&l.ok), 10);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
	free(sr->body);
	free(sr);
	unlink(d.log_path);
	unlink(path);
	daemon_finish(&d);
}

Test(ops, readyz_turns_503_while_draining, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--drain-timeout", "5", NULL};
	CURL *curl = curl_easy_init();
	struct reply first, during;
	pthread_t slow;
	struct reply *sr;
	int status;

	daemon_start(&d, args);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	first = http_on(curl, &d, "GET", "/readyz", NULL, NULL, 0); /* a kept-alive connection */
	cr_assert_eq(first.status, 200);
	start_slow_post(&slow, &d); /* keeps the drain open a while */
	kill(d.pid, SIGTERM);
	/* the kept-alive connection asks until the signal has been taken (3 s
	 * at most: a loaded machine may be slow to schedule the main thread) */
	during = http_on(curl, &d, "GET", "/readyz", NULL, NULL, 0);
	for (int i = 0; i < 30 && during.status == 200; i++) {
		reply_free(&during);
		sleep_ms(100);
		during = http_on(curl, &d, "GET", "/readyz", NULL, NULL, 0);
	}
	cr_assert_eq(during.status, 503, "%s", during.body);
	cr_assert_str_eq(jstr(during.json, "status"), "draining");
	cr_assert_str_eq(during.connection, "close");
	pthread_join(slow, (void **)&sr);
	status = daemon_wait(&d, 10000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	reply_free(&first);
	reply_free(&during);
	free(sr->body);
	free(sr);
	curl_easy_cleanup(curl);
	unlink(d.log_path);
	daemon_finish(&d);
}

/* ------------------------------------------------------------- limits */

/* True when the peer closes the connection within ms (read returns 0 or
 * an error). */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	char buf[256];

	if (poll(&p, 1, ms) <= 0) {
		return false;
	}
	return read(fd, buf, sizeof(buf)) <= 0;
}

Test(limits, header_over_the_limit_is_431_problem, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-header", "4096", NULL};
	char *big = malloc(6000);
	const char *headers[] = {big, NULL};
	struct reply r;

	daemon_start(&d, args);
	memcpy(big, "X-Big: ", 7);
	memset(big + 7, 'a', 5000);
	big[5007] = '\0';
	r = http(&d, "GET", "/healthz", headers, NULL);
	expect_problem(&r, 431, "header-too-large");
	reply_free(&r);
	free(big);
	daemon_finish(&d);
}

/* A raised --max-header holds too: a 12 KiB header block is answered. */
Test(limits, a_raised_max_header_takes_a_larger_request, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-header", "16384", NULL};
	char *big = malloc(13000);
	const char *headers[] = {big, NULL};
	struct reply r;

	daemon_start(&d, args);
	memcpy(big, "X-Big: ", 7);
	memset(big + 7, 'a', 12 * 1024);
	big[7 + 12 * 1024] = '\0';
	r = http(&d, "GET", "/healthz", headers, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	reply_free(&r);
	free(big);
	daemon_finish(&d);
}

/* The value of a counter in /metrics (plain scrape, no parser). */
static double counter(const char *key)
{
	return metric_value(&d, key);
}

/* Issue 14: a header block that keeps arriving, one line a while, is cut at
 * --header-timeout (1 s here) however busy it keeps the connection; counted.
 * Wide margins: cut after 1 s, within 4 s (a sweep every 100 ms). */
Test(limits, a_slowloris_is_cut_at_the_header_deadline, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--header-timeout", "1", NULL};
	const char *key = "splitkd_connections_closed_total{reason=\"header_timeout\"} ";
	struct timespec t0, t1;
	int fd, cut_ms = -1;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	cr_assert_eq(write(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\n", 32), 32);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 40 && cut_ms < 0; i++) {
		struct pollfd p = {fd, POLLIN, 0};

		if (write(fd, "X-a: b\r\n", 8) != 8 || (poll(&p, 1, 100) == 1)) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			cut_ms = (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
		}
	}
	close(fd);
	cr_assert_geq(cut_ms, 900, "cut after %d ms, before the 1 s deadline", cut_ms);
	cr_assert_leq(cut_ms, 4000, "not cut within 4 s (%d)", cut_ms);
	cr_assert_eq(counter(key), 1);
	daemon_finish(&d);
}

/* Issue 14: a body slower than --body-timeout + bytes / --body-min-rate is
 * cut (here 1 s + 1 s per 1000 bytes: 10 bytes every 300 ms cannot keep up). */
Test(limits, a_slow_body_is_cut_at_its_minimum_rate, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--body-timeout", "1", "--body-min-rate", "1000",
			      NULL};
	const char *head = "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
			   "Content-Length: 4096\r\n\r\n";
	const char *key = "splitkd_connections_closed_total{reason=\"body_timeout\"} ";
	int fd, sent = 0;
	bool cut = false;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	cr_assert_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
	while (!cut && sent < 4000) {
		struct pollfd p = {fd, POLLIN, 0};

		cut = write(fd, "          ", 10) != 10 || poll(&p, 1, 300) == 1;
		sent += 10;
	}
	close(fd);
	cr_assert(cut, "a body at 33 bytes a second was never cut");
	cr_assert_lt(sent, 400, "cut only after %d bytes (%d s)", sent, sent / 33);
	cr_assert_eq(counter(key), 1);
	daemon_finish(&d);
}

/* Issue 14: over --body-budget a POST is answered 503 overloaded with
 * Retry-After, before its body is read; counted as shed. */
Test(limits, a_body_over_the_budget_is_503_with_retry_after, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-body", "1048576", "--body-budget",
			      "1048576", NULL};
	const char *first = "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
			    "Content-Length: 700000\r\n\r\n{";
	int holder;
	char *raw;

	daemon_start(&d, args);
	holder = connect_raw(d.port); /* takes 700,000 of the 1 MiB budget and holds it */
	cr_assert_eq(write(holder, first, strlen(first)), (ssize_t)strlen(first));
	sleep_ms(200);
	raw = raw_exchange(d.port, "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: "
				   "application/json\r\nContent-Length: 400000\r\n\r\n");
	cr_assert(strncmp(raw, "HTTP/1.1 503 ", 13) == 0, "%.300s", raw);
	cr_assert(strstr(raw, "\r\nRetry-After: 1\r\n") != NULL, "%s", raw);
	cr_assert(strstr(raw, "/problems/overloaded") != NULL, "%s", raw);
	free(raw);
	cr_assert_eq(counter("\nsplitkd_requests_shed_total "), 1);
	close(holder);
	/* the budget is back once the holder has gone */
	sleep_ms(200);
	raw = raw_exchange(d.port, "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: "
				   "application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
	cr_assert(strncmp(raw, "HTTP/1.1 400 ", 13) == 0, "%.300s", raw);
	free(raw);
	daemon_finish(&d);
}

Test(limits, idle_connections_are_closed, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--idle-timeout", "1", NULL};
	int fd;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	cr_assert(closed_within(fd, 4000), "an idle connection stayed open past --idle-timeout");
	close(fd);
	daemon_finish(&d);
}

/* The status of the answer to a GET sent on fd, waiting up to ms; 0 when
 * none came (nothing, or the connection closed). */
static int answer_within(int fd, int ms)
{
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	struct pollfd p = {fd, POLLIN, 0};
	char buf[512];
	ssize_t n;

	if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1 || poll(&p, 1, ms) <= 0) {
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 13 || strncmp(buf, "HTTP/1.1 ", 9) != 0) {
		return 0;
	}
	buf[n] = '\0';
	return atoi(buf + 9);
}

/* Past --max-connections a newcomer waits (held, unread) and comes in
 * when a slot frees; it is not closed (issue 52). */
Test(limits, connections_over_the_limit_wait_for_a_slot, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-connections", "4", NULL};
	int fds[8];
	int closed = 0;
	struct reply r;

	daemon_start(&d, args);
	for (int i = 0; i < 8; i++) {
		fds[i] = connect_raw(d.port);
		sleep_ms(20); /* in order: the first four in the table */
	}
	sleep_ms(1500);
	for (int i = 0; i < 8; i++) {
		struct pollfd p = {fds[i], POLLIN, 0};

		closed += poll(&p, 1, 0) == 1 ? 1 : 0;
	}
	cr_assert_eq(closed, 0, "%d of 8 connections closed with a limit of 4: held ones must wait",
		     closed);
	/* a held one is not read: its request waits */
	cr_assert_eq(answer_within(fds[4], 300), 0, "a held connection was served past the limit");
	/* one slot frees: the first held comes in and its request is answered */
	close(fds[0]);
	{
		struct pollfd p = {fds[4], POLLIN, 0};
		char buf[512];
		ssize_t n = poll(&p, 1, 5000) == 1 ? read(fds[4], buf, sizeof(buf) - 1) : -1;

		cr_assert(n > 13 && strncmp(buf, "HTTP/1.1 200", 12) == 0,
			  "the held connection's request was not answered once a slot freed");
	}
	for (int i = 1; i < 4; i++) {
		close(fds[i]);
	}
	for (int i = 5; i < 8; i++) {
		cr_assert_eq(answer_within(fds[i], 5000), 200, "held connection %d", i);
	}
	for (int i = 4; i < 8; i++) {
		close(fds[i]);
	}
	sleep_ms(200);
	r = http(&d, "GET", "/healthz", NULL, NULL);
	cr_assert_eq(r.status, 200);
	reply_free(&r);
	daemon_finish(&d);
}

/* SIGTERM with a connection held: the drain gives it a slot (the idle
 * one's) and answers it, with Connection: close, before it stops; a held
 * request is not dropped as if nothing were in flight. */
Test(limits, a_held_connection_is_answered_by_the_drain, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-connections", "1", NULL};
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	struct pollfd p;
	char buf[512];
	ssize_t n;
	int idle, held;

	daemon_start(&d, args);
	idle = connect_raw(d.port);
	sleep_ms(50);
	held = connect_raw(d.port);
	cr_assert_eq(write(held, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	sleep_ms(300);
	kill(d.pid, SIGTERM);
	p = (struct pollfd){held, POLLIN, 0};
	cr_assert_eq(poll(&p, 1, 8000), 1, "no answer to the held request by the drain");
	n = read(held, buf, sizeof(buf) - 1);
	cr_assert(n > 12 && strncmp(buf, "HTTP/1.1 200", 12) == 0, "the held request got %zd bytes: %.40s",
		  n, n > 0 ? buf : "");
	close(held);
	close(idle);
	cr_assert_eq(daemon_wait(&d, 12000), 0);
	d.pid = 0;
}

/* A held connection is closed unanswered only past --header-timeout,
 * counted as refused_full; the service goes on. */
Test(limits, a_connection_held_past_the_header_deadline_is_closed, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-connections", "2", "--header-timeout",
			      "1", NULL};
	int fds[3];
	struct reply r;

	daemon_start(&d, args);
	for (int i = 0; i < 3; i++) {
		fds[i] = connect_raw(d.port);
		sleep_ms(20);
	}
	cr_assert(!closed_within(fds[2], 700), "closed before its deadline");
	cr_assert(closed_within(fds[2], 4000), "a held connection outlived --header-timeout");
	for (int i = 0; i < 3; i++) {
		close(fds[i]);
	}
	sleep_ms(200);
	cr_assert_geq(metric_value(&d, "splitkd_connections_closed_total{reason=\"refused_full\"}"), 1);
	r = http(&d, "GET", "/healthz", NULL, NULL);
	cr_assert_eq(r.status, 200);
	reply_free(&r);
	daemon_finish(&d);
}

Test(limits, per_client_connections_are_limited, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--max-client-connections", "2", NULL};
	int fds[4];
	int closed = 0;

	daemon_start(&d, args);
	for (int i = 0; i < 4; i++) {
		fds[i] = connect_raw(d.port);
	}
	/* wait (5 s at most) for two to be closed, then a little longer to
	 * see that it stays at two */
	for (int waited = 0; waited < 53; waited++) {
		closed = 0;
		for (int i = 0; i < 4; i++) {
			struct pollfd p = {fds[i], POLLIN, 0};

			closed += poll(&p, 1, 0) == 1 ? 1 : 0;
		}
		if (closed >= 2 && waited < 50) {
			waited = 50; /* three more looks, 100 ms apart */
		}
		sleep_ms(100);
	}
	cr_assert_eq(closed, 2, "%d of 4 closed with a per-client limit of 2", closed);
	for (int i = 0; i < 4; i++) {
		close(fds[i]);
	}
	daemon_finish(&d);
}

Test(limits, metrics_rejects_other_methods, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	struct reply r;

	daemon_start(&d, args);
	r = http(&d, "POST", "/metrics", NULL, "x");
	expect_problem(&r, 405, "method-not-allowed");
	cr_assert_str_eq(r.allow, "GET, HEAD");
	reply_free(&r);
	daemon_finish(&d);
}

/* 256 clients arrive at once on one worker thread: every one is answered.
 * (libmicrohttpd 0.9.75's epoll mode left most of them unserved in the
 * backlog here; splitkd uses poll.) A generous deadline, not a speed test. */
Test(limits, a_burst_of_connections_is_all_answered, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--threads", "1", NULL};
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	enum { N = 256 };
	int fds[N], answered = 0;

	daemon_start(&d, args);
	for (int round = 0; round < 3; round++) {
		answered = 0;
		for (int i = 0; i < N; i++) {
			fds[i] = connect_raw(d.port);
		}
		for (int i = 0; i < N; i++) {
			cr_assert_eq(write(fds[i], req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
		}
		for (int i = 0; i < N; i++) {
			struct pollfd p = {fds[i], POLLIN, 0};
			char buf[512];

			if (poll(&p, 1, 10000) == 1 && read(fds[i], buf, sizeof(buf)) > 12 &&
			    strncmp(buf, "HTTP/1.1 200", 12) == 0) {
				answered++;
			}
			close(fds[i]);
		}
		cr_assert_eq(answered, N, "round %d: %d of %d connections answered", round, answered, N);
	}
	daemon_finish(&d);
}
