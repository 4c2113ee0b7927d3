#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Keeps what a user reads in step with what the binary does: every flag in
# `splitkd --help` is in the man page and the README, and every route in
# api/openapi.json is in both too.
# usage: scripts/check-docs.sh path/to/splitkd
set -eu
bin=$1
fail=0
flags=$("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
for f in $flags; do
	man=$(printf '%s' "$f" | sed 's/-/\\\\-/g')
	grep -q -- "$man" server/splitkd.8 || { echo "docs: $f is not in server/splitkd.8" >&2; fail=1; }
	grep -q -- "$f" README.md || { echo "docs: $f is not in README.md" >&2; fail=1; }
done
routes=$(grep -o '"/[a-z0-9/{}._-]*": {' api/openapi.json | cut -d'"' -f2 | sed 's/{[a-z]*}//')
for r in $routes; do
	grep -q -- "$r" README.md || { echo "docs: route $r is not in README.md" >&2; fail=1; }
	grep -q -- "$(printf '%s' "$r" | sed 's/-/\\\\-/g')" server/splitkd.8 || { echo "docs: route $r is not in server/splitkd.8" >&2; fail=1; }
done
echo "== docs: $(echo "$flags" | wc -l) flags and $(echo "$routes" | wc -l) routes checked"
[ "$fail" -eq 0 ] && echo "docs: ok"
exit "$fail"
