#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# `make image-test`: the image, docker/compose.yaml and docker/kubernetes.yaml
# built and run for real with podman, as an operator runs them.
#  1. The Kubernetes objects against the API schema (k8s-validate.js).
#  2. The Debian 12 slim base, made locally with mmdebstrap when absent (no
#     registry is reachable), then the image (docker/build-image.sh).
#  3. The container read-only, every capability dropped, as uid/gid 10001
#     with their names: /healthz, the seed's decision, the HEALTHCHECK at the
#     default and at overridden listen addresses (and failing when splitkd
#     hangs), and `podman stop` draining an in-flight request with no SIGKILL.
#  4. compose.yaml up (healthy) and down (drained) with podman-compose.
#  5. kubernetes.yaml with `podman kube play`: the catalog from the
#     ConfigMap, /readyz, a decision, an edit of the ConfigMap's volume
#     served without a restart, splitkd killed and restarted by the pod's
#     policy answering the pinned revisions as before (--state-dir on the
#     pod's emptyDir), the liveness probe, a drain.
# Every port is published on 127.0.0.1 only. Whatever it starts (containers,
# pods, networks, the ConfigMap's volume) is removed on exit, failed or not.
# Needs root and the `image` profile of scripts/deps.sh (make installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=splitkd:latest
BASE=$(sed -n 's/^ARG BASE=//p' docker/Dockerfile)
TEST_NAME=image-test
. tests/container/lib.sh
run=splitkd-test-$$
containers=()
bg_pids=()
compose_up=""
kube_file=""
kube_made_network=""
fail() {
	echo "image-test: FAILED: $*" >&2
	[ -s "$tmp/podman.log" ] && { echo "--- last podman messages:" >&2; tail -15 "$tmp/podman.log" >&2; }
	exit 1
}
# podman without systemd logs an error for every health check timer it
# cannot make; those, and podman's chatter, go to a log shown on failure.
pm() { podman "$@" 2>>"$tmp/podman.log"; }

cleanup() {
	local rc=$? pid c
	trap - EXIT INT TERM
	for pid in "${bg_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for c in "${containers[@]}"; do
		podman rm -f -t 0 "$c" >/dev/null 2>&1 || true
	done
	podman untag "localhost/$run-build" >/dev/null 2>&1 || true
	if [ -n "$compose_up" ]; then
		podman ps -aq --filter "label=io.podman.compose.project=$run" | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
		podman network rm "${run}_default" >/dev/null 2>&1 || true
	fi
	if [ -n "$kube_file" ]; then
		podman kube down "$kube_file" >/dev/null 2>&1 || true
		podman volume rm splitkd-catalog >/dev/null 2>&1 || true
		[ -n "$kube_made_network" ] && { podman network rm podman-default-kube-network >/dev/null 2>&1 || true; }
	fi
	rm -rf "$tmp"
	echo "image-test: $passed passed, $([ "$rc" -eq 0 ] && echo 0 || echo 1) failed ($(secs "$T0") s in all)"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# http PORT PATH: the body on stdout, fails unless 200
http() {
	local code
	code=$(curl -sS --max-time 5 -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$1$2") || return 1
	cat "$tmp/body"
	[ "$code" = 200 ]
}

# Up to 10 s for /readyz: a container is ready in well under a second here;
# the margin is for a loaded 2-core CI machine.
wait_ready() {
	for _ in $(seq 100); do
		http "$1" /readyz >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "${2:-splitkd} on 127.0.0.1:$1 was not ready within 10 s"
}

# The seed's worked example (#928): Qwen3.8-27B (24 q heads) on H100 (132
# SMs) at max_batch_size 16: auto = clamp(ceil(2*132/24), 1, 16) splits and
# 16 rows * 24 heads * splits slots.
check_decision() { # check_decision PORT WHAT
	local body splits=$(((2 * 132 + 24 - 1) / 24)) slots
	slots=$((16 * 24 * splits))
	body=$(http "$1" '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16') ||
		fail "$2: the decision did not answer 200: $body"
	case $body in
	*"\"num_splits\":$splits,"*"\"workspace_slots\":$slots,"*) ;;
	*) fail "$2: want $splits splits and $slots slots, got $body" ;;
	esac
	ok "$2: the seed's decision, $splits splits and $slots workspace slots"
}

