#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# make bench: splitkd beside two peers answering the same bytes — the HTTP
# engine's limit (bench/mhd_static.c: libmicrohttpd with splitkd's daemon
# options, one persistent response) and nginx serving the answer as a
# static file. Same client (wrk), same settings, same machine, rounds
# alternating the servers so drift on a noisy machine hits all of them.
# Also: batch decisions per second (BATCH_RUNS consecutive runs, each
# judged against 1.2 million), HTTPS GET beside nginx with the same
# certificate, memory, time to first answer. Writes
# bench/results.md. Everything it starts is stopped on exit, even when
# interrupted. Loopback only.
#
# Environment: ROUNDS (default 3), DURATION seconds per run (default 4),
# CONCURRENCY (default "1 16 64 256"), BATCH_RUNS (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
CONCURRENCY=${CONCURRENCY:-"1 16 64 256"}
BATCH_RUNS=${BATCH_RUNS:-5}
BUILD=build/bench
TMP=bench/tmp
QUERY='/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16'
OUT=bench/results.md

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# wrk's latency ("85.00us", "1.20ms", "2.00s") in milliseconds
to_ms() { awk '{v=$1; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; printf "%.3f\n", v}'; }

# before anything is written: results.md itself must not make the tree "dirty"
rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
rm -rf "$TMP"
mkdir -p "$TMP/www/v1" "$TMP/nginx"

echo "== building splitkd and the engine's reference server optimised"
make --no-print-directory BUILD="$BUILD" OPT="-O2" all "$BUILD/bench/mhd_static" >/dev/null

# ---------------------------------------------------------------- splitkd
sk_port=$(free_port)
"$BUILD/splitkd" --listen "127.0.0.1:$sk_port" --access-log off --threads 2 2>"$TMP/splitkd.log" &
sk_pid=$!
pids+=("$sk_pid")
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$sk_port/healthz" >/dev/null && break; sleep 0.05; done
sleep 0.5
idle_rss=$(rss_kib "$sk_pid")

# the exact bytes splitkd answers, for nginx to serve from disk
curl -sf "http://127.0.0.1:$sk_port$QUERY" > "$TMP/www/v1/splits"
bytes=$(wc -c < "$TMP/www/v1/splits")

# ---------------------------------------------------------------- the engine
etag=$(curl -sfI "http://127.0.0.1:$sk_port$QUERY" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}')
mhd_port=$(free_port)
"$BUILD/bench/mhd_static" "$mhd_port" 2 "$TMP/www/v1/splits" "$etag" 2>"$TMP/mhd.log" &
pids+=("$!")
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$mhd_port$QUERY" >/dev/null && break; sleep 0.05; done
cmp -s <(curl -sf "http://127.0.0.1:$mhd_port$QUERY") "$TMP/www/v1/splits" || { echo "mhd_static does not serve the same bytes" >&2; exit 1; }

# ---------------------------------------------------------------- nginx
ng_port=$(free_port)
cat > "$TMP/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
error_log $PWD/$TMP/nginx/error.log warn;
pid $PWD/$TMP/nginx/nginx.pid;
events { worker_connections 4096; }
http {
	access_log off;
	# nginx's fastest setting for a 400-byte file, measured here: sendfile
	# on (+ tcp_nopush) costs two setsockopt and a sendfile per request
	sendfile off;
	tcp_nodelay on;
	keepalive_timeout 65;
	keepalive_requests 1000000;
	open_file_cache max=100 inactive=60s;
	client_body_temp_path $PWD/$TMP/nginx;
	proxy_temp_path $PWD/$TMP/nginx;
	fastcgi_temp_path $PWD/$TMP/nginx;
	uwsgi_temp_path $PWD/$TMP/nginx;
	scgi_temp_path $PWD/$TMP/nginx;
	server {
		listen 127.0.0.1:$ng_port;
		root $PWD/$TMP/www;
		location = /v1/splits { default_type application/json; }
	}
}
CONF
nginx -c "$PWD/$TMP/nginx/nginx.conf" -p "$PWD/$TMP/nginx" &
ng_pid=$!
pids+=("$ng_pid")
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$ng_port$QUERY" >/dev/null && break; sleep 0.05; done
cmp -s <(curl -sf "http://127.0.0.1:$ng_port$QUERY") "$TMP/www/v1/splits" || { echo "nginx does not serve the same bytes" >&2; exit 1; }

