/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The TLS files (server/tls.c) through its own API over a real reload, no
 * network: a test PKI made for each test by tests/tls/make-certs.sh
 * (certtool). A good pair loads, its dates reported; each bad file is
 * refused at start with the flag and the reason (a key of another
 * certificate, an expired certificate, no PEM, a client CA without a
 * certificate, a priority string GnuTLS refuses, a file too large); a
 * rotation swaps in the new pair, a bad one keeps the last good serving
 * and says why, and a connection keeps the generation it started with;
 * a connection that ends before its handshake is counted.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reload_rig.h"
#include "tls.h"

/* A reload with no catalog source, the TLS source added to it. */
struct rig {
	struct reload_rig base;
	struct tls tls;
	char cert[160], key[160];
};

static void make_pki(void)
{
	char cmd[160];

	scratch_setup();
	snprintf(cmd, sizeof(cmd), "sh tests/tls/make-certs.sh %s", dir);
	cr_assert_eq(system(cmd), 0,
		     "tests/tls/make-certs.sh failed (certtool: scripts/deps.sh tls)");
}

static void pki_path(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* A PKI file's text, a new string. */
static char *pki_text(const char *name)
{
	char p[160];
	FILE *f;
	char *text = calloc(1, 65536);
	size_t n;

	pki_path(name, p, sizeof(p));
	f = fopen(p, "rb");
	cr_assert_not_null(f, "%s", p);
	cr_assert_not_null(text);
	n = fread(text, 1, 65535, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The served pair's files become copies of `cert` and `key`, each
 * renamed into place as a Secret's update would. */
static void serve_files(struct rig *r, const char *cert, const char *key)
{
	char *c = pki_text(cert), *k = pki_text(key);

	write_rename(r->cert, c);
	write_rename(r->key, k);
	free(c);
	free(k);
}

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	reload_rig_start(&r->base, NULL, NULL);
	pki_path("served.pem", r->cert, sizeof(r->cert));
	pki_path("served-key.pem", r->key, sizeof(r->key));
}

/* The rig serving server.pem. */
static void rig_start(struct rig *r)
{
	char err[512] = "";

	rig_init(r);
	serve_files(r, "server.pem", "server-key.pem");
	cr_assert_eq(tls_init(&r->tls, &r->base.reload, r->cert, r->key, NULL, NULL, &r->base.log,
			      err, sizeof(err)), 0, "%s", err);
}

static void rig_stop(struct rig *r)
{
	reload_rig_stop(&r->base); /* the reload first: it follows the TLS files */
	tls_cleanup(&r->tls);
}

static struct metrics_tls figures(struct rig *r)
{
	struct metrics_tls f;

	memset(&f, 0, sizeof(f));
	tls_figures(&r->tls, &f);
	return f;
}

Test(tls, a_good_pair_loads_and_its_dates_are_reported, .init = make_pki, .fini = scratch_teardown)
{
	struct rig r;
	struct metrics_tls f;
	struct api_status st;
	time_t now = time(NULL);

	rig_start(&r);
	f = figures(&r);
	cr_assert_gt(f.expiry, now + 364 * 86400, "server.pem expires in 365 days");
	cr_assert_lt(f.expiry, now + 366 * 86400);
	cr_assert_geq(f.loaded_at, now - 5);
	cr_assert(f.last_reload_ok);
	cr_assert_eq(f.reloads_error, 0);
	memset(&st, 0, sizeof(st));
	reload_status(&r.base.reload, &st);
	cr_assert(st.tls_on, "the TLS source reports its place in /v1/status");
	cr_assert_eq(st.tls_not_after, f.expiry);
	cr_assert_leq(st.tls_not_before, now);
	cr_assert_eq(st.tls.disk, API_DISK_SAME);
	rig_stop(&r);
}

/* Refused at start: a start-up error naming the flag, the path and why;
 * nothing serves, so there is no last good to keep. */
Test(tls, a_bad_file_is_refused_at_start_with_its_reason, .init = make_pki,
     .fini = scratch_teardown)
{
	static const struct {
		const char *cert, *key, *ca, *priority;
		const char *want[2]; /* in the error */
	} cases[] = {
		{"server.pem", "server2-key.pem", NULL, NULL,
		 {"--tls-key ", "does not match the certificate in --tls-cert "}},
		{"expired.pem", "expired-key.pem", NULL, NULL,
		 {"--tls-cert ", "the certificate expired on 2021-01-01T00:00:00Z"}},
		{"garbage.pem", "server-key.pem", NULL, NULL,
		 {"--tls-cert ", "no PEM certificate"}},
		{"server.pem", "garbage.pem", NULL, NULL,
		 {"--tls-key ", "no unencrypted PEM private key"}},
		{"server.pem", "server-key.pem", "garbage.pem", NULL,
		 {"--tls-client-ca ", "no PEM certificate"}},
		{"server.pem", "server-key.pem", NULL, "NORMAL:+NOT-A-THING",
		 {"--tls-priority: ", "NOT-A-THING"}},
		{"missing.pem", "server-key.pem", NULL, NULL, {"missing.pem", "No such file"}},
		{"huge.pem", "server-key.pem", NULL, NULL,
		 {"huge.pem", "larger than 1048576 bytes"}},
	};
	char *huge = malloc(TLS_MAX_FILE + 2);
	char garbage[160], big[160];

	cr_assert_not_null(huge);
	pki_path("garbage.pem", garbage, sizeof(garbage));
	write_rename(garbage, "-----BEGIN NOTHING-----\nnot PEM\n-----END NOTHING-----\n");
	memset(huge, 'x', TLS_MAX_FILE + 1);
	huge[TLS_MAX_FILE + 1] = '\0';
	pki_path("huge.pem", big, sizeof(big));
	write_rename(big, huge);
	free(huge);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rig r;
		char cert[160], key[160], ca[160], err[512] = "";

		rig_init(&r);
		pki_path(cases[i].cert, cert, sizeof(cert));
		pki_path(cases[i].key, key, sizeof(key));
		if (cases[i].ca != NULL) {
			pki_path(cases[i].ca, ca, sizeof(ca));
		}
		cr_assert_eq(tls_init(&r.tls, &r.base.reload, cert, key,
				      cases[i].ca != NULL ? ca : NULL, cases[i].priority,
				      &r.base.log, err, sizeof(err)), -1,
			     "case %zu was taken", i);
		for (size_t k = 0; k < 2; k++) {
			cr_assert_not_null(strstr(err, cases[i].want[k]), "case %zu: %s", i, err);
		}
		rig_stop(&r);
	}
}

/* A rotation (SIGHUP here; the watch runs the same cycle) swaps in the
 * new pair; a bad pair is refused and the last good keeps serving; the
 * good bytes back are what serves: unchanged. */
Test(tls, a_reload_swaps_a_good_pair_and_keeps_the_last_good, .init = make_pki,
     .fini = scratch_teardown)
{
	struct rig r;
	struct metrics_tls before, f;

	rig_start(&r);
	before = figures(&r);
	serve_files(&r, "server2.pem", "server2-key.pem");
	reload_now(&r.base.reload);
	f = figures(&r);
	cr_assert_gt(f.expiry, before.expiry, "server2.pem (366 days) serves");
	cr_assert(f.last_reload_ok);
	cr_assert_eq(f.reloads_ok, before.reloads_ok + 1);
	before = f;

	serve_files(&r, "server.pem", "server2-key.pem"); /* a half-done rotation */
	reload_now(&r.base.reload);
	f = figures(&r);
	cr_assert_eq(f.expiry, before.expiry, "the last good keeps serving");
	cr_assert(!f.last_reload_ok);
	cr_assert_eq(f.reloads_error, 1);
	serve_files(&r, "expired.pem", "expired-key.pem");
	reload_now(&r.base.reload);
	f = figures(&r);
	cr_assert_eq(f.expiry, before.expiry);
	cr_assert_eq(f.reloads_error, 2);

	serve_files(&r, "server2.pem", "server2-key.pem");
	reload_now(&r.base.reload);
	f = figures(&r);
	cr_assert(f.last_reload_ok);
	cr_assert_eq(f.expiry, before.expiry);
	scratch_logged(r.base.log_file, "reloaded: ", 1);
	scratch_logged(r.base.log_file, "reload refused, the old certificate keeps serving: ", 2);
	scratch_logged(r.base.log_file, "does not match the certificate", 1);
	scratch_logged(r.base.log_file, "the certificate expired on", 1);
	scratch_logged(r.base.log_file, "reload: the TLS files are unchanged", 1);
	rig_stop(&r);
}

/* A connection holds the generation it started with through a rotation;
 * the next one takes the new. One that ends before its handshake is a
 * failed handshake if the client sent anything, and nothing if not. */
Test(tls, a_connection_keeps_its_generation_and_an_early_end_counts, .init = make_pki,
     .fini = scratch_teardown)
{
	struct rig r;
	struct tls_conn old, next, silent;
	struct metrics_tls f;

	rig_start(&r);
	tls_conn_start(&old, &r.tls, NULL);
	serve_files(&r, "server2.pem", "server2-key.pem");
	reload_now(&r.base.reload);
	tls_conn_start(&next, &r.tls, NULL);
	cr_assert_not_null(old.creds);
	cr_assert_neq(old.creds, next.creds, "a new connection takes the new generation");
	tls_conn_start(&silent, &r.tls, NULL);
	tls_conn_end(&silent, -1, false); /* connected and closed: no handshake failed */
	tls_conn_end(&old, -1, true);     /* sent bytes, never finished */
	f = figures(&r);
	cr_assert_eq(f.failures_handshake, 1);
	cr_assert_eq(f.failures_client_certificate, 0);
	cr_assert_null(old.creds, "its reference let go");
	tls_conn_end(&next, -1, true);
	cr_assert_eq(figures(&r).failures_handshake, 2);
	rig_stop(&r);
}
