/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * splitkd over HTTPS (server/tls.c): a test PKI made for each test by
 * tests/tls/make-certs.sh (certtool), the seed's decision through libcurl
 * and the curl command with --cacert, client certificates required and
 * refused, a rotation of the server certificate as a Kubernetes Secret
 * volume does it (a symlink swapped) seen by new handshakes while an old
 * connection keeps going, invalid pairs that keep the old one, the
 * handshake under the header deadline, and never a plaintext byte on a
 * TLS connection. The raw-byte checks use a GnuTLS client whose transport
 * records what came over the wire.
 */
#include <gnutls/gnutls.h>
#include <sys/stat.h>

#include "harness.h"

static struct daemon d;
static char pki[64];

static void make_pki(void)
{
	char cmd[160];

	snprintf(pki, sizeof(pki), "/tmp/splitkd-tls-XXXXXX");
	cr_assert_not_null(mkdtemp(pki));
	snprintf(cmd, sizeof(cmd), "sh tests/tls/make-certs.sh %s", pki);
	cr_assert_eq(system(cmd), 0, "tests/tls/make-certs.sh failed (certtool: scripts/deps.sh tls)");
}

static void remove_pki(void)
{
	char cmd[128];

	daemon_stop(&d);
	if (pki[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", pki);
		(void)!system(cmd);
		pki[0] = '\0';
	}
}

/* A path in the PKI directory, in a static ring: 32 can be live at once. */
static const char *at(const char *name)
{
	static char ring[32][128];
	static unsigned next;
	char *p = ring[next++ % 32];

	snprintf(p, 128, "%s/%s", pki, name);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 65536);
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Replaces dst with a copy of src in one rename, as an atomic writer does. */
static void install(const char *src, const char *dst)
{
	char *text = slurp(src);

	replace_file(dst, text);
	free(text);
}

/* Base64 of a PEM text without its whitespace, to compare certificates. */
static void squeeze(const char *pem, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = pem; *p != '\0' && n + 1 < cap; p++) {
		if (*p != '\n' && *p != '\r' && *p != ' ') {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
}

struct client {
	const char *ca, *cert, *key;
};

/* One GET over HTTPS on `curl` (reused: keep-alive). Returns libcurl's
 * code; on success *r holds the answer and `served` (when not NULL) the
 * server certificate's PEM, whitespace squeezed out. */
static CURLcode tls_get(CURL *curl, const char *path, const struct client *c, struct reply *r,
			char *served, size_t served_cap)
{
	char url[256];
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "%s%s", d.base, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(curl, CURLOPT_CAINFO, c->ca);
	curl_easy_setopt(curl, CURLOPT_SSLCERT, c->cert);
	curl_easy_setopt(curl, CURLOPT_SSLKEY, c->key);
	curl_easy_setopt(curl, CURLOPT_CERTINFO, served != NULL ? 1L : 0L);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		free(r->body);
		r->body = NULL;
		return rc;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &r->connects);
	if (r->body == NULL) {
		r->body = calloc(1, 1);
	}
	r->json = cJSON_ParseWithLength(r->body, r->len);
	if (served != NULL) {
		struct curl_certinfo *ci = NULL;

		served[0] = '\0';
		curl_easy_getinfo(curl, CURLINFO_CERTINFO, &ci);
		for (struct curl_slist *s = ci != NULL && ci->num_of_certs > 0 ? ci->certinfo[0] : NULL;
		     s != NULL; s = s->next) {
			if (strncmp(s->data, "Cert:", 5) == 0) {
				squeeze(s->data + 5, served, served_cap);
			}
		}
		/* a connection reused has no handshake, so no certificate info */
	}
	return rc;
}

/* A fresh connection's GET: status, or -1 when the handshake failed. */
static long fresh_get(const char *path, const struct client *c, char *served, size_t served_cap)
{
	CURL *curl = curl_easy_init();
	struct reply r;
	long status = -1;

	if (tls_get(curl, path, c, &r, served, served_cap) == CURLE_OK) {
		status = r.status;
		reply_free(&r);
	}
	curl_easy_cleanup(curl);
	return status;
}

/* A series' value in /metrics (fetched over TLS as `c`), or -1. */
static double metric(const struct client *c, const char *series)
{
	CURL *curl = curl_easy_init();
	struct reply r;
	double v = -1;

	cr_assert_eq(tls_get(curl, "/metrics", c, &r, NULL, 0), CURLE_OK);
	for (const char *p = strstr(r.body, series); p != NULL; p = strstr(p + 1, series)) {
		if ((p == r.body || p[-1] == '\n') && p[strlen(series)] == ' ') {
			v = strtod(p + strlen(series) + 1, NULL);
			break;
		}
	}
	reply_free(&r);
	curl_easy_cleanup(curl);
	return v;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *seed = "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16";

/* ------------------------------------------------------------ serving */

Test(tls, the_seed_decision_over_https_with_the_test_ca, .init = make_pki, .fini = remove_pki,
     .timeout = 60)
{
	const char *args[] = {"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--access-log", "off", NULL};
	struct client c = {at("ca.pem"), NULL, NULL};
	char cmd[512], out[256] = {0};
	CURL *curl = curl_easy_init();
	struct reply r;
	FILE *p;

	daemon_start(&d, args);
	cr_assert_eq(strncmp(d.base, "https://", 8), 0, "the daemon says https: %s", d.base);
	cr_assert_eq(tls_get(curl, seed, &c, &r, NULL, 0), CURLE_OK);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(jnum(r.json, "num_splits"), 11);
	cr_assert_eq(jnum(r.json, "workspace_slots"), 4224);
	reply_free(&r);
	curl_easy_cleanup(curl);

	/* the README's command, as an operator types it */
	snprintf(cmd, sizeof(cmd),
		 "curl -sS --max-time 10 --cacert %s '%s%s' | grep -o '\"num_splits\":[0-9]*'",
		 at("ca.pem"), d.base, seed);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(out, sizeof(out), p), "curl --cacert printed nothing");
	pclose(p);
	cr_assert_str_eq(out, "\"num_splits\":11\n");

	/* a client that does not trust the test CA stops at the handshake */
	c.ca = at("other-ca.pem");
	cr_assert_eq(fresh_get(seed, &c, NULL, 0), -1);
	daemon_finish(&d);
}

/* Socket activation (issue 40): a socket passed as systemd passes it
 * serves HTTPS as a bound one does, client certificates and all. */
Test(tls, a_socket_passed_by_the_service_manager_serves_https_as_a_bound_one, .init = make_pki,
     .fini = remove_pki, .timeout = 60)
{
	const char *args[] = {"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--tls-client-ca", at("ca.pem"), "--access-log", "off", NULL};
	struct client c = {at("ca.pem"), at("client.pem"), at("client-key.pem")};
	unsigned port;
	int held = held_socket(&port);
	struct daemon_with with = {.listen_fd = held};
	CURL *curl = curl_easy_init();
	struct reply r;

	daemon_start_with(&d, args, &with);
	cr_assert_eq(d.port, port);
	cr_assert_eq(strncmp(d.base, "https://", 8), 0, "the daemon says https: %s", d.base);
	cr_assert_eq(tls_get(curl, seed, &c, &r, NULL, 0), CURLE_OK);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(jnum(r.json, "num_splits"), 11);
	reply_free(&r);
	curl_easy_cleanup(curl);
	c.cert = c.key = NULL; /* no client certificate: refused at the handshake */
	cr_assert_eq(fresh_get(seed, &c, NULL, 0), -1);
	daemon_finish(&d);
	close(held);
}

Test(tls, plain_http_on_the_https_port_gets_no_answer, .init = make_pki, .fini = remove_pki,
     .timeout = 60)
{
	const char *args[] = {"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--access-log", "off", NULL};
	struct client c = {at("ca.pem"), NULL, NULL};
	const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	char buf[256];
	ssize_t n;
	int fd;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	cr_assert_eq(send(fd, req, sizeof(req) - 1, 0), (ssize_t)(sizeof(req) - 1));
	n = recv(fd, buf, sizeof(buf), 0);
	cr_assert(n <= 0 || (unsigned char)buf[0] == 21,
		  "a plaintext request gets nothing, or a TLS alert record, not %zd bytes of \"%.*s\"",
		  n, (int)(n > 0 ? n : 0), buf);
	close(fd);
	sleep_ms(200);
	cr_assert_eq(metric(&c, "splitkd_tls_handshake_failures_total{reason=\"handshake\"}"), 1);
	daemon_finish(&d);
}

/* ------------------------------------------------ client certificates */

Test(tls, a_client_certificate_is_required_and_checked, .init = make_pki, .fini = remove_pki,
     .timeout = 60)
{
	const char *args[] = {"--tls-cert",      at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--tls-client-ca", at("ca.pem"),     "--access-log", "off", NULL};
	struct client good = {at("ca.pem"), at("client.pem"), at("client-key.pem")};
	struct client none = {at("ca.pem"), NULL, NULL};
	struct client other = {at("ca.pem"), at("other-client.pem"), at("other-client-key.pem")};
	/* a server certificate is no client certificate (key purpose) */
	struct client server = {at("ca.pem"), at("server.pem"), at("server-key.pem")};

	daemon_start(&d, args);
	cr_assert_eq(fresh_get(seed, &good, NULL, 0), 200);
	cr_assert_eq(fresh_get(seed, &none, NULL, 0), -1, "no client certificate: refused");
	cr_assert_eq(fresh_get(seed, &other, NULL, 0), -1, "another CA's client: refused");
	cr_assert_eq(fresh_get(seed, &server, NULL, 0), -1, "a server certificate: refused");
	sleep_ms(200); /* the refused connections' close is counted when MHD reports it */
	cr_assert_eq(metric(&good, "splitkd_tls_handshake_failures_total{reason=\"client_certificate\"}"),
		     3);
	/* two more answered: 3 handshakes before the scrape, and the scrape's
	 * own, though its connection is still open (counted when it finished,
	 * not at the close); the earlier scrape makes 5 */
	cr_assert_eq(fresh_get(seed, &good, NULL, 0), 200);
	cr_assert_eq(fresh_get(seed, &good, NULL, 0), 200);
	cr_assert_eq(metric(&good, "splitkd_tls_handshakes_total"), 5);
	{
		/* the client saw only a closed connection: the log says who and
		 * why, one line a refusal */
		char *log = daemon_log(&d);
		const char *why[] = {"it sent no certificate",
				     "its certificate is not signed by --tls-client-ca",
				     "its certificate is not for TLS clients (its key purpose)"};

		for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
			const char *at_line = strstr(log, why[i]);

			cr_expect_not_null(at_line, "no \"%s\" in the log:\n%s", why[i], log);
			cr_expect(at_line == NULL || strstr(at_line + 1, why[i]) == NULL,
				  "\"%s\" logged more than once:\n%s", why[i], log);
		}
		cr_expect_not_null(strstr(log, "refused a client from 127.0.0.1:"), "%s", log);
		free(log);
	}
	daemon_finish(&d);
}

/* ------------------------------------------------------------ rotation */

/* A Secret volume: DIR/tls.crt -> ..data/tls.crt, ..data -> ..VERSION/;
 * an update writes a new ..VERSION and swaps ..data in one rename. */
static void secret_version(const char *version, const char *cert, const char *key)
{
	char dir[128], path[160], link[160];

	snprintf(dir, sizeof(dir), "%s/secret/..%s", pki, version);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/tls.crt", dir);
	install(at(cert), path);
	snprintf(path, sizeof(path), "%s/tls.key", dir);
	install(at(key), path);
	snprintf(link, sizeof(link), "%s/secret/..data_tmp", pki);
	snprintf(path, sizeof(path), "..%s", version);
	cr_assert_eq(symlink(path, link), 0);
	snprintf(path, sizeof(path), "%s/secret/..data", pki);
	cr_assert_eq(rename(link, path), 0);
}

static void secret_volume(void)
{
	char path[160];

	make_pki();
	snprintf(path, sizeof(path), "%s/secret", pki);
	cr_assert_eq(mkdir(path, 0700), 0);
	secret_version("v1", "server.pem", "server-key.pem");
	cr_assert_eq(symlink("..data/tls.crt", at("secret/tls.crt")), 0);
	cr_assert_eq(symlink("..data/tls.key", at("secret/tls.key")), 0);
}

Test(tls, a_rotated_certificate_reaches_new_handshakes_within_3s_old_connections_keep_going,
     .init = secret_volume, .fini = remove_pki, .timeout = 60)
{
	const char *args[] = {"--tls-cert", at("secret/tls.crt"), "--tls-key", at("secret/tls.key"),
			      "--access-log", "off", NULL};
	struct client c = {at("ca.pem"), NULL, NULL};
	char *pem1 = slurp(at("server.pem")), *pem2 = slurp(at("server2.pem"));
	char want1[4096], want2[4096], served[4096];
	CURL *old = curl_easy_init();
	struct reply r;
	uint64_t swapped;
	long status = -1;

	squeeze(pem1, want1, sizeof(want1));
	squeeze(pem2, want2, sizeof(want2));
	daemon_start(&d, args);
	cr_assert_eq(tls_get(old, seed, &c, &r, served, sizeof(served)), CURLE_OK);
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(served, want1, "the first certificate is served");
	reply_free(&r);

	secret_version("v2", "server2.pem", "server2-key.pem");
	swapped = mono_ms();
	/* The bound is the behaviour here: new handshakes see the
	 * new certificate within 3 s (the files are looked at every second). */
	while (mono_ms() - swapped < 3000) {
		status = fresh_get(seed, &c, served, sizeof(served));
		if (status == 200 && strcmp(served, want2) == 0) {
			break;
		}
		sleep_ms(100);
	}
	cr_assert_eq(status, 200);
	cr_assert_str_eq(served, want2, "a new handshake takes the rotated certificate within 3 s");

	/* the connection opened before the rotation is still the same one */
	cr_assert_eq(tls_get(old, seed, &c, &r, NULL, 0), CURLE_OK);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.connects, 0, "the old connection was reused, not reopened");
	cr_assert_eq(jnum(r.json, "num_splits"), 11);
	reply_free(&r);
	curl_easy_cleanup(old);
	cr_assert_eq(metric(&c, "splitkd_tls_reloads_total{result=\"ok\"}"), 1);
	cr_assert_eq(metric(&c, "splitkd_tls_last_reload_success"), 1);
	free(pem1);
	free(pem2);
	daemon_finish(&d);
}

