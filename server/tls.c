/* SPDX-License-Identifier: AGPL-3.0-only */
#include "tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <microhttpd.h>


struct tls_creds {
	atomic_uint refs;
	gnutls_pcert_st pcerts[TLS_MAX_CHAIN];
	unsigned num_pcerts;
	gnutls_privkey_t key;
	gnutls_x509_trust_list_t ca; /* NULL: no client certificates asked for */
	int64_t not_before, not_after; /* unix seconds; 0: none */
};

static void creds_free(struct tls_creds *c)
{
	if (c == NULL) {
		return;
	}
	for (unsigned i = 0; i < c->num_pcerts; i++) {
		gnutls_pcert_deinit(&c->pcerts[i]);
	}
	if (c->key != NULL) {
		gnutls_privkey_deinit(c->key);
	}
	if (c->ca != NULL) {
		gnutls_x509_trust_list_deinit(c->ca, 1);
	}
	free(c);
}

static void creds_put(struct tls_creds *c)
{
	if (c != NULL && atomic_fetch_sub(&c->refs, 1) == 1) {
		creds_free(c);
	}
}

/* Whether the private key is the certificate's. */
static bool key_matches(gnutls_privkey_t key, gnutls_pubkey_t cert_key)
{
	gnutls_pubkey_t pub = NULL;
	unsigned char a[64], b[64];
	size_t a_len = sizeof(a), b_len = sizeof(b);
	bool same = false;

	if (gnutls_pubkey_init(&pub) != 0) {
		return false;
	}
	if (gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
	    gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a, &a_len) == 0 &&
	    gnutls_pubkey_get_key_id(cert_key, GNUTLS_KEYID_USE_SHA256, b, &b_len) == 0) {
		same = a_len == b_len && memcmp(a, b, a_len) == 0;
	}
	gnutls_pubkey_deinit(pub);
	return same;
}

/* A time as a date (RFC 3339, UTC), or "never" for none. */
static void format_time(int64_t when, char *out, size_t cap)
{
	time_t tt = (time_t)when;
	struct tm tm;

	if (when <= 0 || gmtime_r(&tt, &tm) == NULL) {
		snprintf(out, cap, "never");
		return;
	}
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The served certificate's validity: its dates set; -1 with the reason
 * when it is expired or not yet valid at `now`, its dates as dates. */
static int check_validity(const gnutls_datum_t *der, time_t now, int64_t *not_before,
			  int64_t *not_after, char *err, size_t cap)
{
	gnutls_x509_crt_t crt = NULL;
	time_t before, after;
	char when[32];
	int ret = -1;

	if (gnutls_x509_crt_init(&crt) != 0) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) != 0) {
		snprintf(err, cap, "not an X.509 certificate");
		goto done;
	}
	before = gnutls_x509_crt_get_activation_time(crt);
	after = gnutls_x509_crt_get_expiration_time(crt);
	if (after != (time_t)-1 && after <= now) {
		format_time((int64_t)after, when, sizeof(when));
		snprintf(err, cap, "the certificate expired on %s (%lld days ago)", when,
			 (long long)((now - after) / 86400));
		goto done;
	}
	if (before != (time_t)-1 && before > now) {
		format_time((int64_t)before, when, sizeof(when));
		snprintf(err, cap, "the certificate is not valid before %s (in %lld days)", when,
			 (long long)((before - now) / 86400));
		goto done;
	}
	*not_before = before == (time_t)-1 ? 0 : (int64_t)before;
	*not_after = after == (time_t)-1 ? 0 : (int64_t)after;
	ret = 0;
done:
	gnutls_x509_crt_deinit(crt);
	return ret;
}

/* A file's bytes as GnuTLS takes them (it only reads them). */
static gnutls_datum_t datum(const struct reload_read_text *b)
{
	return (gnutls_datum_t){(unsigned char *)(uintptr_t)b->data, (unsigned)b->len};
}

/* The TLS kind's check: the files' bytes (cert, key, then the CA when
 * there is one) into credentials. Returns them (one reference), or NULL
 * with the reason in err. */
