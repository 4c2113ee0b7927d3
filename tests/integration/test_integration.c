/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The real binary, over loopback: every endpoint, the seed's numbers end to
 * end, every class of bad input, keep-alive, limits, signals, reload and
 * the catalog tools. Each test starts its own daemon on port 0.
 */
#include "harness.h"

static struct daemon d;
static const char *const quiet[] = {"--access-log", "off", NULL};

static void start_quiet(void)
{
	daemon_start(&d, quiet);
}

/* Cleanup only: exit status is asserted in each test (daemon_finish). */
static void stop(void)
{
	daemon_stop(&d);
}

TestSuite(serve, .init = start_quiet, .fini = stop, .timeout = 60);

Test(serve, seed_numbers_end_to_end)
{
	struct reply a = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16", NULL, NULL);
	struct reply b = http(&d, "GET", "/v1/splits?target=gb10&model=qwen3.8-27b&max_batch_size=16", NULL, NULL);
	struct reply c = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&override=4", NULL, NULL);
	struct reply e = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&override=atuo", NULL, NULL);

	cr_assert_eq(a.status, 200);
	cr_assert_str_eq(a.content_type, "application/json");
	cr_assert_str_eq(jstr(a.json, "policy"), "auto");
	cr_assert_eq(jnum(a.json, "num_splits"), 11);
	cr_assert_eq(jnum(a.json, "workspace_slots"), 4224);
	cr_assert_str_eq(jstr(b.json, "policy"), "legacy");
	cr_assert_eq(jnum(b.json, "num_splits"), 1);
	cr_assert_eq(jnum(b.json, "workspace_slots"), 48);
	cr_assert_eq(jnum(c.json, "num_splits"), 4);
	cr_assert_str_eq(jstr(c.json, "source"), "override");
	cr_assert_str_eq(jstr(e.json, "policy"), "auto");
	cr_assert_str_eq(jstr(e.json, "source"), "declared");
	cr_assert(strstr(e.body, "does not parse") != NULL);
	reply_free(&a);
	reply_free(&b);
	reply_free(&c);
	reply_free(&e);
	daemon_finish(&d);
}

/* issue 9: a declaration that does not parse is read as legacy, as the
 * engine reads it, with a warning: not a 400. */
Test(serve, declared_typo_is_legacy_with_a_warning)
{
	struct reply r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&declared=atuo", NULL, NULL);
	const cJSON *w;

	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(jstr(r.json, "policy"), "legacy");
	cr_assert_str_eq(jstr(r.json, "source"), "declared");
	w = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "warnings"), 0);
	cr_assert(cJSON_IsString(w) && strstr(w->valuestring, "did you mean \"auto\"") != NULL, "%s",
		  r.body);
	reply_free(&r);
	daemon_finish(&d);
}

Test(serve, every_endpoint_answers)
{
	static const char *const paths[] = {
		"/v1/splits?target=b200&model=llama-3.1-405b&max_batch_size=64&explain=1",
		"/v1/targets", "/v1/targets/sm90", "/v1/models", "/v1/models/gpt-oss-120b",
		"/v1/catalog", "/v1/policy?spelling=%20Auto", "/v1/matrix?max_batch_size=16",
		"/healthz", "/readyz", "/version", "/openapi.json", "/problems/not-found",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct reply r = http(&d, "GET", paths[i], NULL, NULL);

		cr_assert_eq(r.status, 200, "%s: %ld %s", paths[i], r.status, r.body);
		cr_assert_str_eq(r.content_type, "application/json", "%s", paths[i]);
		cr_assert_not_null(r.json, "%s: not JSON", paths[i]);
		reply_free(&r);
	}
	daemon_finish(&d);
}