/* Puts src in place of dst and waits (up to 3 s: the watch looks every
 * second) for the one refused reload that change makes. */
static void change_refused(const struct client *c, const char *src, const char *dst)
{
	const char *errors = "splitkd_tls_reloads_total{result=\"error\"}";
	double before = metric(c, errors);
	uint64_t start = mono_ms();

	if (src != NULL) {
		install(src, dst);
	} else {
		cr_assert_eq(unlink(dst), 0);
	}
	while (mono_ms() - start < 3000 && metric(c, errors) <= before) {
		sleep_ms(100);
	}
	sleep_ms(1200); /* one more look: the change is refused once */
	cr_assert_eq(metric(c, errors), before + 1);
	cr_assert_eq(metric(c, "splitkd_tls_last_reload_success"), 0);
}

Test(tls, an_invalid_pair_keeps_the_old_certificate_serving, .init = make_pki,
     .fini = remove_pki, .timeout = 90)
{
	const char *args[] = {"--tls-cert", at("live.pem"), "--tls-key", at("live-key.pem"), NULL};
	const char *oks = "splitkd_tls_reloads_total{result=\"ok\"}";
	struct client c = {at("ca.pem"), NULL, NULL};
	char *pem1 = slurp(at("server.pem")), *pem2 = slurp(at("server2.pem"));
	char want1[4096], want2[4096], served[4096];
	double expiry, ok;
	char *log;

	squeeze(pem1, want1, sizeof(want1));
	squeeze(pem2, want2, sizeof(want2));
	install(at("server.pem"), at("live.pem"));
	install(at("server-key.pem"), at("live-key.pem"));
	daemon_start(&d, args);
	expiry = metric(&c, "splitkd_tls_certificate_expiry_timestamp_seconds");
	cr_assert_gt(expiry, (double)time(NULL));

	/* a certificate whose key is not the one beside it */
	change_refused(&c, at("server2.pem"), at("live.pem"));
	cr_assert_eq(fresh_get(seed, &c, served, sizeof(served)), 200);
	cr_assert_str_eq(served, want1, "a key that does not match: the old pair serves");

	/* an expired pair (the key first: a mismatch again, then the pair) */
	change_refused(&c, at("expired-key.pem"), at("live-key.pem"));
	change_refused(&c, at("expired.pem"), at("live.pem"));
	cr_assert_eq(fresh_get(seed, &c, served, sizeof(served)), 200);
	cr_assert_str_eq(served, want1, "an expired certificate: the old pair serves");

	/* unreadable: the certificate gone (a Secret being replaced badly) */
	change_refused(&c, NULL, at("live.pem"));
	cr_assert_eq(fresh_get(seed, &c, served, sizeof(served)), 200);
	cr_assert_str_eq(served, want1, "a missing file: the old pair serves");
	cr_assert_eq(metric(&c, "splitkd_tls_certificate_expiry_timestamp_seconds"), expiry);

	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "does not match the certificate"), "%s", log);
	cr_assert_not_null(strstr(log, "the certificate expired"), "%s", log);
	cr_assert_not_null(strstr(log, "No such file or directory"), "%s", log);
	free(log);

	/* a good pair again: taken, and the reload result says so */
	ok = metric(&c, oks);
	install(at("server2-key.pem"), at("live-key.pem"));
	install(at("server2.pem"), at("live.pem"));
	for (uint64_t start = mono_ms(); mono_ms() - start < 3000; sleep_ms(100)) {
		if (fresh_get(seed, &c, served, sizeof(served)) == 200 && strcmp(served, want2) == 0) {
			break;
		}
	}
	cr_assert_str_eq(served, want2);
	cr_assert_eq(metric(&c, "splitkd_tls_last_reload_success"), 1);
	cr_assert_eq(metric(&c, oks), ok + 1);
	cr_assert_gt(metric(&c, "splitkd_tls_certificate_expiry_timestamp_seconds"), expiry);

	/* SIGHUP with nothing changed: a reload that is ok and swaps nothing */
	sleep_ms(1200);
	ok = metric(&c, oks);
	kill(d.pid, SIGHUP);
	for (uint64_t start = mono_ms(); mono_ms() - start < 3000 && metric(&c, oks) == ok;) {
		sleep_ms(50);
	}
	cr_assert_eq(metric(&c, oks), ok + 1);
	cr_assert_eq(fresh_get(seed, &c, served, sizeof(served)), 200);
	cr_assert_str_eq(served, want2);
	log = daemon_log(&d);
	cr_assert_not_null(strstr(log, "the TLS files are unchanged"), "%s", log);
	free(log);
	free(pem1);
	free(pem2);
	daemon_finish(&d);
}