# An in-flight request: a POST whose body is sent half before the stop and
# half once the daemon has begun to drain, so it spans the drain.
SLOW_BODY='{"target":"h100","model":"qwen3.8-27b","max_batch_size":16}'
slow_open() { # slow_open PORT: sets slow_fd
	exec {slow_fd}<>"/dev/tcp/127.0.0.1/$1"
	printf 'POST /v1/splits HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
		"${#SLOW_BODY}" "${SLOW_BODY:0:20}" >&"$slow_fd"
}
slow_finish() { # slow_finish WHAT: the rest of the body, then the answer
	printf '%s' "${SLOW_BODY:20}" >&"$slow_fd"
	timeout 5 cat <&"$slow_fd" >"$tmp/slow.out" || true
	exec {slow_fd}<&-
	head -n1 "$tmp/slow.out" | grep -q ' 200 ' || fail "$1: the in-flight request was not answered: $(head -c 300 "$tmp/slow.out")"
	grep -q '"num_splits":11,' "$tmp/slow.out" || fail "$1: the in-flight answer is not the decision"
	ok "$1: the request in flight at the stop was answered (200, the decision)"
}
# Up to 5 s until splitkd holds N connections (this /metrics one among
# them): a request sent before the stop must have been taken off the
# listen queue, or the drain's shutdown of the listener resets it.
wait_conns() { # wait_conns PORT N
	local n
	for _ in $(seq 50); do
		n=$(http "$1" /metrics 2>/dev/null | sed -n 's/^splitkd_connections //p')
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "splitkd on 127.0.0.1:$1 never held $2 connections"
}
# Up to 5 s for the daemon to log that it drains (the signal is delivered
# at once; the margin is for a loaded machine).
wait_drain() { # wait_drain CONTAINER
	for _ in $(seq 50); do
		podman logs "$1" 2>&1 | grep -q 'drain' && return 0
		sleep 0.1
	done
	fail "$1 never logged a drain after the stop signal"
}

# ---------------------------------------------------------------- 1. manifest
say "validating docker/kubernetes.yaml against the Kubernetes API schema"
if [ ! -f tests/container/node_modules/.splitkd-lock ] ||
	! cmp -s tests/container/package-lock.json tests/container/node_modules/.splitkd-lock; then
	(cd tests/container && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cp tests/container/package-lock.json tests/container/node_modules/.splitkd-lock
fi
node tests/container/k8s-validate.js docker/kubernetes.yaml || fail "docker/kubernetes.yaml does not validate"
ok "every object of docker/kubernetes.yaml validates (schema and field names)"
# The validator is not a check that cannot fail: a misspelt field and a
# string for an integer must both be refused.
sed -e 's/^\( *\)readinessProbe:/\1readinesProbe:/' -e 's/replicas: 3/replicas: "3"/' \
	docker/kubernetes.yaml >"$tmp/broken.yaml"
if node tests/container/k8s-validate.js "$tmp/broken.yaml" >"$tmp/broken.out" 2>&1; then
	fail "the validator accepted a broken manifest"
fi
if ! grep -q 'readinesProbe' "$tmp/broken.out" || ! grep -q 'replicas must be integer' "$tmp/broken.out"; then
	fail "the validator missed an error: $(cat "$tmp/broken.out")"
fi
ok "the validator refuses a misspelt field (readinesProbe) and a string replica count"

# ---------------------------------------------------------------- 2. build
# the base: present, or made with mmdebstrap (tests/container/base-image.sh)
bash tests/container/base-image.sh "$BASE" 2>>"$tmp/podman.log" | sed 's/^/image-test: /' ||
	fail "could not make the base $BASE"

t=$(date +%s%N)
bash docker/build-image.sh "$IMAGE" --pull=never >"$tmp/build.log" 2>&1 ||
	{ tail -30 "$tmp/build.log"; fail "the image did not build"; }
build_time=$(secs "$t")
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' "$BASE")
say "image $IMAGE built in $build_time s: $size bytes, base $base_size, +$((size - base_size))"
[ $((size - base_size)) -le 10000000 ] || fail "the image is $((size - base_size)) bytes over its base (10 MB at most)"
ok "the image is $(((size - base_size) / 1000)) kB over its base (at most 10 MB)"
health=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE")
case $health in *'"Test":["CMD'*) ;; *) fail "the image has no HEALTHCHECK (built as OCI?): $health" ;; esac

