#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Keeps what a user reads in step with what the binary does. README.md is
# a front door of at most 400 lines with `make run` and `make test` in its
# first 40. The man page
# is the one reference for the flags: the flags its OPTIONS name are
# exactly those of `splitkd --help`, and no page of README.md or docs/
# repeats them as a table (the README links to the man page instead).
# Every route in api/openapi.json is in the man page and in docs/api.md,
# whose route and parameter tables are generated from api/openapi.json and
# must be as scripts/gen-api-doc.py writes them; every relative link of the
# pages resolves (scripts/check-links.py).
# usage: scripts/check-docs.sh path/to/splitkd
set -eu
bin=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u > "$tmp/help"
awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on' server/splitkd.8 |
	grep -o '\\-\\-[a-z][a-z\\-]*' | sed 's/\\-/-/g' | sort -u > "$tmp/man"
for f in $(comm -23 "$tmp/help" "$tmp/man"); do
	echo "docs: $f is in splitkd --help, not in server/splitkd.8's OPTIONS" >&2; fail=1
done
for f in $(comm -13 "$tmp/help" "$tmp/man"); do
	echo "docs: server/splitkd.8's OPTIONS name $f, which splitkd --help does not know" >&2; fail=1
done
if grep -n '^| *`--[a-z]' README.md docs/*.md >&2; then
	echo "docs: a flag table above: the flags' reference is server/splitkd.8 alone; link to it" >&2; fail=1
fi
# The README is the front door (issue 48): short, the set-up first.
lines=$(wc -l < README.md)
[ "$lines" -le 400 ] || { echo "docs: README.md is $lines lines, over 400: move reference to docs/" >&2; fail=1; }
for c in 'make run' 'make test'; do
	head -n 40 README.md | grep -q "^$c " || { echo "docs: README.md's first 40 lines do not start a line with $c" >&2; fail=1; }
done
grep -q '(server/splitkd.8)' README.md || { echo "docs: README.md does not link to server/splitkd.8" >&2; fail=1; }
routes=$(grep -o '"/[a-z0-9/{}._-]*": {' api/openapi.json | cut -d'"' -f2 | sed 's/{[a-z]*}//')
for r in $routes; do
	grep -q -- "$r" docs/api.md || { echo "docs: route $r is not in docs/api.md" >&2; fail=1; }
	grep -q -- "$(printf '%s' "$r" | sed 's/-/\\\\-/g')" server/splitkd.8 || { echo "docs: route $r is not in server/splitkd.8" >&2; fail=1; }
done
echo "== docs: README.md $lines lines; $(wc -l < "$tmp/help") flags (server/splitkd.8 against splitkd --help) and $(echo "$routes" | wc -l) routes checked"
if [ -f scripts/gen-api-doc.py ]; then
	python3 scripts/gen-api-doc.py --check || fail=1
fi
python3 scripts/check-links.py || fail=1
[ "$fail" -eq 0 ] && echo "docs: ok"
exit "$fail"
