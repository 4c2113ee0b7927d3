# SPDX-License-Identifier: AGPL-3.0-only
# Sourced by image-test.sh and deb-test.sh once TEST_NAME is set: the
# start time, a scratch directory, podman's settings in it (build-image.sh
# writes them), and the lines both print.
T0=$(date +%s%N)
tmp=$(mktemp -d "/tmp/splitkd-$TEST_NAME.XXXXXX")
passed=0
export CONTAINERS_CONF=$tmp/containers.conf
bash docker/build-image.sh --podman-conf "$CONTAINERS_CONF"

say() { echo "$TEST_NAME: $*"; }
ok() {
	passed=$((passed + 1))
	echo "  ok: $*"
}
# seconds since a date +%s%N stamp, to the millisecond
secs() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))" | sed 's/\(...\)$/.\1/; s/^\./0./'; }