# ---------------------------------------------------------------- runs
run_wrk() { # url conns -> "rps p50ms p99ms"
	local url=$1 c=$2 t=2 out
	[ "$c" -lt 2 ] && t=1
	out=$(wrk -t"$t" -c"$c" -d"${DURATION}s" --latency "$url")
	local rps p50 p99
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p50=$(awk '$1=="50%" {print $2}' <<<"$out" | to_ms)
	p99=$(awk '$1=="99%" {print $2}' <<<"$out" | to_ms)
	echo "$rps $p50 $p99"
}

declare -A R
peak_rss=$idle_rss
for c in $CONCURRENCY; do
	for r in $(seq "$ROUNDS"); do
		for who in splitkd engine nginx; do
			case $who in
			splitkd) url="http://127.0.0.1:$sk_port$QUERY" ;;
			engine) url="http://127.0.0.1:$mhd_port$QUERY" ;;
			nginx) url="http://127.0.0.1:$ng_port$QUERY" ;;
			esac
			if [ "$who" = splitkd ] && [ "$c" = 256 ]; then
				( for _ in $(seq $((DURATION * 10))); do rss_kib "$sk_pid"; sleep 0.1; done ) > "$TMP/rss.$r" &
				sampler=$!
			fi
			res=$(run_wrk "$url" "$c")
			R[$who,$c,$r]=$res
			echo "c=$c round=$r $who: $res"
			if [ "$who" = splitkd ] && [ "$c" = 256 ]; then
				wait "$sampler" || true
				m=$(sort -n "$TMP/rss.$r" | tail -1)
				[ "${m:-0}" -gt "$peak_rss" ] && peak_rss=$m
			fi
		done
	done
done

# ---------------------------------------------------------------- batch
python3 - "$TMP/batch.json" <<'PY'
import json, sys
targets = ["hopper", "gb10", "b200", "a100", "h100-pcie", "l40s", "rtx4090", "rtx5090"]
models = ["qwen3.8-27b", "llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "gemma-2-9b", "gpt-oss-120b"]
q = [{"target": targets[i % 8], "model": models[i % 6], "max_batch_size": 1 + i % 64} for i in range(1024)]
json.dump({"queries": q}, open(sys.argv[1], "w"))
PY
cat > "$TMP/batch.lua" <<LUA
local f = io.open("$PWD/$TMP/batch.json", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA
curl -sf -H 'Content-Type: application/json' --data-binary @"$TMP/batch.json" "http://127.0.0.1:$sk_port/v1/splits" \
	| python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["count"]==1024 and d["failures"]==0, d["failures"]'
batch=()
for r in $(seq "$BATCH_RUNS"); do
	# 16 connections: splitkd's worker threads each keep the connections
	# they accept, so with very few the split between threads (and the
	# result) is luck; 16 evens it out
	out=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/batch.lua" "http://127.0.0.1:$sk_port/v1/splits")
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	batch+=("$(awk -v r="$rps" 'BEGIN {printf "%.0f", r * 1024}')")
	echo "batch round=$r: $rps requests/s = ${batch[-1]} decisions/s"
done
batch_med=$(printf '%s\n' "${batch[@]}" | median)
batch_min=$(printf '%s\n' "${batch[@]}" | sort -g | head -1)
batch_met=$(awk -v m="$batch_min" 'BEGIN {print (m >= 1200000) ? "met" : "MISSED"}')

# ---------------------------------------------------------------- OFREP
# The same decision through the OpenFeature Remote Evaluation Protocol:
# one flag and all five flags (bulk), 16 connections, beside GET
# /v1/splits. (Not the bulk poll's 304: wrk waits for the body its
# Content-Length announces, which RFC 9112 6.3 says a 304 never has.)
CTX='{"context":{"target":"h100","model":"qwen3.8-27b","max_batch_size":16}}'
curl -sf -H 'Content-Type: application/json' -d "$CTX" "http://127.0.0.1:$sk_port/ofrep/v1/evaluate/flags/num_splits" \
	| grep -q '"value":11,' || { echo "OFREP does not give the seed's 11" >&2; exit 1; }
cat > "$TMP/ofrep.lua" <<LUA
wrk.method = "POST"
wrk.body = '$CTX'
wrk.headers["Content-Type"] = "application/json"
LUA
declare -A O
for r in $(seq "$ROUNDS"); do
	for kind in get single bulk; do
		case $kind in
		get) res=$(run_wrk "http://127.0.0.1:$sk_port$QUERY" 16) ;;
		single) res=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/ofrep.lua" "http://127.0.0.1:$sk_port/ofrep/v1/evaluate/flags/num_splits" | awk '/^Requests\/sec:/ {print $2}') ;;
		bulk) res=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/ofrep.lua" "http://127.0.0.1:$sk_port/ofrep/v1/evaluate/flags" | awk '/^Requests\/sec:/ {print $2}') ;;
		esac
		O[$kind,$r]=$(echo "$res" | cut -d' ' -f1)
		echo "ofrep round=$r $kind: ${O[$kind,$r]}"
	done