# What the build stage saw: .dockerignore keeps tests, build output,
# node_modules and .git out of `COPY . .`; the sources are in.
bash docker/build-image.sh "localhost/$run-build" --pull=never --target build >>"$tmp/build.log" 2>&1 ||
	fail "the build stage did not build"
ctx=$(pm run --rm --network=none --entrypoint ls "localhost/$run-build" -A /src | tr '\n' ' ')
# untag, not rmi: rmi would delete the stage's layers, the build cache
pm untag "localhost/$run-build" >/dev/null
for d in Makefile api policy server scripts; do
	case " $ctx" in *" $d "*) ;; *) fail "the build context lacks $d: $ctx" ;; esac
done
for d in tests build .git node_modules bench fuzz README.md; do
	case " $ctx" in *" $d "*) fail "the build context holds $d: $ctx" ;; esac
done
ok "the build context is the sources without tests, build, .git, node_modules ($ctx)"

# ---------------------------------------------------------------- 3. run
# run_ctr NAME PORT [ARGS...]: as an operator runs it, PORT published on
# 127.0.0.1 only; prints the host port. It runs in $(...), a subshell: the
# caller adds NAME to the containers that cleanup removes.
run_ctr() {
	local name=$1 cport=$2
	shift 2
	pm run -d --name "$name" --read-only --cap-drop=ALL --security-opt=no-new-privileges \
		-p "127.0.0.1::$cport" "$IMAGE" "$@" >/dev/null || fail "podman run $name failed"
	podman port "$name" "$cport/tcp" | sed 's/.*://'
}
# podman 4.3 does not enforce a health check's --timeout; the image's check
# bounds itself (2 s). 15 s here only keeps a check that does not from
# hanging the test: exit 124 then.
hc_run() {
	timeout 15 podman healthcheck run "$1" >/dev/null 2>>"$tmp/podman.log"
}
healthy() { # healthy CONTAINER WHAT: the image's own HEALTHCHECK, run by podman
	# podman runs health checks from systemd timers; without systemd (this
	# machine, CI) `podman healthcheck run` runs the same check on demand.
	hc_run "$1" || fail "$2: the HEALTHCHECK reports unhealthy"
	[ "$(podman inspect --format '{{.State.Health.Status}}' "$1")" = healthy ] ||
		fail "$2: podman does not record it healthy"
	ok "$2: HEALTHCHECK healthy"
}

say "container: default listen address"
a=$run-default
containers+=("$a")
port=$(run_ctr "$a" 8080)
wait_ready "$port" "$a"
http "$port" /healthz >/dev/null || fail "/healthz did not answer 200"
ok "default: /healthz 200 on 127.0.0.1:$port"
check_decision "$port" default
healthy "$a" default
ids=$(podman exec "$a" sh -c 'echo "$(id -u):$(id -g) $(id -un):$(id -gn) $(getent group 10001)"')
[ "$ids" = "10001:10001 splitkd:splitkd splitkd:x:10001:" ] || fail "user and group: $ids"
ok "runs as uid 10001 (splitkd), gid 10001 (splitkd, a real group entry)"
caps=$(podman exec "$a" grep -E '^Cap(Prm|Eff|Bnd):' /proc/1/status | tr -s '\t\n' '  ')
[ "$(echo "$caps" | grep -Eo '[0-9a-f]{16}' | grep -c '^0*$')" = 3 ] || fail "capabilities left: $caps"
ok "no capability left (${caps% })"
if podman exec "$a" touch /usr/local/bin/x 2>"$tmp/ro.err"; then
	fail "the root filesystem is writable"
