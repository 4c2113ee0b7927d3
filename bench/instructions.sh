#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
# Instructions per request, counted by callgrind: repeatable on a noisy
# machine, so a change to the hot path can be judged by it.
# usage: bench/instructions.sh path/to/splitkd [N requests]
set -euo pipefail
bin=$1
n=${2:-2000}
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" --listen "127.0.0.1:$port" \
	--access-log off --threads 1 2>"$tmp/log" &
pid=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
python3 - "$port" "$n" <<'PY'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
req = b"GET /v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16 HTTP/1.1\r\nHost: b\r\n\r\n"
s = socket.create_connection(("127.0.0.1", port))
for _ in range(n):
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, _, body = buf.partition(b"\r\n\r\n")
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
    while len(body) < length:
        body += s.recv(65536)
s.close()
PY
kill -TERM $pid; wait $pid || true
cp "$tmp/cg.out" /tmp/last.cg 2>/dev/null || true
total=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
echo "instructions: $total total, $((total / n)) per request over $n requests (startup included)"
callgrind_annotate "$tmp/cg.out" 2>/dev/null | sed -n '/file:function/,$p' | head -25
