#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# `make deb-test`: the Debian package installed, run, upgraded, removed and
# purged in a clean Debian 12 container, as piuparts would check it, with
# systemd as the container's init so the unit runs as written (its user,
# its sandbox, its system call filter).
#  1. The packages (`make deb`, lintian clean), and a rebuild of them one
#     version later for the upgrade.
#  2. The container: the local Debian 12 base (tests/container/base-image.sh,
#     as image-test.sh makes it) plus systemd, curl and man-db, as a
#     bare-metal node has them; nothing of splitkd's.
#  3. apt installs the .deb and its dependencies; the postinst makes the
#     user, enables splitkd.socket and splitkd.service and starts them, the
#     socket first: splitkd starts by socket activation (on the socket's
#     127.0.0.1:8080, binding none) with /etc/default/splitkd, runs as
#     splitkd, serves the seed's decision (11 splits), and tells systemd it
#     is ready (Type=notify: the status line, the watchdog's pings);
#     `systemd-analyze verify` is silent on both units and `security` rates
#     the service 1.5 at most, offline and running; the sandbox still lets
#     it follow an edit of its catalog (the watch), stream changes, reload.
#     10 `systemctl restart splitkd` under 4 clients in the container, each
#     request a new connection: none fails, every answer the same bytes; a
#     stalled serving loop (the test-only hook) is killed by the watchdog
#     and restarted; with the socket disabled, the service binds
#     127.0.0.1:8080 itself and serves.
#  4. HTTPS on a socket moved to 127.0.0.1:8443 by a drop-in, then the
#     rebuilt package installed over the edited conffiles under load: the
#     edits are kept and served, the service restarted on the new binary,
#     the socket kept open (not restarted), no request failed.
#  5. Remove (the service and the socket stop, the conffiles stay), then
#     purge: nothing under /etc/splitkd, /etc/default/splitkd gone, the
#     state directory gone, the user and group gone, both units' links
#     gone; and, with the dependencies autoremoved, the filesystem as it
#     was before the install.
# Whatever it starts is removed on exit, failed or not. Needs root, the
# `image` and `deb` profiles of scripts/deps.sh (make installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE=$(sed -n 's/^ARG BASE=//p' docker/Dockerfile)
TEST_IMAGE=localhost/splitkd-deb-test:bookworm
TEST_NAME=deb-test
. tests/container/lib.sh
ctr=splitkd-deb-test-$$
started=""
fail() {
	echo "deb-test: FAILED: $*" >&2
	if [ -n "$started" ]; then
		echo "--- splitkd's journal in the container:" >&2
		podman exec "$ctr" journalctl -u splitkd --no-pager -n 20 >&2 2>/dev/null || true
	fi
	exit 1
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$started" ] && { podman rm -f -t 0 "$ctr" >/dev/null 2>&1 || true; }
	rm -rf "$tmp"
	echo "deb-test: $passed passed, $([ "$rc" -eq 0 ] && echo 0 || echo 1) failed ($(secs "$T0") s in all)"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_ctr() { podman exec "$ctr" "$@"; }
# get PATH: the body from 127.0.0.1:8080 inside the container; fails unless 200
get() { in_ctr curl -sS --fail --max-time 5 "http://127.0.0.1:8080$1"; }
wait_ready() { # wait_ready WHAT: up to 10 s for /readyz
	for _ in $(seq 100); do
		get /readyz >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "$1: splitkd did not answer /readyz within 10 s"
}
decision() { get '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16'; }
expect_splits() { # expect_splits N SLOTS WHAT
	local body
	body=$(decision) || fail "$3: the decision did not answer 200"
	case $body in
	*"\"num_splits\":$1,"*"\"workspace_slots\":$2,"*) ;;
	*) fail "$3: want $1 splits and $2 slots, got $body" ;;
	esac
	ok "$3: num_splits $1, workspace_slots $2"
}
main_pid() { in_ctr systemctl show -p MainPID --value splitkd; }
# restart: `systemctl restart splitkd`, its start-rate counter reset first:
# the test restarts far more often than systemd's default start limit (5
# starts in 10 s) lets a unit, which is there for crash loops
restart() {
	in_ctr systemctl reset-failed splitkd 2>/dev/null || true
	in_ctr systemctl restart splitkd
}
show() { in_ctr systemctl show -p "$1" --value "${2:-splitkd}"; } # show PROPERTY [UNIT]
# journal_has PATTERN [PID]: splitkd's journal (that process's alone with
# PID) has the line within 5 s (journald writes it a moment later)
journal_has() {
	for _ in $(seq 50); do
		if [ -n "${2:-}" ]; then
			in_ctr journalctl --no-pager _PID="$2" | grep -q "$1" && return 0
		else
			in_ctr journalctl -u splitkd --no-pager | grep -q "$1" && return 0
		fi
		sleep 0.1
	done
	return 1
}
# The load: 4 clients in the container (tests/container/load.sh), each
# asking one decision on a new connection every time and comparing the
# body with the first answer's bytes. load_start URL [CURL_OPTION...]
load_start() {
	in_ctr sh -c 'rm -f /root/load.*'
	podman cp tests/container/load.sh "$ctr:/root/load.sh" >/dev/null
	in_ctr curl -sS --fail --max-time 5 "${@:2}" "$1" >"$tmp/load.want" || fail "load: no first answer"
	podman cp "$tmp/load.want" "$ctr:/root/load.want" >/dev/null
	load_pids=()
	for n in 1 2 3 4; do
		podman exec "$ctr" sh /root/load.sh "$n" "$@" &
		load_pids+=($!)
	done
}
load_answered() { # before a client's first answer there is no load.ok.N: 0, not a failure
	in_ctr sh -c 'cat /root/load.ok.* 2>/dev/null || true' | awk '{ n += $1 } END { print n + 0 }'
}
load_wait() { # load_wait N: up to 10 s until N more requests were answered
	local from
	from=$(load_answered)
	for _ in $(seq 100); do
		[ "$(load_answered)" -ge $((from + $1)) ] && return 0
		sleep 0.1
	done
	fail "the load stalled: $(load_answered) answered"
}
load_stop() { # load_stop WHAT: the clients stopped; fails on any failed request
	local ok bad
	in_ctr touch /root/load.stop
	wait "${load_pids[@]}" || fail "$1: a client of the load failed to run"
	ok=$(in_ctr sh -c 'cat /root/load.count.*' | awk '{ n += $1 } END { print n + 0 }')
	bad=$(in_ctr sh -c 'cat /root/load.count.*' | awk '{ n += $2 } END { print n + 0 }')
	[ "$bad" -eq 0 ] || fail "$1: $bad of $((ok + bad)) requests failed:" \
		"$(in_ctr sh -c 'cat /root/load.bad.* /root/load.err.* 2>/dev/null | head -5')"
	[ "$ok" -gt 0 ] || fail "$1: no request answered"
	load_ok=$ok
}
# Everything but what changes on its own (apt's lists and caches, logs,
# the journal, /proc and friends, the backups of /etc/passwd and its
# kin that adduser leaves): what piuparts compares.
snapshot() {
	in_ctr sh -c 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \
		-o -path /var/lib/systemd -o -path /etc/ld.so.cache -o -path /var/tmp \) -prune -o -print' |
		grep -Ev '^/etc/(passwd|group|shadow|gshadow)-$|^/etc/\.pwd\.lock$' | sort >"$1"
}

