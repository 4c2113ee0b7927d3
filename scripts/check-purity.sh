#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Proves the policy core's promise from its object file: it calls nothing
# outside itself (no malloc, no I/O, no locale: `nm -u` is empty) and owns
# no writable data (no .data/.bss/common symbols: only code and .rodata).
# usage: scripts/check-purity.sh build/policy/splitk.o
set -eu
obj=$1
undefined=$(nm -u "$obj")
writable=$(nm "$obj" | awk '$2 ~ /^[BbDdCGgSsVv]$/')
echo "== purity of $obj"
echo "undefined symbols: ${undefined:-none}"
echo "writable data symbols: ${writable:-none}"
for s in malloc calloc realloc free printf fprintf puts fopen write read setlocale getenv; do
	if echo "$undefined" | grep -qw "$s"; then
		echo "purity: FAILED: calls $s" >&2
	fi
done
[ -z "$undefined" ] && [ -z "$writable" ] || { echo "purity: FAILED" >&2; exit 1; }
echo "purity: ok"
