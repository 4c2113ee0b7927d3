#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Holds the product C (policy/, api/, server/: every *.c and *.h) to 100
# columns, counted in characters with a tab as one: the way issue 43
# counted them, so a line is judged the same by any editor's tab width.
# Names each longer line as FILE:LINE with its length, and fails. Long
# strings are split into adjacent literals, long calls and conditions
# broken at their arguments and operators, comments re-flowed; the
# upstream notices in policy/ are wrapped the same, their words kept.
# usage: scripts/check-columns.sh [DIR...]   (default: policy api server)
set -eu
max=100
[ $# -gt 0 ] || set -- policy api server
# characters, not bytes: an em dash is one column (a UTF-8 locale's grep)
LC_ALL=C.UTF-8
export LC_ALL
echo "== columns of $*: at most $max"
files=$(for d in "$@"; do ls "$d"/*.c "$d"/*.h 2>/dev/null; done)
[ -n "$files" ] || { echo "columns: FAILED: no C in $*" >&2; exit 1; }
# FILE:LINE:TEXT for each line of more than $max characters
long=$(grep -nE "^.{$((max + 1))}" $files || true)
if [ -n "$long" ]; then
	# printf, not echo: a line's "\n" is text here
	printf '%s\n' "$long" | while IFS= read -r hit; do
		where=${hit%%:*}
		rest=${hit#*:}
		where=$where:${rest%%:*}
		text=${rest#*:}
		echo "  $where: $(printf '%s' "$text" | wc -m) columns"
	done >&2
	echo "columns: FAILED: $(printf '%s\n' "$long" | wc -l) lines over $max columns" >&2
	exit 1
fi
echo "columns: ok ($(echo "$files" | wc -l) files)"
