#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# `make deb`: the Debian packages with Debian's own tools (debian/,
# debhelper, `dpkg-buildpackage -us -uc -b`), then lintian on them.
# dpkg-buildpackage writes its packages into the parent of the tree it
# builds and its own files into debian/, so it builds a copy of the
# working tree's files (tracked and new, nothing git ignores) under
# OUT/src: every artefact stays under OUT (default build/deb).
#
# usage: scripts/build-deb.sh [--version V] [--no-lintian] [OUT]
#   --version V    a changelog entry for V above the committed one (the
#                  container test's upgrade builds a later version so)
#   --no-lintian   skip lintian (the same tree, already judged, rebuilt)
# Prints the packages made and lintian's verdict; fails on any lintian
# error or warning (an override needs its reason beside it, in
# debian/*.lintian-overrides). Needs the `deb` profile of scripts/deps.sh.
set -eu
cd "$(dirname "$0")/.."

version=""
lintian=yes
while [ $# -gt 0 ]; do
	case $1 in
	--version)
		version=$2
		shift 2
		;;
	--no-lintian)
		lintian=no
		shift
		;;
	*) break ;;
	esac
done
out=${1:-build/deb}

upstream=$(sed -n 's/^VERSION *:= *//p' Makefile)
changelog=$(dpkg-parsechangelog -l debian/changelog -S Version)
# A native package: its version is the Makefile's, so `splitkd --version`
# and the package say the same thing.
[ "$changelog" = "$upstream" ] || {
	echo "build-deb: debian/changelog says $changelog, the Makefile $upstream" >&2
	exit 1
}

rm -rf "$out"
mkdir -p "$out/src"
git ls-files -z --cached --others --exclude-standard |
	tar --null --no-recursion --files-from=- -cf - | tar -xf - -C "$out/src"

if [ -n "$version" ]; then
	{
		echo "splitkd ($version) unstable; urgency=medium"
		echo
		echo "  * Rebuilt as $version."
		echo
		echo " -- splitkd maintainers <maintainers@users.noreply.a-seed-6971b634.example>  $(date -R)"
		echo
		cat debian/changelog
	} >"$out/src/debian/changelog"
fi

echo "== deb: dpkg-buildpackage -us -uc -b in $out/src"
(cd "$out/src" && dpkg-buildpackage -us -uc -b -J"$(nproc)") >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
	exit 1
}
ls "$out"/*.deb | sed 's|.*/|  |'
[ "$lintian" = yes ] || exit 0

echo "== deb: lintian --info (no E: or W: line allowed)"
changes=$(ls "$out"/*.changes)
rc=0
lintian --info --display-info --fail-on error,warning "$changes" >"$out/lintian.txt" 2>&1 || rc=$?
# the tags; their explanations (N: lines) are in the file
grep -v '^N:' "$out/lintian.txt" | grep -v '^running with root privileges' || true
if [ "$rc" -ne 0 ] || grep -Eq '^[EW]: ' "$out/lintian.txt"; then
	echo "build-deb: FAILED: lintian exited $rc (errors or warnings above)" >&2
	exit 1
fi
echo "lintian: no error, no warning ($(grep -c '^[IPX]: ' "$out/lintian.txt" || true) info lines; explanations in $out/lintian.txt)"