fi
grep -q 'Read-only file system' "$tmp/ro.err" || fail "touch failed, not for a read-only fs: $(cat "$tmp/ro.err")"
ok "the root filesystem is read-only"
left=$(podman exec "$a" sh -c 'ls /var/cache/apt/archives/*.deb /var/lib/apt/lists/*_Packages* /var/cache/apt/*.bin 2>/dev/null | wc -l')
[ "$left" = 0 ] || fail "apt left $left cache or list files in the image"
ok "no apt cache or lists in the image"

# The check must be able to fail: splitkd stopped (SIGSTOP) still holds
# its socket, so only an answer on /healthz tells; `timeout 2` bounds it.
pm kill --signal STOP "$a" >/dev/null
t=$(date +%s%N)
hc=0
hc_run "$a" || hc=$?
pm kill --signal CONT "$a" >/dev/null
[ "$hc" -ne 0 ] || fail "HEALTHCHECK healthy while splitkd is stopped"
[ "$hc" -ne 124 ] || fail "HEALTHCHECK still running after 15 s on a hung splitkd: it must bound itself"
ok "default: HEALTHCHECK unhealthy while splitkd hangs (SIGSTOP), after $(secs "$t") s"
healthy "$a" "default, resumed"

say "container: --listen overridden"
b=$run-listen
containers+=("$b")
port_b=$(run_ctr "$b" 9090 --listen 0.0.0.0:9090)
wait_ready "$port_b" "$b"
check_decision "$port_b" "--listen 0.0.0.0:9090"
healthy "$b" "--listen 0.0.0.0:9090"
c=$run-listen6
containers+=("$c")
pm run -d --name "$c" --read-only --cap-drop=ALL "$IMAGE" '--listen=[::1]:9191' >/dev/null
for _ in $(seq 50); do
	podman logs "$c" 2>&1 | grep -q 'listening on' && break
	sleep 0.1
done
healthy "$c" "--listen=[::1]:9191 (IPv6 loopback, the = spelling)"
pm rm -f -t 0 "$b" "$c" >/dev/null

say "container: podman stop (default timeout) with requests in flight"
# One request finishes during the drain and must be answered; a second
# never sends its body, so the drain runs to --drain-timeout (5 s). Both
# must end before podman's 10 s stop timeout: exit 0, no SIGKILL.
slow_open "$port"
exec {stall_fd}<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/splits HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"target"' >&"$stall_fd"
wait_conns "$port" 3
t=$(date +%s%N)
podman stop "$a" >"$tmp/stop.out" 2>"$tmp/stop.err" &
stop_pid=$!
bg_pids+=("$stop_pid")
wait_drain "$a"
slow_finish "podman stop"
wait "$stop_pid" || fail "podman stop failed: $(cat "$tmp/stop.err")"
stop_time=$(secs "$t")
exec {stall_fd}<&-
grep -qi sigkill "$tmp/stop.err" && fail "podman stop resorted to SIGKILL: $(cat "$tmp/stop.err")"
code=$(podman inspect --format '{{.State.ExitCode}}' "$a")
[ "$code" = 0 ] || fail "splitkd exited $code on podman stop"
podman logs "$a" 2>&1 | grep -q 'exited cleanly (drain timed out; requests cut)' ||
	fail "the stalled request did not run the drain to its timeout: $(podman logs "$a" 2>&1 | tail -3)"
ok "podman stop: drained in $stop_time s (the stalled request cut at --drain-timeout), exit 0, no SIGKILL"
pm rm -f -t 0 "$a" >/dev/null

# ---------------------------------------------------------------- 4. compose
say "compose: podman-compose up, then down"
port=$(free_port)
compose_up=1
SPLITKD_PORT=$port podman-compose -p "$run" -f docker/compose.yaml up -d --no-build >>"$tmp/podman.log" 2>&1 ||
	fail "podman-compose up failed"