/* GET /v1/status over TLS, parsed: its `tls` member in *tls (the reply
 * keeps it; free the reply). */
static void tls_status(const struct client *c, struct reply *r, const cJSON **tls)
{
	CURL *curl = curl_easy_init();

	cr_assert_eq(tls_get(curl, "/v1/status", c, r, NULL, 0), CURLE_OK);
	curl_easy_cleanup(curl);
	cr_assert_eq(r->status, 200);
	*tls = cJSON_GetObjectItemCaseSensitive(r->json, "tls");
	cr_assert(cJSON_IsObject(*tls), "no tls in %s", r->body);
}

static const cJSON *member(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	cr_assert(cJSON_IsObject(v), "%s is not an object", k);
	return v;
}

/* The TLS files are a source like the catalog: /v1/status shows what the
 * last look found, the last attempt, the counts (as /metrics has them) and
 * the served certificate's dates, which a refused change leaves alone. */
Test(tls, status_shows_the_tls_source, .init = make_pki, .fini = remove_pki, .timeout = 60)
{
	const char *args[] = {"--tls-cert", at("live.pem"), "--tls-key", at("live-key.pem"),
			      "--access-log", "off", NULL};
	struct client c = {at("ca.pem"), NULL, NULL};
	char want_after[40], not_after[40];
	const cJSON *tls;
	struct reply r;
	time_t expiry;
	struct tm tm;

	install(at("server.pem"), at("live.pem"));
	install(at("server-key.pem"), at("live-key.pem"));
	daemon_start(&d, args);
	expiry = (time_t)metric(&c, "splitkd_tls_certificate_expiry_timestamp_seconds");
	cr_assert_not_null(gmtime_r(&expiry, &tm));
	strftime(want_after, sizeof(want_after), "%Y-%m-%dT%H:%M:%S.000Z", &tm);

	tls_status(&c, &r, &tls);
	cr_assert_str_eq(jstr(tls, "source"), at("live.pem"));
	cr_assert_str_eq(jstr(member(tls, "disk"), "state"), "same");
	cr_assert_str_eq(jstr(member(tls, "last_attempt"), "trigger"), "start");
	cr_assert_str_eq(jstr(member(tls, "watch"), "mode"), "inotify");
	cr_assert_eq(jnum(member(tls, "reloads"), "error"), 0);
	cr_assert_str_eq(jstr(member(tls, "certificate"), "not_after"), want_after);
	reply_free(&r);

	change_refused(&c, at("server2.pem"), at("live.pem"));
	tls_status(&c, &r, &tls);
	cr_assert_str_eq(jstr(member(tls, "disk"), "state"), "invalid");
	cr_assert_not_null(strstr(jstr(member(tls, "disk"), "error"), "does not match"), "%s",
			   r.body);
	cr_assert_str_eq(jstr(member(tls, "last_attempt"), "result"), "error");
	cr_assert_str_eq(jstr(member(tls, "last_attempt"), "trigger"), "watch");
	cr_assert_eq(jnum(member(tls, "reloads"), "error"),
		     metric(&c, "splitkd_tls_reloads_total{result=\"error\"}"));
	snprintf(not_after, sizeof(not_after), "%s", jstr(member(tls, "certificate"), "not_after"));
	cr_assert_str_eq(not_after, want_after, "a refused certificate's dates are not shown");
	reply_free(&r);
	daemon_finish(&d);
}