# ---------------------------------------------------------------- 1. packages
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
next="$version+rebuild1"
t=$(date +%s%N)
sh scripts/build-deb.sh build/deb | tee "$tmp/deb.log" | grep -E '^  |^lintian:' || true
grep -q '^lintian: no error, no warning' "$tmp/deb.log" || fail "make deb did not pass lintian: $(tail -5 "$tmp/deb.log")"
sh scripts/build-deb.sh --version "$next" --no-lintian build/deb-next >"$tmp/deb-next.log" 2>&1 ||
	fail "the rebuild as $next failed: $(tail -5 "$tmp/deb-next.log")"
for f in "build/deb/splitkd_${version}_amd64.deb" "build/deb/splitkd-dbgsym_${version}_amd64.deb" \
	"build/deb/libsplitk-dev_${version}_amd64.deb" "build/deb-next/splitkd_${next}_amd64.deb"; do
	[ -s "$f" ] || fail "no $f"
done
ok "packages built in $(secs "$t") s: splitkd, splitkd-dbgsym, libsplitk-dev $version, and splitkd $next; lintian clean"

# ---------------------------------------------------------------- 2. container
bash tests/container/base-image.sh "$BASE" 2>>"$tmp/podman.log" | sed 's/^/deb-test: /'
if ! podman image exists "$TEST_IMAGE"; then
	say "test image $TEST_IMAGE: absent, adding systemd, curl and man-db to the base"
	t=$(date +%s%N)
	# The base leaves man pages out (dpkg path-exclude); this one keeps
	# them, so `systemd-analyze verify` can find the package's page.
	cat >"$tmp/Containerfile" <<EOF
