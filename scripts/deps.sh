#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Installs the Debian packages splitkd needs, only when pkg-config says one is
# missing. `make test`, `make run` and `make bench` call it first, so a fresh
# Debian 12 machine needs nothing by hand.
#
# usage: scripts/deps.sh PROFILE (one of those below)
#   build  libmicrohttpd, cJSON, GnuTLS (what the daemon links against)
#   test   build + Criterion, libcurl, and the Prometheus text parser
#   bench  build + nginx-light and wrk
#   fuzz   build + clang and its libFuzzer runtime
#   conformance  build + Node.js and npm (Redocly CLI 2.77 wants Node 20.19+
#          or 22.12+: checked, not guessed) and python3 for the size sweep
#   prometheus  build + Prometheus and promtool (2.42), Debian's python3, PyYAML
#   image  podman (runc, CNI, catatonit for kube play's pause image), buildah,
#          mmdebstrap for a local base image, podman-compose, curl, Node.js
#   ofrep  build + Node.js (>= 20) and npm, for the OpenFeature SDK test
#   blocks Node.js (>= 20) and npm, promtool and Go (golang-go: its parser
#          checks the README's Go block), for make readme-blocks
#   overload  build + slowhttptest and wrk (the attack tools)
#   browser  build + headless Chromium, its driver and Selenium (the page's test)
#   tls    build + certtool (the tests' CA and certificates), testssl.sh, curl
#   deb    build + build-essential, dpkg-dev, debhelper and lintian (`make deb`)
#   unit   systemd-analyze (the systemd package) and man-db for the unit's
#          checks, and strace for the system call check
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -eu

profile=${1:-build}
missing=""

need_pc() {   # need_pc PKG-CONFIG-MODULE DEBIAN-PACKAGE
	# without pkg-config (a fresh machine) nothing can be there yet: ask
	# for the package too, so one pass installs everything
	if command -v pkg-config >/dev/null 2>&1; then
		pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
	else
		missing="$missing $2"
	fi
}
need_cmd() {  # need_cmd COMMAND DEBIAN-PACKAGE
	command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}
need_file() { # need_file PATH DEBIAN-PACKAGE
	[ -e "$1" ] || missing="$missing $2"
}

need_cmd cc gcc
need_cmd make make
need_cmd pkg-config pkg-config
need_pc libmicrohttpd libmicrohttpd-dev
need_pc libcjson libcjson-dev
need_pc gnutls libgnutls28-dev

case "$profile" in
build) ;;
test)
	need_pc criterion libcriterion-dev
	# the seed's own Rust (make crosscheck) and the engines' second
	# implementations (make engines-check)
	need_cmd rustc rustc
	need_pc libcurl libcurl4-openssl-dev
	need_cmd certtool gnutls-bin # the TLS tests make their own CA and certificates
	need_cmd python3 python3
	need_file /usr/lib/python3/dist-packages/prometheus_client python3-prometheus-client
	# make readme-test: the README's own commands (curl), in a network
	# namespace of its own whose loopback it brings up (unshare, ip)
	need_cmd curl curl
	need_cmd unshare util-linux
	need_cmd ip iproute2
	;;
valgrind)
	need_cmd valgrind valgrind
	;;
fleet)
	need_cmd haproxy haproxy
	;;
prometheus)
	# one Debian package holds both; the test runs its own on a free port
	need_cmd prometheus prometheus
	need_cmd promtool prometheus
	need_file /usr/bin/python3 python3
	need_file /usr/lib/python3/dist-packages/yaml python3-yaml
	;;
fuzz)
	need_cmd clang clang
	need_file /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a libclang-rt-14-dev
	;;
conformance)
	need_cmd node nodejs
	need_cmd npm npm
	need_cmd python3 python3
	;;
image)
	need_cmd podman podman
	need_cmd buildah buildah
	need_cmd runc runc
	need_cmd catatonit catatonit
	need_file /usr/lib/cni/bridge containernetworking-plugins
	need_cmd mmdebstrap mmdebstrap
	need_cmd podman-compose podman-compose
	need_cmd curl curl
	;;
recipe)
	# make recipe-check: the page's own column code run on the copy's answer
	need_cmd node nodejs
	need_cmd python3 python3
	;;
ofrep)
	need_cmd node nodejs
	need_cmd npm npm
	;;
blocks)
	# make readme-blocks: the README's JavaScript with the pinned SDKs, its
	# prometheus.yml through promtool, its Go block through Go's own parser
	# (the OpenFeature Go SDK is no Debian package: the block is not built)
	need_cmd node nodejs
	need_cmd npm npm
	need_cmd promtool prometheus
	need_cmd go golang-go
	;;
overload)
	need_cmd slowhttptest slowhttptest
	need_cmd wrk wrk
	;;
browser)
	need_file /usr/bin/python3 python3
	need_file /usr/bin/chromium chromium
	need_file /usr/bin/chromedriver chromium-driver
	need_file /usr/lib/python3/dist-packages/selenium python3-selenium
	# the screenshots' font; fontconfig usually brings it, this makes it sure
	need_file /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf fonts-dejavu-core
	;;
tls)
	need_cmd certtool gnutls-bin
	need_cmd testssl testssl.sh
	need_cmd curl curl
	;;
deb)
	# dpkg-buildpackage requires build-essential besides debian/control's
	# Build-Depends (those are the build profile's, checked above)
	need_file /usr/share/build-essential/essential-packages-list build-essential
	need_cmd dpkg-buildpackage dpkg-dev
	need_cmd dh debhelper
	need_cmd lintian lintian
	;;
unit)
	need_cmd systemd-analyze systemd
	need_cmd man man-db # verify looks up the man page Documentation= names
	need_cmd strace strace
	;;
bench)
	need_cmd nginx nginx-light
	need_cmd wrk wrk
	need_cmd curl curl
	;;
*)
	echo "usage: $0 build|test|bench|fuzz|valgrind|fleet|conformance|prometheus|image|ofrep|blocks|overload|browser|tls|deb|unit" >&2
	exit 2
	;;
esac

# The pinned npm test tools run on the machine's Node.js: say so plainly
# when it is too old (Debian 12's own nodejs is 18), rather than fail inside
# them. Redocly CLI 2.77 wants 20.19+ or 22.12+, the OpenFeature SDKs 20.
check_node() {
	case "$profile" in
	conformance | ofrep | blocks | image) ;;
	*) return 0 ;;
	esac
	node -e 'const [a, b] = process.versions.node.split(".").map(Number);
		process.exit(a >= 22 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null && return 0
	echo "deps.sh: Node.js $(node --version 2>/dev/null || echo none) is too old for the" \
		"pinned npm test tools: they need 20.19+ or 22.12+" >&2
	exit 1
}

if [ -z "$missing" ]; then
	check_node
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "splitkd needs these Debian packages:$missing" >&2
	echo "run as root: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $missing >/dev/null
check_node
