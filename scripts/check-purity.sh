#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Proves the policy core's promise from its object file: it calls nothing
# outside the core (no malloc, no I/O, no locale: every symbol `nm -u`
# lists is defined by one of the core's own objects, which are checked
# the same way) and owns no writable data (no .data/.bss/common symbols:
# only code and .rodata). The core's objects may call one another
# (policy/reserve.c calls the ports); nothing else.
# usage: scripts/check-purity.sh build/policy/splitk.o [core objects...]
set -eu
obj=$1
shift
undefined=$(nm -u "$obj" | awk '{print $2}')
own=""
if [ $# -gt 0 ]; then
	own=$(nm --defined-only "$@" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
fi
outside=""
for s in $undefined; do
	if ! printf '%s\n' "$own" | grep -qx "$s"; then
		outside="$outside $s"
	fi
done
writable=$(nm "$obj" | awk '$2 ~ /^[BbDdCGgSsVv]$/')
echo "== purity of $obj"
echo "undefined symbols outside the core: ${outside:-none}"
echo "writable data symbols: ${writable:-none}"
for s in malloc calloc realloc free printf fprintf puts fopen write read setlocale getenv; do
	if echo "$outside" | grep -qw "$s"; then
		echo "purity: FAILED: calls $s" >&2
	fi
done
[ -z "$outside" ] && [ -z "$writable" ] || { echo "purity: FAILED" >&2; exit 1; }
echo "purity: ok"