FROM $BASE
RUN sed -i '/usr\/share\/man/d' /etc/dpkg/dpkg.cfg.d/* \\
 && apt-get update \\
 && apt-get install -y --no-install-recommends systemd systemd-sysv dbus curl man-db \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
STOPSIGNAL SIGRTMIN+3
CMD ["/sbin/init"]
EOF
	podman build --network=host --pull=never -t "$TEST_IMAGE" -f "$tmp/Containerfile" "$tmp" >"$tmp/build.log" 2>&1 ||
		{ tail -20 "$tmp/build.log"; fail "the test image did not build"; }
	say "test image made in $(secs "$t") s"
fi

# --privileged: systemd as init sets up each unit's sandbox (mount, user
# and other namespaces, seccomp), which podman's defaults (no
# CAP_SYS_ADMIN, its own seccomp profile) forbid a container. The
# network is podman's own: 127.0.0.1:8080 in there is not the host's.
started=1
podman run -d --name "$ctr" --systemd=always --privileged \
	-v "$PWD/build/deb:/debs:ro" -v "$PWD/build/deb-next:/debs-next:ro" \
	"$TEST_IMAGE" >/dev/null 2>>"$tmp/podman.log" || fail "the container did not start: $(tail -3 "$tmp/podman.log")"
for _ in $(seq 100); do
	state=$(in_ctr systemctl is-system-running 2>/dev/null || true)
	case $state in running | degraded) break ;; esac
	sleep 0.1
done
case $state in running | degraded) ;; *) fail "systemd in the container is $state after 10 s" ;; esac
ok "systemd is the container's init ($state)"
in_ctr dpkg -s libmicrohttpd12 >/dev/null 2>&1 && fail "the container has libmicrohttpd12 before the install"
getent_user=$(in_ctr getent passwd splitkd || true)
[ -z "$getent_user" ] || fail "the container has a splitkd user before the install"
snapshot "$tmp/before"

# ---------------------------------------------------------------- 3. install
say "install: apt-get install ./splitkd_${version}_amd64.deb"
t=$(date +%s%N)
in_ctr sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /debs/splitkd_${version}_amd64.deb" \
	>"$tmp/install.log" 2>&1 || fail "apt could not install the package: $(tail -5 "$tmp/install.log")"
ok "installed with its dependencies in $(secs "$t") s"
wait_ready install
in_ctr systemctl is-enabled splitkd >/dev/null || fail "the unit is not enabled"
in_ctr systemctl is-enabled splitkd.socket >/dev/null || fail "splitkd.socket is not enabled"
in_ctr systemctl is-active splitkd.socket >/dev/null || fail "splitkd.socket is not listening"
pid=$(main_pid)
user=$(in_ctr ps -o user= -p "$pid")
[ "$user" = splitkd ] || fail "splitkd runs as '$user', not the package's user"
args=$(in_ctr cat "/proc/$pid/cmdline" | tr '\0' ' ')
case $args in
*"--listen 127.0.0.1:8080 --catalog /etc/splitkd/catalog.json"*) ;;
*) fail "splitkd does not run with the package's defaults: $args" ;;
esac
ok "the unit is enabled and started: pid $pid as user splitkd, $args"
handed='the 1 socket the service manager passed (LISTEN_FDS): 127.0.0.1:8080 (splitkd.socket)'
journal_has "serving on $handed; binding none" "$pid" ||
	fail "splitkd did not start on the socket:" \
		"$(in_ctr journalctl -u splitkd --no-pager | grep start | tail -3)"
in_ctr journalctl -u splitkd --no-pager | grep -q 'is not among them' &&
	fail "--listen and the socket disagree"
ok "both units enabled; started by socket activation on 127.0.0.1:8080 (splitkd.socket)," \
	"binding none"
[ "$(show Type)" = notify ] && [ "$(show NotifyAccess)" = main ] ||
	fail "the unit is $(show Type), NotifyAccess=$(show NotifyAccess)"
status=$(show StatusText)
case $status in
"serving catalog default at fnv1a64:"*) ;;
*) fail "no STATUS= from splitkd: '$status'" ;;
esac
[ -n "$(show WatchdogTimestampMonotonic)" ] && [ "$(show WatchdogTimestampMonotonic)" != 0 ] ||
	fail "systemd has heard no WATCHDOG=1"
ok "Type=notify: ready, 'systemctl status' reads \"$status\";" \
	"the watchdog ($(show WatchdogUSec)) is pinged"
expect_splits 11 4224 "the seed's example, installed"
in_ctr dpkg-query -W -f='${Conffiles}\n' splitkd >"$tmp/conffiles"
grep -q '/etc/splitkd/catalog.json' "$tmp/conffiles" && grep -q '/etc/default/splitkd' "$tmp/conffiles" ||
	fail "not conffiles: $(cat "$tmp/conffiles")"
ok "conffiles: /etc/splitkd/catalog.json and /etc/default/splitkd"
state_dir=$(in_ctr readlink -f /var/lib/splitkd)
[ "$(in_ctr stat -c %U "$state_dir")" = splitkd ] || fail "the state directory $state_dir is not splitkd's"
ok "the state directory /var/lib/splitkd ($state_dir), owned by splitkd"

out=$(in_ctr systemd-analyze verify /lib/systemd/system/splitkd.socket \
	/lib/systemd/system/splitkd.service 2>&1) || fail "verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
ok "systemd-analyze verify of the installed units (the socket and the service): silent"
for mode in --offline=true ""; do
	line=$(in_ctr systemd-analyze security $mode splitkd.service 2>&1 | grep 'Overall exposure level') ||
		fail "systemd-analyze security $mode gave no score"
	score=$(echo "$line" | sed -n 's/.*: \([0-9][0-9]*\.[0-9]\).*/\1/p')
	awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }' || fail "exposure $score over 1.5: $line"
	ok "systemd-analyze security ${mode:-(the running service)}: ${line#→ }"