/* ------------------------------------------------------- start-up errors */

/* Runs splitkd to its exit; returns the exit code, its stderr in err. */
static int run_to_exit(const char *const *extra, char *err, size_t cap)
{
	const char *argv[24] = {splitkd_bin(), "--listen", "127.0.0.1:0"};
	char path[] = "/tmp/splitkd-tls-err-XXXXXX";
	int argc = 3, fd = mkstemp(path), status;
	pid_t pid;
	FILE *f;
	size_t n;

	cr_assert_geq(fd, 0);
	for (int i = 0; extra[i] != NULL; i++) {
		argv[argc++] = extra[i];
	}
	argv[argc] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	/* the cases below all fail before listening; a daemon that started
	 * anyway is killed by the test's timeout */
	waitpid(pid, &status, 0);
	close(fd);
	f = fopen(path, "rb");
	n = fread(err, 1, cap - 1, f);
	err[n] = '\0';
	fclose(f);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(tls, bad_tls_flags_and_files_stop_the_start, .init = make_pki, .fini = remove_pki,
     .timeout = 60)
{
	const struct {
		const char *args[9];
		int code;
		const char *says;
	} cases[] = {
		{{"--tls-cert", at("server.pem"), NULL}, 2, "go together"},
		{{"--tls-client-ca", at("ca.pem"), NULL}, 2, "need --tls-cert"},
		{{"--tls-cert", at("server.pem"), "--tls-key", at("client-key.pem"), NULL}, 1,
		 "does not match"},
		/* a date, not a count of seconds */
		{{"--tls-cert", at("expired.pem"), "--tls-key", at("expired-key.pem"), NULL}, 1,
		 "the certificate expired on 20"},
		{{"--tls-cert", at("nope.pem"), "--tls-key", at("server-key.pem"), NULL}, 1,
		 "No such file"},
		{{"--tls-cert", at("server-key.pem"), "--tls-key", at("server-key.pem"), NULL}, 1,
		 "no PEM certificate"},
		{{"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"), "--tls-client-ca",
		  at("server-key.pem"), NULL},
		 1, "--tls-client-ca"},
		{{"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"), "--tls-priority",
		  "NORMAL:+NOPE", NULL},
		 1, "--tls-priority"},
	};
	char err[4096];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = run_to_exit(cases[i].args, err, sizeof(err));

		cr_expect_eq(code, cases[i].code, "case %zu: exit %d: %s", i, code, err);
		cr_expect_not_null(strstr(err, cases[i].says), "case %zu: \"%s\" not in: %s", i,
				   cases[i].says, err);
	}
}