static void *creds_check(void *cls, const struct reload_read_text *files, char *err, size_t cap)
{
	const struct tls *t = cls;
	/* each file's flag and path, for the errors ("--tls-key /etc/k.pem") */
	const struct reload_read_file *cf = &t->src.files[0], *kf = &t->src.files[1];
	struct tls_creds *c = calloc(1, sizeof(*c));
	gnutls_datum_t cert = datum(&files[0]), key = datum(&files[1]);
	unsigned n = TLS_MAX_CHAIN;
	char why[200];
	int rc;

	if (c == NULL) {
		snprintf(err, cap, "out of memory");
		return NULL;
	}
	atomic_init(&c->refs, 1);
	rc = gnutls_pcert_list_import_x509_raw(c->pcerts, &n, &cert, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0 || n == 0) {
		snprintf(err, cap, "%s %s: no PEM certificate (%s)", cf->flag, cf->path,
			 rc < 0 ? gnutls_strerror(rc) : "none found");
		goto fail;
	}
	c->num_pcerts = n;
	if (gnutls_privkey_init(&c->key) != 0) {
		snprintf(err, cap, "out of memory");
		goto fail;
	}
	rc = gnutls_privkey_import_x509_raw(c->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, cap, "%s %s: no unencrypted PEM private key (%s)", kf->flag, kf->path,
			 gnutls_strerror(rc));
		goto fail;
	}
	if (!key_matches(c->key, c->pcerts[0].pubkey)) {
		snprintf(err, cap, "%s %s does not match the certificate in %s %s", kf->flag,
			 kf->path, cf->flag, cf->path);
		goto fail;
	}
	if (check_validity(&c->pcerts[0].cert, time(NULL), &c->not_before, &c->not_after, why,
			   sizeof(why)) != 0) {
		snprintf(err, cap, "%s %s: %s", cf->flag, cf->path, why);
		goto fail;
	}
	if (t->src.num_files > 2) { /* --tls-client-ca */
		const struct reload_read_file *af = &t->src.files[2];
		gnutls_datum_t ca = datum(&files[2]);

		if (gnutls_x509_trust_list_init(&c->ca, 0) != 0) {
			snprintf(err, cap, "out of memory");
			goto fail;
		}
		rc = gnutls_x509_trust_list_add_trust_mem(c->ca, &ca, NULL, GNUTLS_X509_FMT_PEM,
							  0, 0);
		if (rc <= 0) {
			snprintf(err, cap, "%s %s: no PEM certificate (%s)", af->flag, af->path,
				 rc < 0 ? gnutls_strerror(rc) : "none found");
			goto fail;
		}
	}
	return c;
fail:
	creds_free(c);
	return NULL;
}

static void creds_drop(void *value)
{
	creds_put(value);
}

/* The TLS kind's swap: new handshakes take `value`; a connection keeps
 * the generation it started with until it closes. */
static int creds_swap(void *cls, void *value, char *err, size_t cap)
{
	struct tls *t = cls;
	struct tls_creds *c = value, *old;

	(void)err;
	(void)cap;
	pthread_mutex_lock(&t->lock);
	old = t->current;
	t->current = c;
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->expiry, c->not_after);
	creds_put(old); /* freed when its last connection closes */
	return 0;
}

static void creds_say(void *cls, enum reload_outcome outcome, const char *why, char *out,
		      size_t cap)
{
	struct tls *t = cls;
	char expires[32];

	switch (outcome) {
	case RELOAD_REFUSED:
		snprintf(out, cap, "reload refused, the old certificate keeps serving: %s", why);
		break;
	case RELOAD_UNCHANGED:
		snprintf(out, cap, "reload: the TLS files are unchanged");
		break;
	case RELOAD_SWAPPED:
		format_time((int64_t)atomic_load(&t->expiry), expires, sizeof(expires));
		snprintf(out, cap, "reloaded: %s, expires %s; new handshakes take it",
			 t->src.files[0].path, expires);
		break;
	}
}

/* The served generation's dates, under the lock that guards which one
 * is current. */
static void creds_dates(struct tls *t, int64_t *not_before, int64_t *not_after)
{
	pthread_mutex_lock(&t->lock);
	*not_before = t->current != NULL ? t->current->not_before : 0;
	*not_after = t->current != NULL ? t->current->not_after : 0;
	pthread_mutex_unlock(&t->lock);
}

static void creds_report(void *cls, const struct api_source_status *st, struct api_status *out)
{
	struct tls *t = cls;

	out->tls_on = true;
	out->tls = *st;
	creds_dates(t, &out->tls_not_before, &out->tls_not_after);
}

static const struct reload_kind tls_kind = {
	.event = "tls",
	.max_bytes = TLS_MAX_FILE,
	.check = creds_check,
	.swap = creds_swap,
	.drop = creds_drop,
	.say = creds_say,
	.report = creds_report,
};