done

# The sandbox lets splitkd do its work: a stream opens, a new catalog is
# followed by the watch (sed -i renames a new file in, as an editor does),
# SIGHUP by `systemctl reload` re-reads it.
in_ctr timeout 3 curl -sS -N --max-time 2 http://127.0.0.1:8080/v1/events >"$tmp/events" 2>/dev/null || true
grep -q '^event: hello' "$tmp/events" || fail "no change stream: $(head -c 300 "$tmp/events")"
ok "a change stream opens (event: hello)"
in_ctr sed -i 's/"sm_count": 132,/"sm_count": 66,/' /etc/splitkd/catalog.json
for _ in $(seq 100); do
	decision 2>/dev/null | grep -q '"num_splits":6,' && break
	sleep 0.1
done
expect_splits 6 2304 "the conffile edited (hopper at 66 SMs), followed by the watch"
[ "$(main_pid)" = "$pid" ] || fail "splitkd restarted to take the edit"
in_ctr systemctl reload splitkd
for _ in $(seq 50); do
	in_ctr journalctl -u splitkd --no-pager 2>/dev/null | grep -q '"reload".*ok.*SIGHUP\|reload.*ok: .*(SIGHUP)' && break
	sleep 0.1
done
in_ctr journalctl -u splitkd --no-pager | grep -q 'reload.*ok: /etc/splitkd/catalog.json' ||
	fail "systemctl reload: no reload logged"
ok "systemctl reload: SIGHUP re-read /etc/splitkd/catalog.json (in the journal)"
in_ctr journalctl -u splitkd --no-pager | grep -E 'Operation not permitted|EPERM|seccomp' &&
	fail "the journal shows a refused system call"