Test(serve, post_single_and_batch)
{
	static const char *const json[] = {"Content-Type: application/json", NULL};
	struct reply one = http(&d, "POST", "/v1/splits", json,
				"{\"target\":\"h100\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16}");
	struct reply batch = http(&d, "POST", "/v1/splits", json,
				  "{\"queries\":[{\"target\":\"gb10\",\"model\":\"qwen3.8-27b\",\"max_batch_size\":16},"
				  "{\"target\":\"nope\",\"num_q_heads\":8}]}");

	cr_assert_eq(one.status, 200, "%s", one.body);
	cr_assert_eq(jnum(one.json, "workspace_slots"), 4224);
	cr_assert_eq(batch.status, 200);
	cr_assert_eq(jnum(batch.json, "failures"), 1);
	cr_assert_eq(jnum(cJSON_GetArrayItem(cJSON_GetObjectItem(batch.json, "results"), 0), "num_splits"), 1);
	reply_free(&one);
	reply_free(&batch);
	daemon_finish(&d);
}

struct bad {
	const char *method;
	const char *path;
	const char *content_type; /* header line or NULL */
	const char *body;
	long status;
	const char *slug;
};

Test(serve, every_bad_input_class)
{
	static const struct bad cases[] = {
		{"GET", "/v1/splits?target=h100&model=qwen3-8b&colour=red", NULL, NULL, 400, "unknown-parameter"},
		{"GET", "/v1/splits?target=h100&target=h100&model=qwen3-8b", NULL, NULL, 400, "repeated-parameter"},
		{"GET", "/v1/splits?target=h100&model=qwen3-8b&max_batch_size=0", NULL, NULL, 400, "invalid-parameter"},
		{"GET", "/v1/splits?target=h100&model=qwen3-8b&max_batch_size=99999999999", NULL, NULL, 400, "invalid-parameter"},
		{"GET", "/v1/splits?target=h100&model=qwen3-8b&num_seqs=abc", NULL, NULL, 400, "invalid-parameter"},
		{"GET", "/v1/splits?target=h100&model=qwen3-8b&override=%G1", NULL, NULL, 400, "malformed-query"},
		{"GET", "/v1/splits?target=a800&model=qwen3-8b", NULL, NULL, 404, "unknown-target"},
		{"GET", "/v1/splits?target=h100&model=qwen9", NULL, NULL, 404, "unknown-model"},
		{"GET", "/v1/nowhere", NULL, NULL, 404, "not-found"},
		{"POST", "/v1/splits", "Content-Type: application/json", "{\"target\":1}", 400, "invalid-parameter"},
		{"POST", "/v1/splits", "Content-Type: application/json", "{\"target\":\"h100\",\"color\":1}", 400, "unknown-parameter"},
		{"POST", "/v1/splits", "Content-Type: application/json", "{\"target\":", 400, "malformed-json"},
		{"POST", "/v1/splits", "Content-Type: application/json", "{} []", 400, "malformed-json"},
		{"POST", "/v1/splits", "Content-Type: text/plain", "{}", 415, "unsupported-media-type"},
		{"POST", "/v1/splits", "Content-Type: application/x-www-form-urlencoded", "target=h100", 415, "unsupported-media-type"},
		{"PUT", "/v1/splits", NULL, NULL, 405, "method-not-allowed"},
		{"DELETE", "/v1/targets/h100", NULL, NULL, 405, "method-not-allowed"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *headers[] = {cases[i].content_type, NULL};
		struct reply r = http(&d, cases[i].method, cases[i].path, headers, cases[i].body);

		expect_problem(&r, cases[i].status, cases[i].slug);
		if (cases[i].status == 405) {
			cr_assert(strstr(r.allow, "GET") != NULL, "Allow: %s", r.allow);
		}
		reply_free(&r);
	}
	daemon_finish(&d);
}

Test(serve, keep_alive_reuses_the_connection)
{
	CURL *curl = curl_easy_init();
	struct reply a = http_on(curl, &d, "GET", "/healthz", NULL, NULL, 0);
	struct reply b = http_on(curl, &d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b", NULL, NULL, 0);
	struct reply e = http_on(curl, &d, "GET", "/v1/splits?target=zzz&model=qwen3.8-27b", NULL, NULL, 0);
	struct reply c = http_on(curl, &d, "GET", "/version", NULL, NULL, 0);

	cr_assert_eq(a.connects, 1);
	cr_assert_eq(b.connects, 0, "the second request opened a new connection");
	cr_assert_eq(e.status, 404);
	cr_assert_eq(c.connects, 0, "an error answer closed the connection");
	reply_free(&a);
	reply_free(&b);
	reply_free(&e);
	reply_free(&c);
	curl_easy_cleanup(curl);
	daemon_finish(&d);
}

Test(serve, head_has_no_body_but_the_same_length)
{
	CURL *curl = curl_easy_init();
	struct reply g = http_on(curl, &d, "GET", "/v1/targets", NULL, NULL, 0);
	struct reply h = http_on(curl, &d, "HEAD", "/v1/targets", NULL, NULL, 0);
	curl_off_t len = -1;

	curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	cr_assert_eq(h.status, 200);
	cr_assert_eq(h.len, 0);
	cr_assert_eq((size_t)len, g.len);
	reply_free(&g);
	reply_free(&h);
	curl_easy_cleanup(curl);
	daemon_finish(&d);
}

Test(serve, sigterm_exits_zero)
{
	int status;

	kill(d.pid, SIGTERM);
	status = daemon_wait(&d, 12000);
	cr_assert_neq(status, -1, "did not exit");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	daemon_finish(&d);
}

Test(serve, sigint_exits_zero)
{
	int status;

	kill(d.pid, SIGINT);
	status = daemon_wait(&d, 12000);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	daemon_finish(&d);
}

/* ------------------------------------------------------------ limits */

static const char *const small_body[] = {"--access-log", "off", "--max-body", "1024", NULL};

static void start_small_body(void)
{
	daemon_start(&d, small_body);
}

TestSuite(limits, .init = start_small_body, .fini = stop, .timeout = 60);

Test(limits, body_over_the_limit_is_413)
{
	static const char *const json[] = {"Content-Type: application/json", NULL};
	char *body = malloc(4096);
	struct reply r, ok;

	memset(body, ' ', 4095);
	body[0] = '{';
	body[4094] = '}';
	body[4095] = '\0';
	r = http(&d, "POST", "/v1/splits", json, body);
	expect_problem(&r, 413, "payload-too-large");
	ok = http(&d, "GET", "/healthz", NULL, NULL);
	cr_assert_eq(ok.status, 200, "still serving after a refused body");
	reply_free(&r);
	reply_free(&ok);
	free(body);
	daemon_finish(&d);
}

Test(limits, chunked_body_over_the_limit_is_413)
{
	static const char *const chunked[] = {"Content-Type: application/json", "Transfer-Encoding: chunked", NULL};
	char *body = malloc(4096);
	struct reply r;

	memset(body, ' ', 4095);
	body[0] = '{';
	body[4094] = '}';
	body[4095] = '\0';
	r = http(&d, "POST", "/v1/splits", chunked, body);
	expect_problem(&r, 413, "payload-too-large");
	reply_free(&r);
	free(body);
	daemon_finish(&d);
}

Test(limits, long_uri_is_refused)
{
	char *path = malloc(20000);
	struct reply r;

	memcpy(path, "/v1/splits?override=", 20);
	memset(path + 20, 'x', 19000);
	path[19020] = '\0';
	r = http(&d, "GET", path, NULL, NULL);
	cr_assert(r.status == 414 || r.status == 431, "status %ld", r.status);
	reply_free(&r);
	free(path);
	daemon_finish(&d);
}

/* Limits raised above the defaults hold too (issue 9: --max-body 4194304
 * still refused a 2 MiB body, the handler having its own 1 MiB). */
Test(raised, a_body_under_a_raised_max_body_is_answered, .fini = stop, .timeout = 60)
{
	static const char *const args[] = {"--access-log", "off", "--max-body", "4194304", NULL};
	static const char *const json[] = {"Content-Type: application/json", NULL};
	const char *query = "{\"sm_count\":132,\"num_q_heads\":24,\"declared\":\"auto\"}";
	size_t len = 2u << 20;
	char *body = malloc(len + 1);
	struct reply r;

	daemon_start(&d, args);
	memset(body, ' ', len);
	memcpy(body, query, strlen(query));
	body[len] = '\0';
	r = http(&d, "POST", "/v1/splits", json, body);
	cr_assert_eq(r.status, 200, "%ld: %.300s", r.status, r.body);
	cr_assert_eq(jnum(r.json, "num_splits"), 11);
	reply_free(&r);
	free(body);
	daemon_finish(&d);
}

/* ------------------------------------------------------ catalog tools */

static int run(const char *const *args, char *out, size_t cap)
{
	int pipefd[2], status;
	pid_t pid;
	size_t n = 0;
	ssize_t got;

	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		execv(splitkd_bin(), (char *const *)args);
		_exit(127);
	}
	close(pipefd[1]);
	while (n + 1 < cap && (got = read(pipefd[0], out + n, cap - n - 1)) > 0) {
		n += (size_t)got;
	}
	out[n] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(tools, check_catalog_accepts_and_refuses)
{
	char path[] = "/tmp/splitkd-cat-XXXXXX", out[4096];
	int fd = mkstemp(path);
	const char *args[] = {splitkd_bin(), "--check-catalog", path, NULL};

	close(fd);
	write_file(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}");
	cr_assert_eq(run(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "ok") != NULL);
	write_file(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"sometimes\"}],\"models\":[]}");
	cr_assert_eq(run(args, out, sizeof(out)), 1);
	cr_assert(strstr(out, "targets[0] \"x\": field \"attn_decode_splitk\"") != NULL, "%s", out);
	unlink(path);
	path[0] = '\0';
	{
		const char *missing[] = {splitkd_bin(), "--check-catalog", "/nonexistent/catalog.json", NULL};

		cr_assert_eq(run(missing, out, sizeof(out)), 1);
		cr_assert(strstr(out, "No such file") != NULL, "%s", out);
	}
	daemon_finish(&d);
}

Test(tools, check_catalog_names_the_field_for_each_kind_of_break)
{
	static const struct {
		const char *json;
		const char *want;
	} cases[] = {
		{"not json", "not valid JSON"},
		{"{\"targets\":[]}", "field \"models\": is required"},
		{"{\"targets\":[{\"name\":\"a\",\"sm_count\":\"132\",\"attn_decode_splitk\":\"auto\"}],\"models\":[]}",
		 "targets[0] \"a\": field \"sm_count\""},
		{"{\"targets\":[{\"name\":\"a\",\"sm_count\":0,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}",
		 "field \"sm_count\": must be an integer from 1 to 4294967295"},
		{"{\"targets\":[{\"name\":\"a b\",\"sm_count\":1,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}",
		 "field \"name\""},
		{"{\"targets\":[{\"name\":\"a\",\"sm_count\":1,\"attn_decode_splitk\":\"atuo\"}],\"models\":[]}",
		 "field \"attn_decode_splitk\""},
		{"{\"targets\":[{\"name\":\"a\",\"sm_count\":1,\"attn_decode_splitk\":\"auto\",\"sms\":1}],\"models\":[]}",
		 "field \"sms\": unknown field"},
		{"{\"targets\":[],\"models\":[{\"name\":\"m\",\"num_q_heads\":8,\"num_kv_heads\":3}]}",
		 "models[0] \"m\": field \"num_kv_heads\""},
		{"{\"targets\":[],\"models\":[{\"name\":\"m\",\"num_q_heads\":8,\"head_dim\":-1}]}",
		 "field \"head_dim\""},
		{"{\"targets\":[],\"models\":[{\"name\":\"m\",\"num_q_heads\":8},{\"name\":\"M\",\"num_q_heads\":8}]}",
		 "models[1]: field \"name\"/\"aliases\": \"M\" is already used by models[0]"},
	};
	char path[] = "/tmp/splitkd-broken-XXXXXX", out[4096];
	int fd = mkstemp(path);
	const char *args[] = {splitkd_bin(), "--check-catalog", path, NULL};

	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(path, cases[i].json);
		cr_assert_eq(run(args, out, sizeof(out)), 1, "case %zu accepted", i);
		cr_assert(strstr(out, cases[i].want) != NULL, "case %zu: %s", i, out);
	}
	unlink(path);
	daemon_finish(&d);
}

Test(tools, dump_catalog_round_trips)
{
	char path[] = "/tmp/splitkd-dump-XXXXXX", out[65536];
	int fd = mkstemp(path);
	const char *dump[] = {splitkd_bin(), "--dump-catalog", NULL};
	const char *check[] = {splitkd_bin(), "--check-catalog", path, NULL};

	close(fd);
	cr_assert_eq(run(dump, out, sizeof(out)), 0);
	write_file(path, out);
	cr_assert_eq(run(check, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "8 targets, 13 models") != NULL, "%s", out);
	unlink(path);
	daemon_finish(&d);
}

/* --pretty adds white space only: the same catalog, so the same digest,
 * one member a line; and a stray comma in a hand edit is named where it is. */
Test(tools, pretty_dump_loads_to_the_same_digest)
{
	char compact[] = "/tmp/splitkd-dump-XXXXXX", pretty[] = "/tmp/splitkd-pretty-XXXXXX";
	char out[65536], digest[128];
	int fd1 = mkstemp(compact), fd2 = mkstemp(pretty);
	const char *dump[] = {splitkd_bin(), "--dump-catalog", NULL};
	const char *dump_pretty[] = {splitkd_bin(), "--dump-catalog", "--pretty", NULL};
	const char *check_compact[] = {splitkd_bin(), "--check-catalog", compact, NULL};
	const char *check_pretty[] = {splitkd_bin(), "--check-catalog", pretty, NULL};
	const char *at;
	size_t lines = 0;

	close(fd1);
	close(fd2);
	cr_assert_eq(run(dump, out, sizeof(out)), 0);
	write_file(compact, out);
	cr_assert_eq(run(dump_pretty, out, sizeof(out)), 0);
	write_file(pretty, out);
	for (const char *c = out; *c; c++) {
		lines += *c == '\n';
	}
	cr_assert_gt(lines, 150, "one member a line: %zu lines", lines);
	cr_assert(strncmp(out, "{\n  \"targets\": [\n    {\n      \"name\": \"hopper\",\n", 40) == 0, "%.200s", out);
	cr_assert_eq(run(check_compact, out, sizeof(out)), 0, "%s", out);
	at = strstr(out, "digest ");
	cr_assert_not_null(at, "%s", out);
	snprintf(digest, sizeof(digest), "%s", at);
	cr_assert_eq(run(check_pretty, out, sizeof(out)), 0, "%s", out);
	cr_assert_not_null(strstr(out, digest), "pretty: %s, compact: %s", out, digest);
	/* a hand edit's stray comma, on line 2 at column 15 */
	write_file(pretty, "{\"targets\": [],\n  \"models\": [],\n}\n");
	cr_assert_eq(run(check_pretty, out, sizeof(out)), 1, "%s", out);
	cr_assert_not_null(strstr(out, "a comma with nothing after it at offset 30 (line 2, column 15)"), "%s", out);
	unlink(compact);
	unlink(pretty);
	daemon_finish(&d);
}

Test(tools, a_near_miss_flag_gets_a_suggestion)
{
	const char *args[] = {splitkd_bin(), "--listn", "127.0.0.1:8080", NULL};
	char out[4096];

	cr_assert_eq(run(args, out, sizeof(out)), 2, "%s", out);
	cr_assert_not_null(strstr(out, "splitkd: unknown option \"--listn\": did you mean --listen? (see --help)"),
			   "%s", out);
	daemon_finish(&d);
}

Test(tools, bad_flags_exit_2)
{
	static const char *const cases[][4] = {
		{"--listen", "nohostport", NULL, NULL},
		{"--threads", "0", NULL, NULL},
		{"--log-format", "xml", NULL, NULL},
		{"--bogus", NULL, NULL, NULL},
		{"extra", NULL, NULL, NULL},
		{"--listen", NULL, NULL, NULL},
	};
	char out[4096];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[6] = {splitkd_bin(), cases[i][0], cases[i][1], NULL};

		cr_assert_eq(run(args, out, sizeof(out)), 2, "%s %s: %s", cases[i][0],
			     cases[i][1] ? cases[i][1] : "", out);
		cr_assert(strstr(out, "splitkd: ") != NULL);
	}
	daemon_finish(&d);
}

