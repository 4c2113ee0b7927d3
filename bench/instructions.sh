#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
# Instructions per request, counted by callgrind: repeatable on a noisy
# machine, so a change to the hot path can be judged by it. Start-up is
# excluded: the counters are zeroed (callgrind_control -z) after a warm-up.
#
# usage: bench/instructions.sh path/to/splitkd [N] [get|batch|batch-fields|get-fields]
#   get           N keep-alive GET /v1/splits (default 2000), per request
#   get-fields    the same with fields=num_splits,workspace_bytes
#   batch         N POST /v1/splits of 1024 queries (default 20), per decision,
#                 beside cJSON's own parse + print of the same body (needs
#                 build/.../bench/cjson_roundtrip, made by `make bench-tools`)
#   batch-fields  the batch with "fields":"num_splits,workspace_bytes"
#   batch-engine  the batch with every query naming engine=$ENGINE (default
#                 fa2) and the inputs it reads; ENGINE=seed is the same bytes
#                 answered by the seed, the peer to compare with
# CG_KEEP=path keeps the callgrind profile of the counted requests.
set -euo pipefail
bin=$1
mode=${3:-get}
case $mode in
get | get-fields) n=${2:-2000} ;;
batch | batch-fields | batch-engine) n=${2:-20} ;;
*) echo "mode: get, get-fields, batch, batch-fields or batch-engine" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
case $mode in
batch) python3 "$here/batch_body.py" "$tmp/body.json" ;;
batch-fields) python3 "$here/batch_body.py" "$tmp/body.json" num_splits,workspace_bytes ;;
batch-engine) python3 "$here/batch_body.py" "$tmp/body.json" - "${ENGINE:-fa2}" ;;
esac
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" --listen "127.0.0.1:$port" \
	--access-log off --threads 1 2>"$tmp/log" &
pid=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
python3 - "$port" "$n" "$mode" "$tmp/body.json" "$pid" <<'PY'
import socket, subprocess, sys
port, n, mode, body_path, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
if mode.startswith("batch"):
    body = open(body_path, "rb").read()
    req = (b"POST /v1/splits HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body)) + body
else:
    fields = b"&fields=num_splits,workspace_bytes" if mode == "get-fields" else b""
    req = b"GET /v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16" + fields + b" HTTP/1.1\r\nHost: b\r\n\r\n"
s = socket.create_connection(("127.0.0.1", port))

def one():
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, _, body = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
    while len(body) < length:
        body += s.recv(65536)
    if mode.startswith("batch"):
        assert b'"failures":0,' in body, body[-200:]

# warm up (first-touch page faults, lazy binding), then count from zero
for _ in range(3):
    one()
subprocess.run(["callgrind_control", "-z", pid], check=True, stdout=subprocess.DEVNULL)
for _ in range(n):
    one()
subprocess.run(["callgrind_control", "-d", pid], check=True, stdout=subprocess.DEVNULL)
s.close()
PY
kill -TERM $pid
wait $pid || true
pid=
# the dump taken right after the N requests (…-1 or .1): shutdown excluded
dump=$(ls "$tmp"/cg.out.* 2>/dev/null | sort | head -1)
[ -n "$dump" ] || { echo "no callgrind dump" >&2; exit 1; }
# CG_KEEP=path keeps the profile (a fixed /tmp name is shared with whoever else runs this)
[ -n "${CG_KEEP:-}" ] && cp "$dump" "$CG_KEEP"
total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
case $mode in
get | get-fields)
	echo "instructions: $total over $n requests ($mode), $((total / n)) per request (start-up excluded)"
	;;
batch-engine)
	echo "instructions: $total over $n batches of 1024 (engine=${ENGINE:-fa2}), $((total / (n * 1024))) per decision (start-up excluded)"
	;;
batch | batch-fields)
	echo "instructions: $total over $n batches of 1024 ($mode), $((total / (n * 1024))) per decision (start-up excluded)"
	rt=$(dirname "$bin")/bench/cjson_roundtrip
	if [ -x "$rt" ]; then
		valgrind --tool=callgrind --callgrind-out-file="$tmp/rt.out" --toggle-collect=roundtrip \
			"$rt" "$tmp/body.json" "$n" >/dev/null 2>&1
		cj=$(callgrind_annotate "$tmp/rt.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
		echo "cJSON alone (cJSON_ParseWithLength + cJSON_PrintUnformatted of the same body): $((cj / (n * 1024))) per query"
		awk -v s="$total" -v c="$cj" 'BEGIN {printf "splitkd / cJSON round trip: %.3f\n", s / c}'
	else
		echo "($rt not built: no cJSON comparison)"
	fi
	;;
esac
callgrind_annotate --threshold=100 "$dump" 2>/dev/null | grep -v -e clone.S -e start_thread | sed -n '/file:function/,$p' | head -25
