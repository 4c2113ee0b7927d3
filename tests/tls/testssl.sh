#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Debian's testssl.sh against splitkd over HTTPS with the default
# --tls-priority: protocols (-p), every cipher one by one (-e), forward
# secrecy (-f), the known vulnerabilities (-U) and the server's defaults
# and certificate (-S), trusting the test CA (--add-ca). About 70 s on
# loopback. tests/tls/judge_testssl.py then fails the run on any finding
# rated HIGH or CRITICAL or VULNERABLE, on any protocol but TLS 1.2 and 1.3,
# and on any suite without forward secrecy, and prints the summary.
# usage: tests/tls/testssl.sh path/to/splitkd
set -eu

bin=$1
work=$(mktemp -d /tmp/splitkd-testssl-XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

sh tests/tls/make-certs.sh "$work"
"$bin" --listen 127.0.0.1:0 --tls-cert "$work/server.pem" --tls-key "$work/server-key.pem" \
	--access-log off 2>"$work/log" &
pid=$!
port=""
for _ in $(seq 100); do
	port=$(sed -n 's|^listening on https://127.0.0.1:\([0-9]*\)$|\1|p' "$work/log")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { cat "$work/log" >&2; echo "testssl: splitkd did not start" >&2; exit 1; }

version=$(testssl --version 2>/dev/null | sed -n 's/^ *testssl *\([0-9][0-9.]*\).*/\1/p' | head -1)
echo "== testssl.sh ${version:-(version unknown)} against splitkd (localhost:$port)"
# bounded: a hung scan fails the run instead of holding CI
timeout 300 testssl --quiet --color 0 --warnings off --ip one --add-ca "$work/ca.pem" \
	--jsonfile "$work/testssl.json" -p -e -f -U -S "localhost:$port" > "$work/testssl.txt" 2>&1 ||
	{ tail -40 "$work/testssl.txt" >&2; echo "testssl: the scan failed" >&2; exit 1; }
/usr/bin/python3 tests/tls/judge_testssl.py "$work/testssl.json"
# and the judge itself: each kind of bad finding, planted in a copy, fails it
/usr/bin/python3 tests/tls/judge_testssl.py --self-test "$work/testssl.json"
