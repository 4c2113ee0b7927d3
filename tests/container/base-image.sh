#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# The Debian 12 slim base the container tests build on (image-test.sh,
# deb-test.sh): used when podman has it, else made here with mmdebstrap,
# as the official slim image is made (no registry is reachable): minbase,
# docs/man/locales left out, apt's lists and cache cleaned (mmdebstrap's
# default), merged /usr without the usrmerge package (which pulls in perl).
# Unlike the official image it has no apt docker-clean hook, so a
# Dockerfile that leaves apt's cache behind shows in image-test's size check.
# usage: tests/container/base-image.sh IMAGE   (prints what it did)
# Needs root, podman and mmdebstrap (scripts/deps.sh image).
set -euo pipefail
base=$1
if podman image exists "$base" 2>/dev/null; then
	echo "base $base: present"
	exit 0
fi
echo "base $base: absent, making it with mmdebstrap"
tmp=$(mktemp -d /tmp/splitkd-base.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
t=$(date +%s)
mmdebstrap --quiet --variant=minbase --format=tar \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/groff/*' --dpkgopt='path-exclude=/usr/share/linda/*' \
	--dpkgopt='path-exclude=/usr/share/lintian/overrides/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	bookworm "$tmp/base.tar" \
	"deb http://deb.debian.org/debian bookworm main" \
	"deb http://deb.debian.org/debian bookworm-updates main" \
	"deb http://deb.debian.org/debian-security bookworm-security main" 2>"$tmp/mmdebstrap.log" || {
	tail -20 "$tmp/mmdebstrap.log" >&2
	echo "base-image: mmdebstrap could not make the base" >&2
	exit 1
}
podman import --quiet --change 'CMD ["bash"]' "$tmp/base.tar" "$base" >/dev/null
echo "base $base made and imported in $(($(date +%s) - t)) s"
