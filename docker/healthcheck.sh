#!/bin/bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# The image's HEALTHCHECK: exit 0 when splitkd answers 200 on /healthz at
# the address it is actually listening on, 1 otherwise.
#
# Why it reads the socket and not the flags: the address comes from
# `--listen`, which an operator overrides (`docker run splitkd --listen
# 0.0.0.0:9090`), and getopt takes it in more spellings than a parser here
# would follow (`--listen=`, `--lis`, the last one wins, `--` ends options,
# port 0 picks a free port). The kernel's table of listening sockets
# already holds the answer, so this asks it: the TCP sockets in LISTEN
# whose inode is one of splitkd's own file descriptors. A wildcard address
# (0.0.0.0, [::]) is asked on loopback. No daemon change, no file written
# (the root filesystem is read-only), nothing but bash: the image has no
# curl. It runs as the container's user, the same uid as splitkd, which
# may read splitkd's /proc entries even with every capability dropped.
#
# With --tls-cert (seen in splitkd's own command line: any argument that
# begins with --tls-ce, the shortest spelling getopt takes for it) the
# probe speaks TLS with gnutls-cli, not verifying the certificate: this
# asks whether the process answers, over loopback, not who it is. With
# --tls-client-ca, set SPLITKD_HEALTHCHECK_CERT and SPLITKD_HEALTHCHECK_KEY
# to a client certificate and key the CA signed.
set -u

exe=/usr/local/bin/splitkd
pid=""
# PID 1 unless an init (docker run --init) runs splitkd as its child
for d in /proc/1 /proc/[0-9]*; do
	if [ "$(readlink "$d/exe" 2>/dev/null)" = "$exe" ]; then
		pid=${d#/proc/}
		break
	fi
done
[ -n "$pid" ] || { echo "healthcheck: no $exe process" >&2; exit 1; }

tls=""
while IFS= read -r -d '' arg; do
	case $arg in --tls-ce*) tls=yes ;; esac
done < "/proc/$pid/cmdline"

inodes=" "
for fd in /proc/"$pid"/fd/*; do
	link=$(readlink "$fd" 2>/dev/null) || continue
	case $link in
	socket:\[*\]) inodes+="${link:8:${#link}-9} " ;;
	esac
done

# /proc/net/tcp6 holds 32 hex digits, four 32-bit words in host (little
# endian) byte order; print the address in full, colon-separated form.
v6() {
	local hex=$1 out="" w word
	for w in 0 1 2 3; do
		word=${hex:w*8:8}
		word=${word:6:2}${word:4:2}${word:2:2}${word:0:2}
		out+="${word:0:4}:${word:4:4}:"
	done
	echo "${out%:}"
}

probe() { # probe HOST PORT
	local status
	if [ -n "$tls" ]; then
		local client=()
		if [ -n "${SPLITKD_HEALTHCHECK_CERT:-}" ]; then
			client=(--x509certfile "$SPLITKD_HEALTHCHECK_CERT" --x509keyfile "${SPLITKD_HEALTHCHECK_KEY:-}")
		fi
		status=$(printf 'GET /healthz HTTP/1.0\r\n\r\n' |
			gnutls-cli --insecure --logfile=/dev/null "${client[@]}" -p "$2" "$1" 2>/dev/null |
			{ read -r _ s _; echo "$s"; })
		[ "$status" = 200 ]
		return
	fi
	exec 3<>"/dev/tcp/$1/$2" || return 1
	printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
	read -r _ status _ <&3
	exec 3<&-
	[ "$status" = 200 ]
}

for table in /proc/net/tcp /proc/net/tcp6; do
	[ -r "$table" ] || continue
	# sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
	while read -r _ local _ st _ _ _ _ _ inode _; do
		[ "$st" = 0A ] || continue
		case $inodes in *" $inode "*) ;; *) continue ;; esac
		hex=${local%:*}
		port=$((16#${local#*:}))
		if [ ${#hex} -eq 8 ]; then
			host=$((16#${hex:6:2})).$((16#${hex:4:2})).$((16#${hex:2:2})).$((16#${hex:0:2}))
			[ "$host" = 0.0.0.0 ] && host=127.0.0.1
		else
			host=$(v6 "$hex")
			[ "$host" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && host=::1
		fi
		probe "$host" "$port" && exit 0
		echo "healthcheck: no 200 from /healthz on $host port $port" >&2
		exit 1
	done < "$table"
done
echo "healthcheck: splitkd (pid $pid) has no listening TCP socket" >&2
exit 1