/* ------------------------------------------- raw bytes on the connection */

/* A GnuTLS client whose transport keeps every byte the server sent. */
struct wire {
	int fd;
	unsigned char got[1 << 16];
	size_t len;
};

static ssize_t wire_pull(gnutls_transport_ptr_t p, void *data, size_t n)
{
	struct wire *w = p;
	ssize_t r = recv(w->fd, data, n, 0);

	if (r > 0 && w->len + (size_t)r <= sizeof(w->got)) {
		memcpy(w->got + w->len, data, (size_t)r);
		w->len += (size_t)r;
	}
	return r;
}

static ssize_t wire_push(gnutls_transport_ptr_t p, const void *data, size_t n)
{
	struct wire *w = p;

	return send(w->fd, data, n, MSG_NOSIGNAL);
}

/* Sends `req` over TLS and reads until the server closes. Returns the
 * plaintext answer (free it); w holds the raw bytes. */
static char *tls_exchange(struct wire *w, const char *req, size_t req_len)
{
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s;
	struct timeval tv = {5, 0};
	char *answer = calloc(1, 65536);
	size_t got = 0;
	int rc;

	w->len = 0;
	w->fd = connect_raw(d.port);
	setsockopt(w->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(gnutls_certificate_allocate_credentials(&cred), 0);
	cr_assert_gt(gnutls_certificate_set_x509_trust_file(cred, at("ca.pem"), GNUTLS_X509_FMT_PEM), 0);
	cr_assert_eq(gnutls_init(&s, GNUTLS_CLIENT), 0);
	gnutls_set_default_priority(s);
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_server_name_set(s, GNUTLS_NAME_DNS, "localhost", 9);
	gnutls_session_set_verify_cert(s, "localhost", 0);
	gnutls_transport_set_ptr(s, w);
	gnutls_transport_set_pull_function(s, wire_pull);
	gnutls_transport_set_push_function(s, wire_push);
	do {
		rc = gnutls_handshake(s);
	} while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
	cr_assert_eq(rc, 0, "handshake: %s", gnutls_strerror(rc));
	for (size_t sent = 0; sent < req_len;) {
		ssize_t n = gnutls_record_send(s, req + sent, req_len - sent);

		cr_assert_gt(n, 0, "send: %s", gnutls_strerror((int)n));
		sent += (size_t)n;
	}
	for (;;) {
		ssize_t n = gnutls_record_recv(s, answer + got, 65535 - got);

		if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
			continue;
		}
		if (n <= 0) {
			break; /* closed, with or without a close_notify */
		}
		got += (size_t)n;
	}
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	close(w->fd);
	return answer;
}