Test(tools, help_and_version)
{
	const char *help[] = {splitkd_bin(), "--help", NULL};
	const char *version[] = {splitkd_bin(), "--version", NULL};
	char out[8192];

	cr_assert_eq(run(help, out, sizeof(out)), 0);
	cr_assert(strstr(out, "--check-catalog") != NULL);
	cr_assert_eq(run(version, out, sizeof(out)), 0);
	cr_assert(strncmp(out, "splitkd ", 8) == 0);
	daemon_finish(&d);
}

/* ------------------------------------------------------------ reload */

Test(reload, sighup_swaps_a_good_catalog_and_keeps_the_old_on_a_bad_one, .timeout = 60)
{
	char path[] = "/tmp/splitkd-reload-XXXXXX";
	int fd = mkstemp(path);
	const char *args[] = {"--access-log", "off", "--catalog", path, NULL};
	struct reply r;
	char first[64];

	close(fd);
	write_file(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":10,\"attn_decode_splitk\":\"auto\"}],\"models\":[]}");
	daemon_start(&d, args);
	r = http(&d, "GET", "/v1/splits?target=x&num_q_heads=2", NULL, NULL);
	cr_assert_eq(jnum(r.json, "num_splits"), 10);
	snprintf(first, sizeof(first), "%s", jstr(r.json, "catalog"));
	reply_free(&r);

	write_file(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":20,\"attn_decode_splitk\":\"legacy\"}],\"models\":[]}");
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 500; i++) { /* 5 s at most */
		r = http(&d, "GET", "/v1/splits?target=x&num_q_heads=2", NULL, NULL);
		if (strcmp(jstr(r.json, "catalog"), first) != 0) {
			break;
		}
		reply_free(&r);
		r.json = NULL;
		sleep_ms(10);
	}
	cr_assert_not_null(r.json);
	cr_assert_str_eq(jstr(r.json, "policy"), "legacy");
	cr_assert_eq(jnum(r.json, "num_splits"), 10); /* 20 / 2 */
	reply_free(&r);

	write_file(path, "{\"targets\":[{\"name\":\"x\",\"sm_count\":0}]}");
	kill(d.pid, SIGHUP);
	for (int i = 0; i < 500; i++) { /* until the refusal is logged, 5 s at most */
		char *log = daemon_log(&d);
		bool logged = strstr(log, "reload refused") != NULL;

		free(log);
		if (logged) {
			break;
		}
		sleep_ms(10);
	}
	r = http(&d, "GET", "/v1/splits?target=x&num_q_heads=2", NULL, NULL);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(jnum(r.json, "sm_count"), 20, "the refused catalog replaced the good one");
	reply_free(&r);
	{
		char *log = daemon_log(&d);

		cr_assert(strstr(log, "reload refused") != NULL, "%s", log);
		free(log);
	}
	cr_assert_eq(daemon_stop(&d), 0);
	unlink(path);
	daemon_finish(&d);
}

