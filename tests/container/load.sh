#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
# One client of deb-test.sh's load, run in its container: asks URL on a new
# connection every time (one curl each) until /root/load.stop exists, and
# holds every body to /root/load.want (the first answer's bytes). Counts
# what was answered in /root/load.ok.N as it goes, and at the end "OK
# FAILED" in /root/load.count.N; a failure's body or error is kept in
# /root/load.bad.N and /root/load.err.N.
# usage: load.sh N URL [CURL_OPTION...]
n=$1
url=$2
shift 2
want=$(cat /root/load.want)
ok=0
bad=0
while [ ! -e /root/load.stop ]; do
	# --max-time: a restart's wait in the socket's backlog is far shorter
	if body=$(curl -sS --fail --max-time 20 "$@" "$url" 2>>"/root/load.err.$n") &&
		[ "$body" = "$want" ]; then
		ok=$((ok + 1))
		echo "$ok" >"/root/load.ok.$n"
	else
		bad=$((bad + 1))
		echo "${body:-(no answer)}" >>"/root/load.bad.$n"
	fi
done
echo "$ok $bad" >"/root/load.count.$n"
