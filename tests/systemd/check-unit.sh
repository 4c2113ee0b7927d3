#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# `make unit-check` (part of `make test`): docker/splitkd.service as
# `make install` writes it (ExecStart at the staged binary, so systemd can
# see it is there) must
#  - pass `systemd-analyze verify` with no output at all (the man page it
#    names in Documentation= is looked up in the staged tree), and
#  - rate 1.5 at most in `systemd-analyze security --offline=true`.
# The Debian package installs the same file (ExecStart /usr/bin/splitkd);
# `make deb-test` checks both again on the installed unit.
# usage: tests/systemd/check-unit.sh STAGE    (a `make install PREFIX=STAGE`)
set -eu
stage=$1
unit=$stage/lib/systemd/system/splitkd.service
max=1.5
fail() {
	echo "unit-check: FAILED: $*" >&2
	exit 1
}
[ -s "$unit" ] || fail "no unit at $unit"
grep -q "^ExecStart=$stage/bin/splitkd " "$unit" || fail "make install did not point ExecStart at $stage/bin"

echo "== unit: systemd-analyze verify (must print nothing)"
out=$(MANPATH=$stage/share/man systemd-analyze verify "$unit" 2>&1) || fail "verify exited non-zero: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
echo "verify: silent"

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