cc=$(podman ps -q --filter "label=io.podman.compose.project=$run")
[ -n "$cc" ] || fail "podman-compose up started no container"
wait_ready "$port" compose
check_decision "$port" compose
cc_name=$(podman inspect --format '{{.Name}}' "$cc")
healthy "$cc_name" compose
[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}}' "$cc")" = "true 10001:10001" ] ||
	fail "compose: not read-only as uid 10001"
(podman wait "$cc" >"$tmp/compose.exit" 2>/dev/null) &
bg_pids+=($!)
slow_open "$port"
wait_conns "$port" 2
podman-compose -p "$run" -f docker/compose.yaml down >>"$tmp/podman.log" 2>&1 &
down_pid=$!
bg_pids+=("$down_pid")
wait_drain "$cc"
slow_finish "compose down"
wait "$down_pid" || fail "podman-compose down failed"
for _ in $(seq 50); do
	[ -s "$tmp/compose.exit" ] && break
	sleep 0.1
done
[ "$(cat "$tmp/compose.exit")" = 0 ] || fail "compose: splitkd exited $(cat "$tmp/compose.exit") on down"
[ -z "$(podman ps -aq --filter "label=io.podman.compose.project=$run")" ] || fail "compose down left a container"
# podman-compose 1.0.3 leaves the network it made; that is not ours to keep
pm network rm "${run}_default" >/dev/null
compose_up=""
ok "compose down: drained, exit 0, nothing left"

# ---------------------------------------------------------------- 5. kube play
say "kubernetes.yaml: podman kube play"
pm pod exists splitkd-pod-0 && fail "a pod splitkd-pod-0 exists already (another run?): not touching it"
pm volume exists splitkd-catalog && fail "a volume splitkd-catalog exists already: not touching it"
pm network exists podman-default-kube-network || kube_made_network=1
port=$(free_port)
kube_file=$tmp/kubernetes.yaml
node tests/container/kube-local.js docker/kubernetes.yaml "$port" >"$kube_file"
podman --log-level=info kube play "$kube_file" >"$tmp/play.out" 2>"$tmp/play.err" ||
	{ cat "$tmp/play.err" >>"$tmp/podman.log"; fail "podman kube play failed"; }
ignored=$(sed -n 's/.*Kube kind \([A-Za-z]*\) not supported.*/\1/p' "$tmp/play.err" | sort | tr '\n' ' ')
[ "$ignored" = "HorizontalPodAutoscaler PodDisruptionBudget Service " ] ||
	fail "kube play: expected it to skip the HPA, PDB and Service, it skipped: $ignored"
ok "kube play: ran the ConfigMap and Deployment, skipped (not refused) $ignored"
k=splitkd-pod-0-splitkd
wait_ready "$port" "$k"
ready=$(http "$port" /readyz)
check_decision "$port" "kube play"
# SIGHUP re-reads every catalog: the log then names the default's mounted
# file (today.json, a key of the ConfigMap, --catalog-dir) and its digest,
# which must be the one /readyz serves.
pm kill --signal HUP "$k" >/dev/null
for _ in $(seq 50); do
	reload=$(podman logs "$k" 2>&1 | grep '"reload"' || true)
	[ -n "$reload" ] && break
	sleep 0.1
done
digest=$(echo "$ready" | sed -n 's/.*"catalog":"\([^"]*\)".*/\1/p')
case $reload in
*"ok: /etc/splitkd/catalogs/today.json, catalog $digest"*) ;;
*) fail "kube play: the catalog is not the ConfigMap's: /readyz $ready, reload: $reload" ;;
esac
ok "kube play: /readyz ready and serving the ConfigMap's catalog ($digest, /etc/splitkd/catalogs/today.json)"
legacy=$(http "$port" '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&catalog=before-928&fields=num_splits,workspace_slots')
[ "$legacy" = '{"num_splits":1,"workspace_slots":132}' ] ||
	fail "kube play: the ConfigMap's before-928 key does not answer 1 split, 132 slots: $legacy"
