#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Holds api/ to its layering from the source: no api/ file includes
# microhttpd.h (the api answers requests without knowing the server), and
# the modules of api/ include one another without a circle. A module is
# its .c and .h together (decide.c and decide.h are one), so decide.c ->
# explain.h -> decide.h is the circle it is, even though no file includes
# itself. tsort(1) finds the loop and names it.
# usage: scripts/check-includes.sh [DIR]   (default api)
set -eu
dir=${1:-api}
status=0
echo "== includes of $dir/"
mhd=$(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]microhttpd\.h[>"]' \
	"$dir"/*.c "$dir"/*.h 2>/dev/null || true)
if [ -n "$mhd" ]; then
	echo "includes: FAILED: includes microhttpd.h:" $mhd >&2
	status=1
fi
# one "from to" pair per include of another module of the directory
edges=$(for f in "$dir"/*.c "$dir"/*.h; do
	from=$(basename "$f"); from=${from%.*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)\.h".*/\1/p' "$f" |
	while read -r to; do
		[ -f "$dir/$to.h" ] || continue
		if [ "$to" = "$from" ]; then
			echo "$from $from" # the module alone: a node, not a loop
		else
			echo "$from $to"
		fi
	done
done)
loop=$(echo "$edges" | tsort 2>&1 >/dev/null || true)
if [ -n "$loop" ]; then
	echo "includes: FAILED: a circle among the modules of $dir/:" >&2
	echo "$loop" | sed 's/^tsort: //' >&2
	status=1
fi
[ $status -eq 0 ] || exit 1
echo "modules: $(echo "$edges" | tr ' ' '\n' | sort -u | wc -l), include edges: $(echo "$edges" | awk '$1 != $2' | sort -u | wc -l), no circle, no microhttpd.h"
echo "includes: ok"
