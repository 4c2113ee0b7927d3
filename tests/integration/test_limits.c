/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * --cors-allow-origin and --rate-limit against the real binary (issue 41):
 * a preflight, a simple request, a change stream and an origin not listed;
 * a burst from one client address (127.0.0.1) against the limit, another
 * address (127.0.0.2) beside it, the routes never limited, the table of
 * clients bounded; and without either flag, not a header more.
 *
 * Time is the behaviour of a rate limit, so the counts are held to bounds
 * that hold on a loaded machine: at most the burst plus what the elapsed
 * time refills (an upper bound, whatever the scheduler does), and at least
 * one refusal in a burst of 200 sent faster than 20 a second would need
 * 10 s.
 */
#include "harness.h"

static struct daemon d;

static void stop(void)
{
	daemon_stop(&d);
}

#define ORIGIN "http://127.0.0.2:9000"

/* The value of header `name` in r's head ("" when absent), into out. */
static const char *field(const struct reply *r, const char *name, char *out, size_t cap)
{
	char key[96];
	const char *p;

	snprintf(key, sizeof(key), "\r\n%s: ", name);
	out[0] = '\0';
	p = find_ci(r->head, key);
	if (p != NULL) {
		size_t n;

		p += strlen(key);
		n = strcspn(p, "\r\n");
		n = n < cap - 1 ? n : cap - 1;
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return out;
}

static bool has_field(const struct reply *r, const char *name)
{
	char key[96];

	snprintf(key, sizeof(key), "\r\n%s:", name);
	return find_ci(r->head, key) != NULL;
}

/* One request from client address `from` (NULL: the default, 127.0.0.1). */
static struct reply ask_from(const char *from, const char *method, const char *path,
			     const char *const *headers)
{
	CURL *curl = curl_easy_init();
	struct reply r;

	cr_assert_not_null(curl);
	if (from != NULL) {
		curl_easy_setopt(curl, CURLOPT_INTERFACE, from);
	}
	r = http_on(curl, &d, method, path, headers, NULL, 0);
	curl_easy_cleanup(curl);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define SPLITS "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"

Test(cors, a_preflight_from_a_listed_origin_is_allowed_its_routes_methods, .fini = stop,
     .timeout = 30)
{
	const char *argv[] = {"--cors-allow-origin", "http://other.example", "--cors-allow-origin",
			      ORIGIN, NULL};
	const char *pre[] = {"Origin: " ORIGIN, "Access-Control-Request-Method: POST",
			     "Access-Control-Request-Headers: content-type, if-none-match", NULL};
	struct reply r;
	char v[256];

	daemon_start(&d, argv);
	r = http(&d, "OPTIONS", SPLITS, pre, NULL);
	cr_assert_eq(r.status, 204, "%ld: %s", r.status, r.head);
	cr_assert_eq(r.len, 0);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Credentials", v, sizeof(v)), "true");
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Methods", v, sizeof(v)), "GET, HEAD, POST");
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Headers", v, sizeof(v)),
			 "Content-Type, If-None-Match, If-Match, Last-Event-ID");
	cr_assert_str_eq(field(&r, "Access-Control-Max-Age", v, sizeof(v)), "600");
	cr_assert_str_eq(field(&r, "Vary", v, sizeof(v)), "Origin");
	cr_assert_str_eq(r.allow, "GET, HEAD, POST");
	reply_free(&r);
	/* a route's own methods: the OFREP bulk evaluation is POST only */
	r = http(&d, "OPTIONS", "/ofrep/v1/evaluate/flags", pre, NULL);
	cr_assert_eq(r.status, 204);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Methods", v, sizeof(v)), "POST");
	reply_free(&r);
	/* no route there: the api's 404, as for any method */
	r = http(&d, "OPTIONS", "/v2/nothing", pre, NULL);
	expect_problem(&r, 404, "not-found");
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	reply_free(&r);
	/* an OPTIONS that is not a preflight (no Access-Control-Request-Method) is what it was */
	r = http(&d, "OPTIONS", SPLITS, (const char *[]){"Origin: " ORIGIN, NULL}, NULL);
	expect_problem(&r, 405, "method-not-allowed");
	reply_free(&r);
	daemon_finish(&d);
}

Test(cors, a_simple_request_from_a_listed_origin_gets_the_same_bytes_and_its_origin,
     .fini = stop, .timeout = 30)
{
	const char *argv[] = {"--cors-allow-origin", ORIGIN, NULL};
	const char *from[] = {"Origin: " ORIGIN, NULL};
	struct reply plain, r, again;
	char v[256], etag[96];

	daemon_start(&d, argv);
	plain = http(&d, "GET", SPLITS, NULL, NULL);
	r = http(&d, "GET", SPLITS, from, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.len, plain.len);
	cr_assert_eq(memcmp(r.body, plain.body, r.len), 0, "the answer's bytes changed");
	cr_assert_str_eq(r.etag, plain.etag);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Credentials", v, sizeof(v)), "true");
	cr_assert_str_eq(field(&r, "Access-Control-Expose-Headers", v, sizeof(v)),
			 "ETag, Retry-After, RateLimit, RateLimit-Policy");
	cr_assert_str_eq(field(&r, "Vary", v, sizeof(v)), "Origin");
	/* without an Origin: no CORS field, but Vary, so a cache keeps them apart */
	cr_assert_not(has_field(&plain, "Access-Control-Allow-Origin"));
	cr_assert_str_eq(field(&plain, "Vary", v, sizeof(v)), "Origin");
	/* a conditional request from the page: 304, still with its origin */
	snprintf(etag, sizeof(etag), "If-None-Match: %s", r.etag);
	again = http(&d, "GET", SPLITS, (const char *[]){"Origin: " ORIGIN, etag, NULL}, NULL);
	cr_assert_eq(again.status, 304);
	cr_assert_str_eq(field(&again, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	reply_free(&again);
	/* a problem is readable by the page too */
	again = http(&d, "GET", "/v1/splits?target=nope", from, NULL);
	expect_problem(&again, 404, "unknown-target");
	cr_assert_str_eq(field(&again, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	reply_free(&again);
	reply_free(&plain);
	reply_free(&r);
	daemon_finish(&d);
}

Test(cors, an_origin_not_listed_gets_no_cors_field, .fini = stop, .timeout = 30)
{
	const char *argv[] = {"--cors-allow-origin", ORIGIN, NULL};
	/* the same host on another port, another scheme, a suffix: each another origin */
	const char *others[] = {"http://127.0.0.2:9001", "https://127.0.0.2:9000",
				"http://127.0.0.2:90000", "null", ORIGIN "/", NULL};

	daemon_start(&d, argv);
	for (int i = 0; others[i] != NULL; i++) {
		char o[128], v[64];
		const char *pre[] = {o, "Access-Control-Request-Method: GET", NULL};
		struct reply r, p;

		snprintf(o, sizeof(o), "Origin: %s", others[i]);
		r = http(&d, "GET", SPLITS, (const char *[]){o, NULL}, NULL);
		cr_assert_eq(r.status, 200);
		cr_assert_not(has_field(&r, "Access-Control-Allow-Origin"), "%s: %s", others[i], r.head);
		cr_assert_not(has_field(&r, "Access-Control-Allow-Credentials"));
		cr_assert_str_eq(field(&r, "Vary", v, sizeof(v)), "Origin");
		p = http(&d, "OPTIONS", SPLITS, pre, NULL);
		cr_assert_eq(p.status, 204);
		cr_assert_not(has_field(&p, "Access-Control-Allow-Origin"), "%s: %s", others[i], p.head);
		cr_assert_not(has_field(&p, "Access-Control-Allow-Methods"));
		reply_free(&r);
		reply_free(&p);
	}
	daemon_finish(&d);
}

/* The stream's head, then the transfer cut (the stream never ends). */
static size_t first_bytes(char *data, size_t size, size_t n, void *user)
{
	(void)data;
	*(size_t *)user += size * n;
	return 0; /* enough: abort */
}

static size_t keep_head(char *data, size_t size, size_t n, void *user)
{
	struct reply *r = user;

	if (r->head_len + size * n < sizeof(r->head)) {
		memcpy(r->head + r->head_len, data, size * n);
		r->head_len += size * n;
		r->head[r->head_len] = '\0';
	}
	return size * n;
}

Test(cors, the_change_stream_carries_the_origin, .fini = stop, .timeout = 30)
{
	const char *argv[] = {"--cors-allow-origin", ORIGIN, NULL};
	CURL *curl = curl_easy_init();
	struct curl_slist *list = curl_slist_append(NULL, "Origin: " ORIGIN);
	struct reply r;
	size_t got = 0;
	char url[128], v[128];
	long status = 0;

	memset(&r, 0, sizeof(r));
	daemon_start(&d, argv);
	snprintf(url, sizeof(url), "%s/v1/events", d.base);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, first_bytes);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, keep_head);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r);
	cr_assert_eq(curl_easy_perform(curl), CURLE_WRITE_ERROR, "the stream ended by itself");
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	cr_assert_eq(status, 200);
	cr_assert_gt(got, 0, "no event came");
	cr_assert(find_ci(r.head, "content-type: text/event-stream") != NULL, "%s", r.head);
	cr_assert_str_eq(field(&r, "Access-Control-Allow-Origin", v, sizeof(v)), ORIGIN);
	cr_assert_str_eq(field(&r, "Vary", v, sizeof(v)), "Origin");
	curl_slist_free_all(list);
	curl_easy_cleanup(curl);
	daemon_finish(&d);
}

Test(cors, without_the_flag_nothing_changes, .fini = stop, .timeout = 30)
{
	const char *pre[] = {"Origin: " ORIGIN, "Access-Control-Request-Method: GET", NULL};
	struct reply r;

	daemon_start(&d, NULL);
	r = http(&d, "OPTIONS", SPLITS, pre, NULL);
	expect_problem(&r, 405, "method-not-allowed");
	cr_assert_not(has_field(&r, "Access-Control-Allow-Origin"));
	reply_free(&r);
	r = http(&d, "GET", SPLITS, (const char *[]){"Origin: " ORIGIN, NULL}, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_not(has_field(&r, "Access-Control-Allow-Origin"));
	cr_assert_not(has_field(&r, "Vary"), "%s", r.head);
	cr_assert_not(has_field(&r, "RateLimit"));
	cr_assert_not(has_field(&r, "RateLimit-Policy"));
	reply_free(&r);
	daemon_finish(&d);
}

/* splitkd refuses what is not an exact origin, and exits 2 */
static void refused_flag(const char *const *argv, const char *says)
{
	char *log;
	int status;

	memset(&d, 0, sizeof(d));
	snprintf(d.log_path, sizeof(d.log_path), "/tmp/splitkd-test-XXXXXX");
	close(mkstemp(d.log_path));
	d.pid = fork();
	if (d.pid == 0) {
		const char *full[8] = {splitkd_bin(), "--listen", "127.0.0.1:0"};

		for (int i = 0; argv[i] != NULL && i < 4; i++) {
			full[3 + i] = argv[i];
		}
		freopen(d.log_path, "w", stderr);
		execv(full[0], (char *const *)full);
		_exit(127);
	}
	cr_assert_eq(waitpid(d.pid, &status, 0), d.pid);
	d.pid = 0;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d", status);
	log = daemon_log(&d);
	cr_assert(strstr(log, says) != NULL, "%s", log);
	free(log);
	unlink(d.log_path);
}

Test(cors, a_wildcard_or_a_path_is_no_origin, .timeout = 30)
{
	refused_flag((const char *[]){"--cors-allow-origin", "*", NULL}, "no wildcard");
	refused_flag((const char *[]){"--cors-allow-origin", ORIGIN "/", NULL}, "no path");
	refused_flag((const char *[]){"--cors-allow-origin", "127.0.0.2:9000", NULL},
		     "http://HOST[:PORT]");
	refused_flag((const char *[]){"--cors-allow-origin", ORIGIN, "--cors-allow-origin", ORIGIN,
				      NULL}, "given twice");
	refused_flag((const char *[]){"--rate-limit-clients", "10", NULL}, "goes with --rate-limit");
}

/* A burst of `n` requests from `from` as fast as one client sends them:
 * the answers counted by status; each 429 checked whole. */
static void burst(const char *from, int n, int *ok, int *limited, double *seconds)
{
	CURL *curl = curl_easy_init();
	double start = now_s();

	*ok = *limited = 0;
	if (from != NULL) {
		curl_easy_setopt(curl, CURLOPT_INTERFACE, from);
	}
	for (int i = 0; i < n; i++) {
		struct reply r = http_on(curl, &d, "GET", SPLITS, NULL, NULL, 0);
		char v[128];

		if (r.status == 200) {
			(*ok)++;
			cr_assert_str_eq(field(&r, "RateLimit-Policy", v, sizeof(v)), "\"client\";q=20;w=1");
			cr_assert(strncmp(field(&r, "RateLimit", v, sizeof(v)), "\"client\";r=", 11) == 0,
				  "%s", r.head);
		} else {
			(*limited)++;
			expect_problem(&r, 429, "too-many-requests");
			cr_assert_geq(atoi(field(&r, "Retry-After", v, sizeof(v))), 1, "%s", r.head);
			cr_assert_str_eq(field(&r, "RateLimit-Policy", v, sizeof(v)), "\"client\";q=20;w=1");
			cr_assert(strncmp(field(&r, "RateLimit", v, sizeof(v)), "\"client\";r=0;t=", 15) == 0,
				  "%s", r.head);
		}
		reply_free(&r);
	}
	*seconds = now_s() - start;
	curl_easy_cleanup(curl);
}

Test(ratelimit, a_burst_of_200_from_one_client_gets_429s_and_another_client_is_not_affected,
     .fini = stop, .timeout = 60)
{
	const char *argv[] = {"--rate-limit", "20", NULL};
	int ok, limited, ok2, limited2;
	double seconds, seconds2, refused;

	daemon_start(&d, argv);
	burst(NULL, 200, &ok, &limited, &seconds);
	cr_assert_eq(ok + limited, 200);
	cr_assert_gt(limited, 0, "200 in %.2f s and none refused", seconds);
	/* the burst, and what the time it took refilled: never more */
	cr_assert_leq(ok, 20 + (int)(20 * seconds) + 1, "%d answered in %.2f s", ok, seconds);
	cr_assert_geq(ok, 20, "the burst is 20: %d answered", ok);
	/* another address has its own bucket: its first 20 are answered */
	burst("127.0.0.2", 20, &ok2, &limited2, &seconds2);
	cr_assert_eq(ok2, 20, "127.0.0.2: %d of 20 answered in %.2f s", ok2, seconds2);
	/* every refusal is counted */
	refused = metric_value(&d, "\nsplitkd_rate_limited_total ");
	cr_assert_eq((int)refused, limited + limited2, "metric %g, seen %d", refused,
		     limited + limited2);
	cr_assert_eq((int)metric_value(&d, "\nsplitkd_rate_limit_clients "), 2);
	daemon_finish(&d);
}

Test(ratelimit, health_readiness_and_metrics_are_never_limited, .fini = stop, .timeout = 60)
{
	const char *argv[] = {"--rate-limit", "1", NULL};
	const char *never[] = {"/healthz", "/readyz", "/metrics"};
	struct reply r;

	daemon_start(&d, argv);
	r = ask_from(NULL, "GET", SPLITS, NULL);
	cr_assert_eq(r.status, 200);
	reply_free(&r);
	r = ask_from(NULL, "GET", SPLITS, NULL);
	expect_problem(&r, 429, "too-many-requests");
	reply_free(&r);
	for (int i = 0; i < 60; i++) {
		r = ask_from(NULL, "GET", never[i % 3], NULL);
		cr_assert_eq(r.status, 200, "%s: %ld", never[i % 3], r.status);
		cr_assert_not(has_field(&r, "RateLimit"), "%s is limited: %s", never[i % 3], r.head);
		reply_free(&r);
	}
	/* and the client is still out of requests: those took none */
	r = ask_from(NULL, "GET", SPLITS, NULL);
	cr_assert(r.status == 429 || r.status == 200);
	reply_free(&r);
	/* a second and a half later (a wide margin on 1 s) it has one again */
	sleep_ms(1500);
	r = ask_from(NULL, "GET", SPLITS, NULL);
	cr_assert_eq(r.status, 200, "%ld after 1.5 s", r.status);
	reply_free(&r);
	daemon_finish(&d);
}

Test(ratelimit, the_clients_it_remembers_are_bounded, .fini = stop, .timeout = 60)
{
	const char *argv[] = {"--rate-limit", "1", "--rate-limit-clients", "2", NULL};
	const char *from[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4"};
	struct reply r;

	daemon_start(&d, argv);
	for (int i = 0; i < 3; i++) {
		r = ask_from(from[i], "GET", SPLITS, NULL);
		cr_assert_eq(r.status, 200, "%s: %ld", from[i], r.status);
		reply_free(&r);
	}
	cr_assert_eq((int)metric_value(&d, "\nsplitkd_rate_limit_clients "), 2);
	cr_assert_eq((int)metric_value(&d, "\nsplitkd_rate_limit_evictions_total "), 1);
	/* the most recent two are remembered: 127.0.0.4 is still out of requests */
	r = ask_from("127.0.0.4", "GET", SPLITS, NULL);
	expect_problem(&r, 429, "too-many-requests");
	reply_free(&r);
	daemon_finish(&d);
}