/* Every byte the server sent is inside a TLS record (RFC 8446 5.1:
 * type 20-23, legacy version 3.x, then a length). */
static void assert_only_records(const struct wire *w)
{
	size_t at_byte = 0;

	while (at_byte + 5 <= w->len) {
		unsigned type = w->got[at_byte], major = w->got[at_byte + 1];
		size_t len = (size_t)w->got[at_byte + 3] << 8 | w->got[at_byte + 4];

		cr_assert(type >= 20 && type <= 23 && major == 3,
			  "byte %zu is no TLS record header: \"%.16s\"", at_byte,
			  (const char *)w->got + at_byte);
		at_byte += 5 + len;
	}
	cr_assert_eq(at_byte, w->len, "%zu stray bytes after the last record", w->len - at_byte);
	for (size_t i = 0; i + 7 <= w->len; i++) {
		cr_assert(memcmp(w->got + i, "HTTP/1.", 7) != 0, "plaintext HTTP at byte %zu", i);
	}
}

/* A header block small enough for --max-header (about 800 bytes of 4096)
 * but with too many fields for the answer to fit beside their records in
 * the connection's memory: splitkd's own writer answers it (a 431
 * problem+json) where libmicrohttpd has no room to. (With a hundred
 * fields libmicrohttpd runs out first and sends its own HTML 431.) */