done

# ---------------------------------------------------------------- HTTPS
# splitkd with --tls-cert beside nginx with the same certificate and key
# (a throw-away PKI, tests/tls/make-certs.sh), GET on keep-alive
# connections, ROUNDS rounds alternating. No floor: the figure is reported.
sh tests/tls/make-certs.sh "$TMP/pki" >/dev/null
tls_port=$(free_port)
"$BUILD/splitkd" --listen "127.0.0.1:$tls_port" --access-log off --threads 2 \
	--tls-cert "$TMP/pki/server.pem" --tls-key "$TMP/pki/server-key.pem" 2>"$TMP/splitkd-tls.log" &
pids+=("$!")
ngs_port=$(free_port)
sed -e "s|listen 127.0.0.1:$ng_port;|listen 127.0.0.1:$ngs_port ssl;\\
		ssl_certificate $PWD/$TMP/pki/server.pem;\\
		ssl_certificate_key $PWD/$TMP/pki/server-key.pem;\\
		ssl_protocols TLSv1.2 TLSv1.3;|" \
	-e "s|pid $PWD/$TMP/nginx/nginx.pid;|pid $PWD/$TMP/nginx/nginx-tls.pid;|" \
	"$TMP/nginx/nginx.conf" > "$TMP/nginx/nginx-tls.conf"
nginx -c "$PWD/$TMP/nginx/nginx-tls.conf" -p "$PWD/$TMP/nginx" &
pids+=("$!")
for p in "$tls_port" "$ngs_port"; do
	for _ in $(seq 100); do curl -sf --cacert "$TMP/pki/ca.pem" "https://localhost:$p$QUERY" >/dev/null && break; sleep 0.05; done
	cmp -s <(curl -sf --cacert "$TMP/pki/ca.pem" "https://localhost:$p$QUERY") "$TMP/www/v1/splits" ||
		{ echo "HTTPS on port $p does not serve the same bytes" >&2; exit 1; }
done
tls_desc=$(curl -sv --cacert "$TMP/pki/ca.pem" "https://localhost:$tls_port/healthz" 2>&1 -o /dev/null | sed -n 's/^\* SSL connection using //p')
declare -A T
for r in $(seq "$ROUNDS"); do
	for who in splitkd nginx; do
		case $who in
		splitkd) url="https://localhost:$tls_port$QUERY" ;;
		nginx) url="https://localhost:$ngs_port$QUERY" ;;
		esac
		T[$who,$r]=$(run_wrk "$url" 16)
		echo "https round=$r $who c=16: ${T[$who,$r]}"
	done
done

# ---------------------------------------------------------------- startup
startup=$(python3 bench/startup.py "$BUILD/splitkd" 15)
echo "startup ms (median min max): $startup"