case $(show StatusText) in
"serving catalog default at "*) ;;
*) fail "after the reload: '$(show StatusText)'" ;;
esac
[ "$(show ActiveState)" = active ] || fail "after the reload the unit is $(show ActiveState)"
ok "after the reload (RELOADING=1, then READY=1): active, \"$(show StatusText)\""

# Restarts on the held socket under load: each `systemctl restart` stops
# splitkd (SIGTERM, the drain) and starts the next on the same socket,
# which systemd keeps open; a client that connects meanwhile waits in its
# backlog. restart returns once the new one said READY=1.
t=$(date +%s%N)
load_start 'http://127.0.0.1:8080/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16'
pids=$pid
for i in $(seq 10); do
	load_wait 20
	restart || fail "restart $i failed"
	pids="$pids $(main_pid)"
done
load_wait 20
load_stop "10 restarts on the socket"
[ "$(echo "$pids" | tr ' ' '\n' | sort -u | wc -l)" -eq 11 ] ||
	fail "10 restarts, but the pids were: $pids"
[ "$(show NRestarts)" = 0 ] || fail "systemd restarted splitkd on its own $(show NRestarts) times"
ok "10 restarts on the held socket under 4 clients (a new connection each request) in" \
	"$(secs "$t") s: $load_ok requests, 0 failed, every answer the same bytes"
pid=$(main_pid)

# The watchdog: a serving loop stalled (the test-only hook, 1 s after
# start, for 30 s) stops the pings; systemd kills it at WatchdogSec= and
# Restart=on-failure starts another.
in_ctr mkdir -p /etc/systemd/system/splitkd.service.d
in_ctr sh -c 'printf "[Service]\nWatchdogSec=2s\n%s\n" \
	"Environment=\"SPLITKD_TEST_STALL_TICK=1000 30000\"" \
	>/etc/systemd/system/splitkd.service.d/stall.conf'
in_ctr systemctl daemon-reload
restart
stalled_pid=$(main_pid)
for _ in 1 2; do
	journal_has 'Watchdog timeout' && break
done
journal_has 'Watchdog timeout' ||
	fail "a stalled serving loop was not caught by the watchdog within 15 s"
in_ctr rm -r /etc/systemd/system/splitkd.service.d
in_ctr systemctl daemon-reload
# a stalled one would take its stall to stop (the tick joins at exit)
in_ctr systemctl kill --signal=SIGKILL splitkd 2>/dev/null || true
restart
wait_ready "after the watchdog"
[ "$(main_pid)" != "$stalled_pid" ] || fail "the stalled splitkd still runs"
ok "a serving loop stalled for 30 s: 'Watchdog timeout' at WatchdogSec=2s," \
	"killed (pid $stalled_pid) and restarted"

# Without the socket: the service binds --listen itself.
in_ctr systemctl disable --now splitkd.socket 2>/dev/null
restart
wait_ready "without the socket"
journal_has 'listening on http://127.0.0.1:8080' "$(main_pid)" ||
	fail "without the socket: no 'listening on'"
# (the journal has caught up with that process: one look is enough)
in_ctr journalctl --no-pager _PID="$(main_pid)" | grep -q 'LISTEN_FDS' &&
	fail "without the socket unit, splitkd still took a socket"
expect_splits 6 2304 "splitkd.socket disabled: the service binds 127.0.0.1:8080 itself"
in_ctr systemctl stop splitkd
in_ctr systemctl enable --now splitkd.socket 2>/dev/null
in_ctr systemctl reset-failed splitkd 2>/dev/null || true
in_ctr systemctl start splitkd
wait_ready "the socket back"
journal_has 'passed (LISTEN_FDS): 127.0.0.1:8080' "$(main_pid)" ||
	fail "with the socket enabled again, splitkd did not start on it"
ok "the socket enabled again: splitkd on it"
pid=$(main_pid)

# HTTPS with the package's user: the key readable by its group only, the
# flags edited in /etc/default/splitkd (the second conffile), then a new
# certificate renamed over the old one is served without a restart.
sh tests/tls/make-certs.sh "$tmp/pki" >/dev/null
in_ctr install -d -m 0750 -g splitkd /etc/splitkd/tls
in_ctr mkdir /root/pki
for f in ca.pem server.pem server-key.pem server2.pem server2-key.pem; do
	podman cp "$tmp/pki/$f" "$ctr:/root/pki/$f"