static size_t crowded(char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "GET /healthz HTTP/1.1\r\nHost: t\r\n");

	for (int i = 0; i < 75; i++) {
		n += (size_t)snprintf(buf + n, cap - n, "X-%d: %d\r\n", i, i);
	}
	n += (size_t)snprintf(buf + n, cap - n, "\r\n");
	return n;
}

Test(tls, where_splitkd_writes_raw_a_tls_connection_gets_it_through_the_session, .init = make_pki,
     .fini = remove_pki, .timeout = 60)
{
	const char *plain[] = {"--access-log", "off", NULL};
	const char *args[] = {"--tls-cert", at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--access-log", "off", NULL};
	char req[4096], buf[512] = {0};
	size_t len = crowded(req, sizeof(req));
	struct wire *w = calloc(1, sizeof(*w));
	char *answer;
	ssize_t n;
	int fd;

	/* over plain HTTP this request takes the raw writer: the control */
	daemon_start(&d, plain);
	fd = connect_raw(d.port);
	cr_assert_eq(send(fd, req, len, 0), (ssize_t)len);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL);
	close(fd);
	cr_assert_gt(n, 12);
	cr_assert_eq(strncmp(buf, "HTTP/1.1 431", 12), 0, "%s", buf);
	cr_assert_not_null(strstr(buf, "application/problem+json"), "splitkd's answer, not MHD's: %s", buf);
	daemon_finish(&d);

	daemon_start(&d, args);
	answer = tls_exchange(w, req, len);
	assert_only_records(w);
	cr_assert_eq(strncmp(answer, "HTTP/1.1 431", 12), 0, "the 431 goes through the session: %s",
		     answer);
	cr_assert_not_null(strstr(answer, "application/problem+json"), "%s", answer);
	free(answer);

	/* and the same connection path still serves a good request */
	snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
	answer = tls_exchange(w, req, strlen(req));
	assert_only_records(w);
	cr_assert_eq(strncmp(answer, "HTTP/1.1 200", 12), 0, "%s", answer);
	free(answer);
	free(w);
	daemon_finish(&d);
}

