#!/bin/bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# Builds the splitkd image with docker when a docker engine answers, else
# with podman. `make image` runs it; so does `make image-test`.
#
# usage: docker/build-image.sh [TAG [ENGINE-BUILD-ARGS...]]    (default splitkd:latest)
#        docker/build-image.sh --podman-conf FILE
# ENGINE=docker|podman picks one; GIT_REV names the build (default: git describe).
#
# Under podman the build runs with `--format docker` (the OCI format has no
# HEALTHCHECK) and `--network=host`, and, unless CONTAINERS_CONF names one
# already, with the containers.conf that --podman-conf writes:
#  - runtime runc where it is installed (crun refuses a hybrid cgroup layout);
#  - default_ulimits at the caller's hard limits: podman as root otherwise
#    asks for more than a root without CAP_SYS_RESOURCE (a VM or CI sandbox)
#    may set, and every RUN step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

write_conf() { # write_conf FILE
	nofile=$(ulimit -Hn)
	[ "$nofile" = unlimited ] && nofile=1048576
	nproc=$(ulimit -Hu)
	if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then
		nproc=32768
	fi
	mkdir -p "$(dirname "$1")"
	{
		echo "# written by docker/build-image.sh"
		echo "[containers]"
		echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
		echo "[engine]"
		if command -v runc >/dev/null 2>&1; then
			echo "runtime = \"runc\""
		fi
	} > "$1"
}

if [ "${1:-}" = --podman-conf ]; then
	write_conf "$2"
	exit 0
fi

tag=${1:-splitkd:latest}
[ $# -gt 0 ] && shift
engine=${ENGINE:-}
if [ -z "$engine" ]; then
	# a docker client without an engine behind it does not count
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
		engine=docker
	elif command -v podman >/dev/null 2>&1; then
		engine=podman
	else
		echo "build-image: needs docker (with its engine running) or podman" >&2
		exit 1
	fi
fi
rev=${GIT_REV:-$(git describe --always --dirty 2>/dev/null || echo unknown)}

echo "== image $tag with $engine (GIT_REV=$rev)"
if [ "$engine" = podman ]; then
	if [ -z "${CONTAINERS_CONF:-}" ]; then
		CONTAINERS_CONF=$PWD/build/container/containers.conf
		write_conf "$CONTAINERS_CONF"
		export CONTAINERS_CONF
	fi
	exec podman build --format docker --network=host -f docker/Dockerfile \
		--build-arg GIT_REV="$rev" -t "$tag" "$@" .
fi
exec docker build -f docker/Dockerfile --build-arg GIT_REV="$rev" -t "$tag" "$@" .
