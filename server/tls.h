/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * tls — HTTPS for splitkd: the certificate, key and client CA from PEM
 * files, checked, served per handshake, and replaced without a restart.
 *
 * libmicrohttpd (GnuTLS) asks for the certificate at every handshake
 * through tls_retrieve (MHD_OPTION_HTTPS_CERT_CALLBACK), so a reload only
 * swaps which credentials the next connection takes; a connection keeps
 * the ones it started with (tls_conn_start takes a reference, tls_conn_end
 * lets it go) and is never disturbed by a rotation. A reload that fails
 * (unreadable file, a key that does not match the certificate, a
 * certificate expired or not yet valid, a CA file with no certificate)
 * keeps the old credentials serving, and says why: the log, GET
 * /v1/status's `tls`, and the splitkd_tls_* series (tls_figures, written
 * by metrics.c).
 *
 * With a client CA every handshake requires a client certificate that
 * chains to it (key purpose: TLS client); a client without one, or with
 * another, fails at the handshake and is counted.
 *
 * The files are one source of reload.c's (struct reload_source, the TLS
 * kind): read by its one bounded reader, followed by its one watch
 * (directory events and a check every TLS_CHECK_SECONDS) and by SIGHUP,
 * deduplicated by content, counted and logged there, like the catalog.
 * This module only says what the bytes mean (a certificate chain, a key
 * that matches it, dates that hold, a CA with a certificate) and puts a
 * checked generation in service.
 *
 * Ownership: tls_init/tls_cleanup pair up (tls_init adds the source to
 * the reload, which must be cleaned up before tls_cleanup);
 * tls_conn_start/tls_conn_end bracket one connection. Thread-safe: one
 * mutex guards which generation is current (the reload's thread swaps it,
 * every handshake takes a reference under it, once per connection). The
 * paths and the priority string are borrowed from the configuration and
 * must outlive the struct.
 */
#ifndef SPLITKD_TLS_H
#define SPLITKD_TLS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <gnutls/abstract.h> /* gnutls_pcert_st */
#include <gnutls/gnutls.h>

#include "log.h"
#include "metrics.h"
#include "reload.h"

/* TLS 1.2 and 1.3 only, ECDHE (or TLS 1.3's (EC)DHE) key exchange only,
 * AEAD ciphers only: every suite is forward-secret. --tls-priority
 * replaces it. */
#define TLS_DEFAULT_PRIORITY                                                                   \
	"SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"       \
	"-CIPHER-ALL:+CHACHA20-POLY1305:+AES-256-GCM:+AES-128-GCM:-MAC-ALL:+AEAD:"             \
	"%SERVER_PRECEDENCE"

#define TLS_CHECK_SECONDS 1u    /* the watch's periodic look at the files */
#define TLS_MAX_FILE (1u << 20) /* bytes: a PEM file larger than this is refused */
#define TLS_MAX_CHAIN 16        /* certificates in the --tls-cert file */

struct tls_creds; /* one generation of certificate, key and CA; reference-counted */

/* Why a handshake failed, the metrics labels. */
enum tls_failure {
	TLS_FAIL_CLIENT_CERTIFICATE, /* none sent, or not signed by --tls-client-ca */
	TLS_FAIL_HANDSHAKE,          /* anything else: no common suite, not TLS, cut off */
	TLS_FAIL_COUNT
};

struct tls {
	const char *priority; /* NULL: not initialized (or cleaned up) */
	const struct log *log;
	/* the TLS files, followed by the reload: files[0] the certificate,
	 * [1] the key, [2] the client CA when num_files is 3 (each with its
	 * flag, for the errors) */
	struct reload_source src;

	pthread_mutex_t lock;
	struct tls_creds *current; /* never NULL after tls_init */

	atomic_int_fast64_t expiry; /* the served certificate's notAfter, unix seconds */
	atomic_uint_fast64_t failures[TLS_FAIL_COUNT];
	atomic_uint_fast64_t handshakes; /* completed */
};

/*
 * Checks the priority string, then adds the files to `reload` as a source
 * and loads them (see above). `ca_path` may be NULL; `priority` NULL takes
 * TLS_DEFAULT_PRIORITY. Returns 0, or -1 with the reason in err (a
 * start-up error: nothing to keep serving).
 */
int tls_init(struct tls *t, struct reload *reload, const char *cert_path, const char *key_path,
	     const char *ca_path, const char *priority, const struct log *log, char *err,
	     size_t err_cap);
/* Frees the credentials. Every connection must have ended, and the
 * reload's watch stopped (reload_cleanup), first. Safe on a zeroed struct. */
void tls_cleanup(struct tls *t);

/*
 * One connection's hold on a generation of credentials. The socket
 * context libmicrohttpd keeps for a TLS connection must begin with this
 * struct: tls_retrieve and the handshake hooks find it from the GnuTLS
 * session through libmicrohttpd's connection.
 */
struct tls_conn {
	struct tls *tls; /* NULL: a plain HTTP connection */
	struct tls_creds *creds;
	/* libmicrohttpd's session: valid from tls_conn_start until MHD reports
	 * the close (it frees the session just before); NULL then */
	gnutls_session_t session;
	bool hello_seen; /* the client's hello asked for our certificate */
	bool handshake_done;
	bool client_rejected; /* the client's certificate did not verify */
	const char *reject_reason; /* why, for the log (a static string) */
};

/* A new connection: takes a reference on the current credentials and
 * arms the session (client certificate required with a client CA).
 * `session` is MHD_CONNECTION_INFO_GNUTLS_SESSION's. */
void tls_conn_start(struct tls_conn *c, struct tls *t, gnutls_session_t session);
/* The connection on `fd` closed (its GnuTLS session is gone): counts a
 * handshake that never finished, logs a refused client certificate with
 * the client's address and why, and lets the credentials go. `received`
 * says whether the client sent anything at all (a connect and close is
 * no failed handshake). A finished handshake was counted when it
 * finished. */
void tls_conn_end(struct tls_conn *c, int fd, bool received);

/* Writes one whole answer through the connection's TLS session, for the
 * few answers splitkd writes itself (response.c): best effort, without
 * blocking. Returns 0 when all of it went, -1 otherwise (no session any
 * more, the socket full, an error): the caller then closes. Only on the
 * thread that serves the connection, between libmicrohttpd's reads. */
int tls_send(struct tls_conn *c, const void *buf, size_t len);

/* libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK: the connection's
 * certificate chain and key. */
int tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		 const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		 unsigned int *pcert_length, gnutls_privkey_t *privkey);

/* The figures of the splitkd_tls_* series, for metrics.c to write. */
void tls_figures(struct tls *t, struct metrics_tls *out);

#endif /* SPLITKD_TLS_H */