int tls_init(struct tls *t, struct reload *reload, const char *cert_path, const char *key_path,
	     const char *ca_path, const char *priority, const struct log *log, char *err,
	     size_t err_cap)
{
	const struct reload_read_file files[3] = {
		{"--tls-cert", cert_path}, {"--tls-key", key_path}, {"--tls-client-ca", ca_path}};
	gnutls_priority_t prio = NULL;
	const char *where = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	t->priority = priority != NULL ? priority : TLS_DEFAULT_PRIORITY;
	t->log = log;
	pthread_mutex_init(&t->lock, NULL);
	/* the priority string is checked here, with the place it went wrong,
	 * rather than by the engine at start with no word why */
	rc = gnutls_priority_init(&prio, t->priority, &where);
	if (rc != 0) {
		snprintf(err, err_cap, "--tls-priority: %s at \"%.40s\"", gnutls_strerror(rc),
			 where != NULL ? where : t->priority);
		return -1;
	}
	gnutls_priority_deinit(prio);
	reload_source_init(&t->src, &tls_kind, t, files, ca_path != NULL ? 3 : 2, TLS_CHECK_SECONDS);
	return reload_add(reload, &t->src, err, err_cap);
}

void tls_cleanup(struct tls *t)
{
	if (t == NULL || t->priority == NULL) {
		return; /* zeroed, or cleaned up already */
	}
	creds_put(t->current);
	t->current = NULL;
	pthread_mutex_destroy(&t->lock);
	t->priority = NULL;
}

/* The connection a GnuTLS session belongs to: libmicrohttpd keeps its
 * connection in the session's pointer, and our tls_conn heads the socket
 * context (see tls.h). */
static struct tls_conn *conn_of(gnutls_session_t session)
{
	struct MHD_Connection *mc = gnutls_session_get_ptr(session);
	const union MHD_ConnectionInfo *info;

	if (mc == NULL) {
		return NULL;
	}
	info = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info != NULL ? info->socket_context : NULL;
}

/* Why a client's chain did not verify, from GnuTLS's status bits; NULL
 * when it did. */
static const char *rejection(unsigned status)
{
	if (status == 0) {
		return NULL;
	}
	if (status & GNUTLS_CERT_EXPIRED) {
		return "its certificate has expired";
	}
	if (status & GNUTLS_CERT_NOT_ACTIVATED) {
		return "its certificate is not valid yet";
	}
	if (status & GNUTLS_CERT_PURPOSE_MISMATCH) {
		return "its certificate is not for TLS clients (its key purpose)";
	}
	if (status & (GNUTLS_CERT_SIGNER_NOT_FOUND | GNUTLS_CERT_SIGNER_NOT_CA)) {
		return "its certificate is not signed by --tls-client-ca";
	}
	if (status & GNUTLS_CERT_REVOKED) {
		return "its certificate is revoked";
	}
	return "its certificate did not verify against --tls-client-ca";
}

/* The client's chain against --tls-client-ca, for a TLS client. Returns
 * 0 to go on with the handshake; anything else ends it. */
static int verify_client(gnutls_session_t session)
{
	struct tls_conn *c = conn_of(session);
	gnutls_x509_crt_t crts[TLS_MAX_CHAIN];
	gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
					 (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
	const gnutls_datum_t *peers;
	unsigned n = 0, num = 0, status = 1;
	int ret = -1;

	if (c == NULL || c->creds == NULL || c->creds->ca == NULL) {
		return -1;
	}
	c->reject_reason = "its certificate does not parse";
	peers = gnutls_certificate_get_peers(session, &n);
	if (peers == NULL || n == 0) {
		c->reject_reason = "it sent no certificate";
		goto done;
	}
	n = n > TLS_MAX_CHAIN ? TLS_MAX_CHAIN : n;
	for (; num < n; num++) {
		if (gnutls_x509_crt_init(&crts[num]) != 0) {
			goto done;
		}
		if (gnutls_x509_crt_import(crts[num], &peers[num], GNUTLS_X509_FMT_DER) != 0) {
			num++;
			goto done;
		}
	}
	c->reject_reason = "its certificate did not verify against --tls-client-ca";
	if (gnutls_x509_trust_list_verify_crt2(c->creds->ca, crts, num, &purpose, 1, 0, &status,
					       NULL) == 0) {
		c->reject_reason = rejection(status);
		ret = status == 0 ? 0 : -1;
	}
done:
	for (unsigned i = 0; i < num; i++) {
		gnutls_x509_crt_deinit(crts[i]);
	}
	if (ret != 0) {
		c->client_rejected = true;
	}
	return ret;
}

static int on_finished(gnutls_session_t session, unsigned htype, unsigned when, unsigned incoming,
		       const gnutls_datum_t *msg)
{
	struct tls_conn *c = conn_of(session);

	(void)htype;
	(void)when;
	(void)msg;
	if (c != NULL && incoming && !c->handshake_done) {
		/* counted here, not at the close: a scrape over a connection
		 * still open counts its own handshake, and every earlier one */
		c->handshake_done = true;
		atomic_fetch_add_explicit(&c->tls->handshakes, 1, memory_order_relaxed);
	}
	return 0;
}

void tls_conn_start(struct tls_conn *c, struct tls *t, gnutls_session_t session)
{
	memset(c, 0, sizeof(*c));
	c->tls = t;
	pthread_mutex_lock(&t->lock);
	c->creds = t->current;
	atomic_fetch_add(&c->creds->refs, 1);
	pthread_mutex_unlock(&t->lock);
	c->session = session;
	if (session == NULL) {
		return;
	}
	gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST,
					   on_finished);
	if (c->creds->ca != NULL) {
		/* REQUIRE: a client that sends no certificate fails the
		 * handshake; the verify function judges one that does */
		gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
		gnutls_session_set_verify_function(session, verify_client);
	}
}