ok "kube play: both keys served side by side (before-928: $legacy)"
# A ConfigMap edit of one key reaches the running pod and only its catalog,
# no restart and no signal: podman keeps the ConfigMap's data in a volume
# mounted on /etc/splitkd/catalogs; the key's new catalog (a target added)
# is renamed into it, as the kubelet's swap is a rename, and splitkd's
# watch of the directory must serve it for that catalog alone.
vol=$(podman volume inspect --format '{{.Mountpoint}}' splitkd-catalog 2>>"$tmp/podman.log") ||
	fail "kube play: no splitkd-catalog volume"
[ -f "$vol/before-928.json" ] || fail "kube play: the ConfigMap volume has no before-928.json: $(ls -la "$vol")"
before=$(podman inspect --format '{{.State.StartedAt}} {{.RestartCount}} {{.State.Pid}}' "$k")
today_before=$(http "$port" '/v1/revisions?catalog=today')
/usr/bin/python3 - "$vol/before-928.json" "$vol/..before-928.json.new" <<'PY'
import json, sys
cat = json.load(open(sys.argv[1]))
cat["targets"].append({"name": "zz-configmap-edit", "sm_count": 96, "attn_decode_splitk": "auto"})
json.dump(cat, open(sys.argv[2], "w"))
PY
chmod 0644 "$vol/..before-928.json.new"
mv -f "$vol/..before-928.json.new" "$vol/before-928.json"
T_EDIT=$(date +%s%N)
for _ in $(seq 50); do
	http "$port" '/v1/targets/zz-configmap-edit?catalog=before-928' >/dev/null 2>&1 && break
	sleep 0.1
done
http "$port" '/v1/targets/zz-configmap-edit?catalog=before-928' >/dev/null ||
	fail "kube play: the edited ConfigMap key was not served within 5 s: $(podman logs "$k" 2>&1 | tail -3)"
edit_took=$(secs "$T_EDIT")
http "$port" /v1/targets/zz-configmap-edit >/dev/null 2>&1 &&
	fail "kube play: the edit of before-928.json reached the default catalog (today)"
[ "$(http "$port" '/v1/revisions?catalog=today')" = "$today_before" ] ||
	fail "kube play: the edit of before-928.json moved today's revisions"
[ "$(podman inspect --format '{{.State.StartedAt}} {{.RestartCount}} {{.State.Pid}}' "$k")" = "$before" ] ||
	fail "kube play: the container restarted to take the edit"
podman logs "$k" 2>&1 | grep -q '"reload".*(watch)' || fail "kube play: no watch reload logged"
ok "kube play: an edit of the ConfigMap's before-928 key served in ${edit_took} s by the same process, that catalog alone (the watch, no signal, no restart)"
# A crash: splitkd killed as the kernel kills a process (the OOM killer, a
# fault), from the host and not through podman, whose `podman kill` marks
# the container stopped by the user, which its restart policy never
# restarts (podman-run(1): "Restart policy will not take effect if a
# container is stopped via the podman kill or podman stop commands"; seen
# with podman 4.3: exited 137, RestartCount 0, for good). The pod's policy
# (restartPolicy: Always, the Deployment's default) starts it again on the
# same emptyDir (/var/lib/splitkd): before-928 holds its two revisions and
# a pin on the first (the ConfigMap's before the edit) answers byte for
# byte as it did before the kill; so does a pin on today's one revision.
# revision_ids: GET /v1/revisions's answer in, its ids out one a line: the
# current first, then the others by name (loaded_at moves at a restart)
revision_ids() {
	/usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)
ids = [e["revision"] for e in r["revisions"]]
print("\n".join([r["current"]] + sorted(i for i in ids if i != r["current"])))'
}
pin_query='/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16'
legacy_revs=$(http "$port" '/v1/revisions?catalog=before-928' | revision_ids) ||
	fail "kube play: /v1/revisions?catalog=before-928 did not answer"