done
in_ctr sh -c 'install -m 0644 /root/pki/server.pem /etc/splitkd/tls/tls.crt &&
	install -m 0640 -g splitkd /root/pki/server-key.pem /etc/splitkd/tls/tls.key'
in_ctr sed -i 's|^SPLITKD_ARGS=.*|SPLITKD_ARGS="--listen 127.0.0.1:8443 --catalog /etc/splitkd/catalog.json --tls-cert /etc/splitkd/tls/tls.crt --tls-key /etc/splitkd/tls/tls.key"|' \
	/etc/default/splitkd
# the socket moved to the same address by a drop-in, as splitkd.socket says
in_ctr mkdir -p /etc/systemd/system/splitkd.socket.d
in_ctr sh -c 'printf "[Socket]\nListenStream=\nListenStream=127.0.0.1:8443\n" \
	>/etc/systemd/system/splitkd.socket.d/listen.conf'
in_ctr systemctl daemon-reload
in_ctr systemctl stop splitkd 2>/dev/null # ("it can still be activated by splitkd.socket")
in_ctr systemctl restart splitkd.socket
in_ctr systemctl reset-failed splitkd 2>/dev/null || true
in_ctr systemctl start splitkd
tls_pid=$(main_pid)
https() { in_ctr curl -sS --fail --max-time 5 --cacert /root/pki/ca.pem "https://localhost:8443$1"; }
get() { https "$@"; } # from here on, splitkd serves HTTPS only
for _ in $(seq 100); do
	https /readyz >/dev/null 2>&1 && break
	sleep 0.1
done
https '/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16' | grep -q '"num_splits":6,' ||
	fail "HTTPS with /etc/default/splitkd's TLS flags did not answer the decision"
# the pair renamed in (the key first: between the two renames the pair
# does not match and the old one keeps serving, as tls.c says)
in_ctr sh -c 'cd /etc/splitkd/tls && install -m 0640 -g splitkd /root/pki/server2-key.pem .tls.key.new &&
	install -m 0644 /root/pki/server2.pem .tls.crt.new && mv .tls.key.new tls.key && mv .tls.crt.new tls.crt'
for _ in $(seq 100); do
	in_ctr journalctl -u splitkd --no-pager | grep -q 'tls.*reloaded: /etc/splitkd/tls/tls.crt' && break
	sleep 0.1
done
in_ctr journalctl -u splitkd --no-pager | grep -q 'tls.*reloaded: /etc/splitkd/tls/tls.crt' ||
	fail "the renamed certificate was not reloaded within 10 s"
https /metrics | grep -q '^splitkd_tls_reloads_total{result="ok"} [1-9]' || fail "no TLS reload counted"
https /healthz >/dev/null || fail "HTTPS stopped answering after the certificate was renamed over"
[ "$(main_pid)" = "$tls_pid" ] || fail "splitkd restarted to take the new certificate"
pid=$tls_pid
journal_has 'passed (LISTEN_FDS): 127.0.0.1:8443 (splitkd.socket)' "$tls_pid" ||
	fail "HTTPS not on the socket moved by the drop-in"
ok "HTTPS as the package's user on the socket a drop-in moved to 127.0.0.1:8443: the key" \
	"0640 root:splitkd, the decision over TLS; a new certificate renamed in, reloaded" \
	"without a restart"

# ---------------------------------------------------------------- 4. upgrade
say "upgrade: apt-get install ./splitkd_${next}_amd64.deb over the edited conffile, under load"
t=$(date +%s%N)
socket_since=$(show ActiveEnterTimestampMonotonic splitkd.socket)
load_start 'https://localhost:8443/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16' \
	--cacert /root/pki/ca.pem
load_wait 20
in_ctr sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /debs-next/splitkd_${next}_amd64.deb" \
	>"$tmp/upgrade.log" 2>&1 || fail "the upgrade failed: $(tail -5 "$tmp/upgrade.log")"
