#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# `make unit-check` (part of `make test`): docker/splitkd.service and
# docker/splitkd.socket as `make install` writes them (ExecStart at the
# staged binary, so systemd can see it is there) must
#  - pass `systemd-analyze verify` with no output at all, each alone and
#    the two together (the socket triggers the service; the man page they
#    name in Documentation= is looked up in the staged tree),
#  - hold what socket activation and the notify protocol need: the
#    socket's one ListenStream= is --listen's default, the service is
#    Type=notify with NotifyAccess=main and a WatchdogSec=, and allows
#    AF_UNIX (the notify socket), and
#  - rate 1.5 at most in `systemd-analyze security --offline=true` (the
#    service: a socket unit runs nothing and has no rating).
# The Debian package installs the same files (ExecStart /usr/bin/splitkd);
# `make deb-test` checks them again on the installed units.
# usage: tests/systemd/check-unit.sh STAGE    (a `make install PREFIX=STAGE`)
set -eu
stage=$1
unit=$stage/lib/systemd/system/splitkd.service
socket=$stage/lib/systemd/system/splitkd.socket
max=1.5
fail() {
	echo "unit-check: FAILED: $*" >&2
	exit 1
}
[ -s "$unit" ] || fail "no unit at $unit"
[ -s "$socket" ] || fail "no socket unit at $socket"
grep -q "^ExecStart=$stage/bin/splitkd " "$unit" || fail "make install did not point ExecStart at $stage/bin"

echo "== unit: systemd-analyze verify (must print nothing): the service, the socket, both"
for units in "$unit" "$socket" "$socket $unit"; do
	# shellcheck disable=SC2086 # two paths in the last
	out=$(MANPATH=$stage/share/man systemd-analyze verify $units 2>&1) ||
		fail "verify $units exited non-zero: $out"
	[ -z "$out" ] || fail "systemd-analyze verify $units printed: $out"
done
echo "verify: silent (splitkd.service, splitkd.socket, and the two together)"

echo "== unit: socket activation and the notify protocol"
listen=$(grep '^ListenStream=' "$socket")
default=$("$stage/bin/splitkd" --help | sed -n 's/.*(default \([0-9.]*:[0-9]*\);.*/\1/p' | head -1)
[ -n "$default" ] || fail "cannot read --listen's default in splitkd --help"
[ "$listen" = "ListenStream=$default" ] ||
	fail "the socket has $listen, --listen's default is $default"
for line in Type=notify NotifyAccess=main 'WatchdogSec=[1-9]' \
	'RestrictAddressFamilies=.*AF_UNIX'; do
	grep -q "^$line" "$unit" || fail "the service lacks $line"
done
echo "socket: $listen, as --listen's default;" \
	"service: Type=notify, NotifyAccess=main, $(grep '^WatchdogSec=' "$unit"), AF_UNIX allowed"

echo "== unit: systemd-analyze security --offline=true (at most $max)"
# --threshold is the same scale times ten; the line is checked as well
sec=$(systemd-analyze security --offline=true --threshold=15 "$unit" 2>&1) ||
	fail "exposure over $max: $(echo "$sec" | tail -1)"
line=$(echo "$sec" | grep 'Overall exposure level') || fail "no exposure line in: $sec"
echo "$line"
score=$(echo "$line" | sed -n 's/.*: \([0-9][0-9]*\.[0-9]\).*/\1/p')
[ -n "$score" ] || fail "cannot read the score in: $line"
awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "exposure $score, over $max"
echo "unit: ok (exposure $score <= $max)"
