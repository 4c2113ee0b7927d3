#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Holds a directory to its layering from the source:
#  - only the files named in ALLOWED include microhttpd.h (none of api/ or
#    policy/: the api answers requests without knowing the server; in
#    server/ the list that server/http.h gives);
#  - no file includes a header of a layer above it (UPPER: policy/ sees
#    neither api/ nor server/, api/ never server/), so no arrow points up;
#  - the modules of the directory include one another without a circle. A
#    module is its .c and .h together (decide.c and decide.h are one), so
#    decide.c -> explain.h -> decide.h is the circle it is, even though no
#    file includes itself. tsort(1) finds the loop and names it.
# usage: scripts/check-includes.sh DIR [ALLOWED [UPPER...]]
#   DIR      the directory (default api)
#   ALLOWED  the file names, space-separated, that may include microhttpd.h ("" none)
#   UPPER    the directories above DIR
set -eu
dir=${1:-api}
allowed=${2:-}
[ $# -gt 2 ] && shift 2 || set --
status=0
echo "== includes of $dir/"
mhd=$(grep -l '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]microhttpd\.h[>"]' \
	"$dir"/*.c "$dir"/*.h 2>/dev/null || true)
bad=""
for f in $mhd; do
	case " $allowed " in
	*" $(basename "$f") "*) ;;
	*) bad="$bad $f" ;;
	esac
done
if [ -n "$bad" ]; then
	echo "includes: FAILED: includes microhttpd.h, and is not among \"$allowed\":$bad" >&2
	status=1
fi
# an include of a header that only a layer above has
up_bad=$(for up in "$@"; do
	for f in "$dir"/*.c "$dir"/*.h; do
		# "x.h" as the compiler finds it, and "../server/x.h" by its path,
		# which no -I flag stops
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\.h\)".*/\1/p' "$f" |
		while read -r h; do
			b=$(basename "$h")
			if [ "$h" != "$b" ] && [ -f "$up/$b" ]; then
				echo "  $f includes $h"
			elif [ "$h" = "$b" ] && [ -f "$up/$h" ] && [ ! -f "$dir/$h" ]; then
				echo "  $f includes $up/$h"
			fi
		done
	done
done)
if [ -n "$up_bad" ]; then
	echo "includes: FAILED: an arrow up from $dir/:" >&2
	echo "$up_bad" >&2
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
above=${*:+, nothing of $*}
echo "modules: $(echo "$edges" | tr ' ' '\n' | sort -u | wc -l), include edges: $(echo "$edges" | awk '$1 != $2' | sort -u | wc -l), no circle, microhttpd.h only in: ${allowed:-none}$above"
echo "includes: ok"