load_wait 20
load_stop "the upgrade"
[ "$(show ActiveEnterTimestampMonotonic splitkd.socket)" = "$socket_since" ] ||
	fail "the upgrade restarted splitkd.socket (it must stay open across the service's restart)"
[ "$(in_ctr dpkg-query -W -f='${Version}' splitkd)" = "$next" ] || fail "the upgrade did not install $next"
in_ctr grep -q '"sm_count": 66,' /etc/splitkd/catalog.json || fail "the upgrade lost the catalog's edit"
in_ctr grep -q '^SPLITKD_ARGS="--listen 127.0.0.1:8443 .*--tls-key' /etc/default/splitkd ||
	fail "the upgrade lost /etc/default/splitkd's edit"
in_ctr sh -c 'ls -d /etc/splitkd/*.dpkg-* /etc/default/splitkd.dpkg-* 2>/dev/null' &&
	fail "the upgrade left a .dpkg-* copy of a conffile"
wait_ready upgrade
new_pid=$(main_pid)
[ "$new_pid" != "$pid" ] || fail "the upgrade did not restart splitkd"
ok "upgraded to $next in $(secs "$t") s under load: both edits kept, no .dpkg-* copy," \
	"splitkd restarted (pid $pid -> $new_pid) on the socket kept open, $load_ok requests, 0 failed"
expect_splits 6 2304 "after the upgrade, over HTTPS, the edited catalog"

# ---------------------------------------------------------------- 5. remove, purge
in_ctr sh -c 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq splitkd' >"$tmp/remove.log" 2>&1 ||
	fail "apt-get remove failed: $(tail -5 "$tmp/remove.log")"
in_ctr systemctl is-active splitkd >/dev/null 2>&1 && fail "splitkd still runs after remove"
in_ctr systemctl is-active splitkd.socket >/dev/null 2>&1 &&
	fail "splitkd.socket still listens after remove"
in_ctr test -e /usr/bin/splitkd && fail "remove left /usr/bin/splitkd"
in_ctr test -f /etc/splitkd/catalog.json || fail "remove took the conffile (only purge may)"
ok "removed: the service and the socket stopped, the binary gone, the conffiles kept"
in_ctr dpkg --purge splitkd >"$tmp/purge.log" 2>&1 || fail "dpkg --purge failed: $(tail -5 "$tmp/purge.log")"
# What the operator added (the TLS files, the socket's drop-in) is not
# the package's: purge leaves exactly that, and the test removes it.
left=$(in_ctr find /etc/splitkd | sort | tr '\n' ' ')
[ "$left" = "/etc/splitkd /etc/splitkd/tls /etc/splitkd/tls/tls.crt /etc/splitkd/tls/tls.key " ] ||
	fail "purge left under /etc/splitkd more or less than the operator's TLS files: $left"
in_ctr test -f /etc/systemd/system/splitkd.socket.d/listen.conf ||
	fail "purge took the operator's drop-in"
in_ctr rm -r /etc/splitkd /root/pki /etc/systemd/system/splitkd.socket.d
in_ctr sh -c 'rm -f /root/load.*' # the load's files
left=$(in_ctr sh -c 'ls -d /etc/splitkd /etc/default/splitkd /var/lib/splitkd /var/lib/private/splitkd \
	/etc/systemd/system/multi-user.target.wants/splitkd.service \
	/etc/systemd/system/sockets.target.wants/splitkd.socket 2>/dev/null' || true)
[ -z "$left" ] || fail "purge left: $left"
in_ctr getent passwd splitkd && fail "purge left the user splitkd"
in_ctr getent group splitkd && fail "purge left the group splitkd"
ok "purged: only the operator's TLS files left under /etc/splitkd; no /etc/default/splitkd, no state directory, no user or group"
in_ctr sh -c 'DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq' >"$tmp/autoremove.log" 2>&1 ||
	fail "autoremove failed: $(tail -5 "$tmp/autoremove.log")"
snapshot "$tmp/after"
if ! diff "$tmp/before" "$tmp/after" >"$tmp/diff"; then
	fail "the filesystem differs from before the install:"$'\n'"$(head -20 "$tmp/diff")"
fi
ok "with its dependencies autoremoved, the filesystem is as before the install ($(wc -l <"$tmp/before") paths)"
say "all in $(secs "$T0") s"