/* The client's address and port, "[v6]:port" or "v4:port". */
static void peer_name(int fd, char *out, size_t cap)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getpeername(fd, (struct sockaddr *)&a, &len) == 0) {
		if (a.ss_family == AF_INET6) {
			const struct sockaddr_in6 *v6 = (const void *)&a;

			inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
			port = ntohs(v6->sin6_port);
			snprintf(out, cap, "[%s]:%u", host, port);
			return;
		}
		if (a.ss_family == AF_INET) {
			const struct sockaddr_in *v4 = (const void *)&a;

			inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
			port = ntohs(v4->sin_port);
		}
	}
	snprintf(out, cap, "%s:%u", host, port);
}

void tls_conn_end(struct tls_conn *c, int fd, bool received)
{
	struct tls *t = c->tls;

	if (t == NULL) {
		return;
	}
	if (!c->handshake_done && received) {
		/* with a client CA, a handshake that got past the hello and
		 * failed is taken for the client's certificate: GnuTLS ends
		 * one without a certificate before our verify runs */
		bool client = c->client_rejected ||
			      (c->hello_seen && c->creds != NULL && c->creds->ca != NULL);

		atomic_fetch_add_explicit(&t->failures[client ? TLS_FAIL_CLIENT_CERTIFICATE
							      : TLS_FAIL_HANDSHAKE],
					  1, memory_order_relaxed);
		if (client) {
			/* the client sees only a closed connection: the log says
			 * who was refused and why, one line a refusal */
			char peer[INET6_ADDRSTRLEN + 16];

			peer_name(fd, peer, sizeof(peer));
			log_event(t->log, "tls", "refused a client from %s: %s", peer,
				  c->reject_reason != NULL ? c->reject_reason
							   : "it sent no certificate (--tls-client-ca "
							     "requires one)");
		}
	}
	creds_put(c->creds);
	c->creds = NULL;
	c->tls = NULL;
}

int tls_send(struct tls_conn *c, const void *buf, size_t len)
{
	const char *p = buf;

	if (c->session == NULL || !c->handshake_done) {
		return -1;
	}
	while (len > 0) {
		ssize_t n = gnutls_record_send(c->session, p, len);

		if (n == GNUTLS_E_INTERRUPTED) {
			continue;
		}
		if (n <= 0) {
			/* GNUTLS_E_AGAIN included: the connection closes next, so a
			 * record half sent is never resumed or followed */
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		 const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		 unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	struct tls_conn *c = conn_of(session);

	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	if (c == NULL || c->creds == NULL) {
		return -1; /* not a connection splitkd took: no certificate */
	}
	c->hello_seen = true;
	/* lent: the connection's reference keeps them until it closes */
	*pcert = c->creds->pcerts;
	*pcert_length = c->creds->num_pcerts;
	*privkey = c->creds->key;
	return 0;
}

void tls_figures(struct tls *t, struct metrics_tls *out)
{
	struct api_source_status st;

	reload_source_status(&t->src, &st);
	out->expiry = (int64_t)atomic_load(&t->expiry);
	out->loaded_at = st.loaded_at_ms / 1000;
	out->reloads_ok = st.reloads_ok;
	out->reloads_error = st.reloads_error;
	out->last_reload_ok = st.last.ok;
	out->handshakes = (uint64_t)atomic_load(&t->handshakes);
	out->failures_client_certificate =
		(uint64_t)atomic_load(&t->failures[TLS_FAIL_CLIENT_CERTIFICATE]);
	out->failures_handshake = (uint64_t)atomic_load(&t->failures[TLS_FAIL_HANDSHAKE]);
}
