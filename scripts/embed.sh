#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
# Writes a C file that holds FILE's bytes as `const char NAME[]` (with a NUL
# after them, not counted) and `const size_t NAME_len`. Each byte is a
# character constant ('\xe2'), which fits a char signed or not: a bare 0xe2
# would overflow a signed char (the page's UTF-8 has such bytes).
# usage: scripts/embed.sh NAME FILE > out.c
set -eu
name=$1
file=$2
echo "/* generated from $file by scripts/embed.sh; do not edit */"
echo "#include <stddef.h>"
echo "const char $name[] = {"
od -An -v -tx1 "$file" | sed -e "s/ *\\([0-9a-f][0-9a-f]\\)/'\\\\x\\1',/g" -e 's/^/\t/'
echo "	0x00};"
echo "const size_t ${name}_len = sizeof($name) - 1;"
