#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Makes a throw-away test PKI in DIR with GnuTLS's certtool (gnutls-bin,
# scripts/deps.sh tls): nothing here is a secret, every run makes new keys.
#   ca.pem                the test CA (trusted by the tests' clients)
#   server.pem, server-key.pem    localhost, 127.0.0.1, ::1; signed by ca
#   server2.pem, server2-key.pem  the same names, another key: a rotation
#   client.pem, client-key.pem    a TLS client certificate signed by ca
#   other-ca.pem, other-client.pem, other-client-key.pem  another CA's client
#   expired.pem, expired-key.pem  localhost, expired in 2021
#   soon.pem, soon-key.pem        localhost, expires in 7 days
# usage: tests/tls/make-certs.sh DIR
set -eu

dir=${1:?usage: make-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"

key() { certtool --generate-privkey --key-type ecdsa --curve secp256r1 --no-text --outfile "$1" 2>/dev/null; }

ca() { # ca NAME CN
	key "$1-key.pem"
	printf 'cn = "%s"\nca\ncert_signing_key\ncrl_signing_key\nexpiration_days = 3650\n' "$2" > "$1.tmpl"
	certtool --generate-self-signed --load-privkey "$1-key.pem" --template "$1.tmpl" \
		--outfile "$1.pem" --no-text 2>/dev/null
}

leaf() { # leaf NAME CA TEMPLATE-LINES
	key "$1-key.pem"
	printf '%s\n' "$3" > "$1.tmpl"
	certtool --generate-certificate --load-privkey "$1-key.pem" --load-ca-certificate "$2.pem" \
		--load-ca-privkey "$2-key.pem" --template "$1.tmpl" --outfile "$1.pem" --no-text 2>/dev/null
}

# The CRL address names nothing: a certificate from a real CA carries one
# (or an OCSP URI), and testssl.sh rates a server certificate without
# either as a finding about the certificate, not about splitkd.
server='cn = "localhost"
crl_dist_points = "http://127.0.0.1/splitkd-test.crl"
dns_name = "localhost"
ip_address = "127.0.0.1"
ip_address = "::1"
tls_www_server
signing_key
encryption_key'

ca ca "splitkd test CA"
ca other-ca "another test CA"
leaf server ca "$server
expiration_days = 365"
leaf server2 ca "$server
expiration_days = 366"
leaf soon ca "$server
expiration_days = 7"
leaf expired ca "$server
activation_date = \"2020-01-01 00:00:00 UTC\"
expiration_date = \"2021-01-01 00:00:00 UTC\""
leaf client ca 'cn = "splitkd test client"
tls_www_client
signing_key
expiration_days = 30'
leaf other-client other-ca 'cn = "another client"
tls_www_client
signing_key
expiration_days = 30'
rm -f ./*.tmpl