# ---------------------------------------------------------------- report
col() { # who conns field(1 rps, 2 p50, 3 p99) -> median over rounds
	for r in $(seq "$ROUNDS"); do echo "${R[$1,$2,$r]}" | cut -d' ' -f"$3"; done | median
}
ratio() { # conns peer -> median over rounds of splitkd / peer, each round against itself
	for r in $(seq "$ROUNDS"); do
		s=$(echo "${R[splitkd,$1,$r]}" | cut -d' ' -f1); n=$(echo "${R[$2,$1,$r]}" | cut -d' ' -f1)
		awk -v s="$s" -v n="$n" 'BEGIN {printf "%.3f\n", s / n}'
	done | median
}
{
	echo "# splitkd beside the HTTP engine's limit and nginx"
	echo
	echo "Measured by \`make bench\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo
	echo "- Machine: $(nproc) cores, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
	echo "- splitkd $rev, libmicrohttpd $(pkg-config --modversion libmicrohttpd), built \`-O2\`, \`--threads 2 --access-log off\`"
	echo "- engine: \`bench/mhd_static.c\`, libmicrohttpd with splitkd's daemon options (2 threads), the same $bytes bytes and headers from one persistent response: what the HTTP engine can do here"
	echo "- $(nginx -v 2>&1 | sed 's/nginx version: //'), 2 workers, keep-alive, access log off, open_file_cache, sendfile off (its fastest for a small file here), the same bytes from disk"
	echo "- Client: $(wrk -v 2>&1 | head -1 | awk '{print "wrk", $2}'), ${DURATION} s per run, $ROUNDS rounds alternating splitkd/engine/nginx; client and servers share the $(nproc) cores"
	echo "- Request: \`GET $QUERY\`"
	echo
	echo "| connections | splitkd req/s | engine req/s | nginx req/s | splitkd / engine | splitkd / nginx | splitkd p50 / p99 ms | engine p50 / p99 ms | nginx p50 / p99 ms |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for c in $CONCURRENCY; do
		printf '| %s | %.0f | %.0f | %.0f | %.2fx | %.2fx | %s / %s | %s / %s | %s / %s |\n' "$c" \
			"$(col splitkd "$c" 1)" "$(col engine "$c" 1)" "$(col nginx "$c" 1)" \
			"$(ratio "$c" engine)" "$(ratio "$c" nginx)" \
			"$(col splitkd "$c" 2)" "$(col splitkd "$c" 3)" "$(col engine "$c" 2)" "$(col engine "$c" 3)" \
			"$(col nginx "$c" 2)" "$(col nginx "$c" 3)"
	done
	echo
	echo "Ratios are medians of per-round ratios (each round pits the servers against the same conditions)."
	echo
	echo "| measure | result |"
	echo "|---|---:|"
	echo "| decision path, 16 connections (requests/s, median of $ROUNDS) | GET /v1/splits $(for r in $(seq "$ROUNDS"); do echo "${O[get,$r]}"; done | median | xargs printf '%.0f'); OFREP single flag $(for r in $(seq "$ROUNDS"); do echo "${O[single,$r]}"; done | median | xargs printf '%.0f'); OFREP bulk (5 flags) $(for r in $(seq "$ROUNDS"); do echo "${O[bulk,$r]}"; done | median | xargs printf '%.0f') |"
	echo "| batch: decisions/s through \`POST /v1/splits\` (1024 queries a request, 16 connections), $BATCH_RUNS consecutive runs | $(printf '%s ' "${batch[@]}") |"
	echo "| batch: lowest of the $BATCH_RUNS runs, against 1.2 million | $batch_min ($batch_met) |"
	echo "| resident memory, idle | $((idle_rss / 1024)).$(( (idle_rss % 1024) * 10 / 1024 )) MiB |"
	echo "| resident memory, peak under the 256-connection load | $((peak_rss / 1024)).$(( (peak_rss % 1024) * 10 / 1024 )) MiB |"
	tls_col() { for r in $(seq "$ROUNDS"); do echo "${T[$1,$r]}" | cut -d' ' -f"$2"; done | median; }
	tls_ratio() { for r in $(seq "$ROUNDS"); do
		s=$(echo "${T[splitkd,$r]}" | cut -d' ' -f1); n=$(echo "${T[nginx,$r]}" | cut -d' ' -f1)
		awk -v s="$s" -v n="$n" 'BEGIN {printf "%.3f\n", s / n}'; done | median; }
	echo "| HTTPS GET on keep-alive, 16 connections (requests/s, median of $ROUNDS; the same certificate; splitkd with curl: $tls_desc) | splitkd $(tls_col splitkd 1 | xargs printf '%.0f') (p50 $(tls_col splitkd 2) ms, p99 $(tls_col splitkd 3) ms); nginx $(tls_col nginx 1 | xargs printf '%.0f') (p50 $(tls_col nginx 2) ms, p99 $(tls_col nginx 3) ms); splitkd / nginx $(tls_ratio | xargs printf '%.2f')x |"
	echo "| exec to first answered request (median, min, max of 15) | $(echo "$startup" | awk '{print $1 " ms (" $2 " to " $3 ")"}') |"
} > "$OUT"
echo
cat "$OUT"