[ "$(echo "$legacy_revs" | wc -l)" = 2 ] || fail "kube play: before-928 should hold 2 revisions after the edit: $legacy_revs"
r1=$(echo "$legacy_revs" | sed -n 2p)
today_rev=$(http "$port" '/v1/revisions?catalog=today' | revision_ids | head -1)
pinned=$(http "$port" "$pin_query&catalog=before-928&revision=$r1") || fail "kube play: the pin on $r1 did not answer: $pinned"
case $pinned in
*'"num_splits":1,'*) ;;
*) fail "kube play: the pin on before-928's first revision is not its legacy decision: $pinned" ;;
esac
pinned_today=$(http "$port" "$pin_query&revision=$today_rev") || fail "kube play: the pin on $today_rev did not answer"
read -r count0 pid0 <<<"$(podman inspect --format '{{.RestartCount}} {{.State.Pid}}' "$k")"
kill -KILL "$pid0"
T_KILL=$(date +%s%N)
# up to 30 s for a new process (a restart counted, another pid) that is ready
restarted=""
for _ in $(seq 300); do
	read -r running count1 pid1 <<<"$(podman inspect --format '{{.State.Running}} {{.RestartCount}} {{.State.Pid}}' "$k" 2>/dev/null)"
	if [ "$running" = true ] && [ "$count1" -gt "$count0" ] && [ "$pid1" != "$pid0" ] &&
		http "$port" /readyz >/dev/null 2>&1; then
		restarted=1
		break
	fi
	sleep 0.1
done
[ -n "$restarted" ] ||
	fail "kube play: splitkd killed (pid $pid0) was not running again within 30 s: $(podman inspect --format '{{.State.Status}} exit {{.State.ExitCode}} restarts {{.RestartCount}} policy {{.HostConfig.RestartPolicy.Name}}' "$k")"
restart_took=$(secs "$T_KILL")
now=$(http "$port" "$pin_query&catalog=before-928&revision=$r1") || fail "kube play: after the restart, the pin on $r1 answers: $now"
[ "$now" = "$pinned" ] || fail "kube play: after the restart, the pin on $r1 answers
$now
and before the kill it answered
$pinned"
[ "$(http "$port" "$pin_query&revision=$today_rev")" = "$pinned_today" ] ||
	fail "kube play: after the restart, the pin on today's $today_rev answers otherwise"
[ "$(http "$port" '/v1/revisions?catalog=before-928' | revision_ids)" = "$legacy_revs" ] ||
	fail "kube play: after the restart, before-928 holds $(http "$port" '/v1/revisions?catalog=before-928'), not $legacy_revs"
ok "kube play: splitkd SIGKILLed (pid $pid0) ran again in ${restart_took} s by the pod's restart policy (restarts $count0 -> $count1, pid $pid1); before-928 still holds both revisions and the pin on $r1 answers byte for byte as before (${#pinned} bytes, 1 split), today's pin on $today_rev too"
[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}}' "$k")" = "true 10001:10001" ] ||
	fail "kube play: not read-only as uid 10001"
healthy "$k" "kube play, the liveness probe as podman runs it"
# `podman kube down` stops with a 0 s timeout (podman 4.3: SIGKILL, exit
# 137, no drain), so the pod is stopped first as podman stops a pod.
slow_open "$port"
wait_conns "$port" 2
pm pod stop splitkd-pod-0 >/dev/null &
pstop_pid=$!
bg_pids+=("$pstop_pid")
wait_drain "$k"
slow_finish "kube pod stop"
wait "$pstop_pid" || fail "podman pod stop failed"
code=$(podman inspect --format '{{.State.ExitCode}}' "$k")
[ "$code" = 0 ] || fail "kube play: splitkd exited $code on pod stop"
podman logs "$k" 2>&1 | grep -q '"exited cleanly"' || fail "kube play: no clean exit logged"
pm kube down "$kube_file" >/dev/null || fail "podman kube down failed"
pm volume rm splitkd-catalog >/dev/null
[ -n "$kube_made_network" ] && pm network rm podman-default-kube-network >/dev/null
kube_file=""
ok "kube play: pod stop drained it (exit 0), kube down removed it"

say "build $build_time s; image $size bytes, $((size - base_size)) over the base; all in $(secs "$T0") s"