/* -------------------------------------------------- the header deadline */

Test(tls, a_stalled_handshake_is_closed_by_the_header_deadline, .init = make_pki,
     .fini = remove_pki, .timeout = 60)
{
	const char *args[] = {"--tls-cert",      at("server.pem"), "--tls-key", at("server-key.pem"),
			      "--header-timeout", "1", "--idle-timeout", "60", NULL};
	/* a TLS record header announcing a 512-byte ClientHello, and a part of it */
	const unsigned char hello[] = {22, 3, 1, 2, 0, 1, 0, 1, 252, 3, 3};
	struct timeval tv = {20, 0};
	uint64_t start;
	char buf[64];
	int fd;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	start = mono_ms();
	cr_assert_eq(send(fd, hello, sizeof(hello), 0), (ssize_t)sizeof(hello));
	while (recv(fd, buf, sizeof(buf), 0) > 0) {
	}
	/* the deadline is the behaviour: 1 s after the first byte, seen by a
	 * sweep that looks after a second of waiting; 8 s is a wide margin,
	 * the idle timeout (60 s) would be far past it */
	cr_assert_lt(mono_ms() - start, 8000, "closed after %llu ms",
		     (unsigned long long)(mono_ms() - start));
	close(fd);
	daemon_finish(&d);
}