/* --------------------------------------------------------- access log */

Test(logs, one_line_per_request_in_json, .timeout = 60)
{
	const char *args[] = {"--log-format", "json", NULL};
	struct reply r;
	char *log;
	cJSON *line = NULL;
	const char *p;

	daemon_start(&d, args);
	r = http(&d, "GET", "/v1/targets?x=%0A%22", NULL, NULL);
	reply_free(&r);
	sleep_ms(100);
	log = daemon_log(&d);
	p = strstr(log, "{\"ts\":\"");
	for (; p != NULL; p = strstr(p + 1, "{\"ts\":\"")) {
		const char *end = strchr(p, '\n');

		cJSON_Delete(line);
		line = cJSON_ParseWithLength(p, (size_t)(end - p));
		cr_assert_not_null(line, "log line is not JSON: %.*s", (int)(end - p), p);
		if (strcmp(jstr(line, "event"), "access") == 0) {
			break;
		}
	}
	cr_assert_not_null(p, "no access line in: %s", log);
	cr_assert_str_eq(jstr(line, "method"), "GET");
	cr_assert_str_eq(jstr(line, "path"), "/v1/targets?x=%0A%22");
	cr_assert_eq(jnum(line, "status"), 400);
	cr_assert_geq(jnum(line, "us"), 0);
	cJSON_Delete(line);
	free(log);
	cr_assert_eq(daemon_stop(&d), 0);
	daemon_finish(&d);
}
