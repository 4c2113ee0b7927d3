#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# Installs the Debian packages splitkd needs, only when pkg-config says one is
# missing. `make test`, `make run` and `make bench` call it first, so a fresh
# Debian 12 machine needs nothing by hand.
#
# usage: scripts/deps.sh build|test|bench|fuzz|valgrind|fleet|browser
#   build    libmicrohttpd, cJSON (what the daemon links against)
#   test     build + Criterion, libcurl, and the Prometheus text parser
#   bench    build + nginx-light and wrk
#   fuzz     build + clang and its libFuzzer runtime
#   browser  build + headless Chromium, its driver and Selenium (the page's test)
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -eu

profile=${1:-build}
missing=""

need_pc() {   # need_pc PKG-CONFIG-MODULE DEBIAN-PACKAGE
	pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
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
if command -v pkg-config >/dev/null 2>&1; then
	need_pc libmicrohttpd libmicrohttpd-dev
	need_pc libcjson libcjson-dev
fi

case "$profile" in
build) ;;
test)
	if command -v pkg-config >/dev/null 2>&1; then
		need_pc criterion libcriterion-dev
		need_pc libcurl libcurl4-openssl-dev
	fi
	need_cmd python3 python3
	need_file /usr/lib/python3/dist-packages/prometheus_client python3-prometheus-client
	;;
valgrind)
	need_cmd valgrind valgrind
	;;
fleet)
	need_cmd haproxy haproxy
	;;
fuzz)
	need_cmd clang clang
	need_file /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a libclang-rt-14-dev
	;;
browser)
	need_file /usr/bin/python3 python3
	need_file /usr/bin/chromium chromium
	need_file /usr/bin/chromedriver chromium-driver
	need_file /usr/lib/python3/dist-packages/selenium python3-selenium
	# the screenshots' font; fontconfig usually brings it, this makes it sure
	need_file /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf fonts-dejavu-core
	;;
bench)
	need_cmd nginx nginx-light
	need_cmd wrk wrk
	need_cmd curl curl
	;;
*)
	echo "usage: $0 build|test|bench|fuzz|valgrind|fleet|browser" >&2
	exit 2
	;;
esac

[ -z "$missing" ] && exit 0

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
