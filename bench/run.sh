#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
#
# make bench: splitkd beside the HTTP engine's limit — bench/mhd_static.c,
# libmicrohttpd with splitkd's daemon options answering the same bytes from
# one persistent response — at equal thread counts (1 and the default),
# and beside nginx serving the answer as a static file. Same client (wrk),
# same settings, same machine, rounds alternating the servers so drift on a
# noisy machine hits all of them alike; ratios are medians of per-round
# ratios.
#
#  - GET, one repeated query, and a rotation of ROTATION distinct queries
#    (bench/rotation.lua), so that anything that only helps a repeated
#    question shows as such. The engine gets the same client script.
#  - Batch (POST /v1/splits, 1024 queries) against its own limit: the
#    engine reading the same body and answering the same answer bytes,
#    BATCH_THREADS threads each, BATCH_RUNS consecutive runs, each judged
#    against 0.20; and the same batch with "fields":"num_splits,workspace_bytes".
#  - OFREP, HTTPS GET beside nginx with the same certificate, memory, time
#    to the first answer.
#
# Writes bench/results.md. Everything it starts is stopped on exit, even
# when interrupted. Loopback only.
#
# Environment: ROUNDS (default 3), DURATION seconds per run (default 4),
# CONCURRENCY (default "16 64"), THREADS (default "1 <nproc>"), WRK_THREADS
# (default 2), ROTATION (default 1536), BATCH_RUNS (default 5),
# BATCH_THREADS (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
CONCURRENCY=${CONCURRENCY:-"16 64"}
DEFAULT_THREADS=$(nproc)
THREADS=${THREADS:-"1 $DEFAULT_THREADS"}
WRK_THREADS=${WRK_THREADS:-2}
ROTATION=${ROTATION:-1536}
BATCH_RUNS=${BATCH_RUNS:-5}
BATCH_THREADS=${BATCH_THREADS:-1}
BATCH_FLOOR=0.20
GET_FLOOR=0.90
BUILD=build/bench
TMP=bench/tmp
QUERY='/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16'
FIELDS='num_splits,workspace_bytes'
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
wait_up() { for _ in $(seq 100); do curl -sf "$1" >/dev/null && return 0; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }

# before anything is written: results.md itself must not make the tree "dirty"
rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
rm -rf "$TMP"
mkdir -p "$TMP/www/v1" "$TMP/nginx"

echo "== building splitkd and the engine's reference server optimised"
make --no-print-directory BUILD="$BUILD" OPT="-O2" all "$BUILD/bench/mhd_static" >/dev/null

# ---------------------------------------------------------------- splitkd
# one daemon per thread count; S[T] its port
declare -A S SP E
for t in $THREADS; do
	port=$(free_port)
	"$BUILD/splitkd" --listen "127.0.0.1:$port" --access-log off --threads "$t" 2>"$TMP/splitkd-$t.log" &
	pids+=("$!")
	S[$t]=$port
	SP[$t]=$!
	wait_up "http://127.0.0.1:$port/healthz"
done
sleep 0.5
first=${THREADS%% *}
sk_port=${S[$first]}
sk_pid=${SP[$first]}
idle_rss=$(rss_kib "$sk_pid")

# the exact bytes splitkd answers, for the engine and nginx to serve
curl -sf "http://127.0.0.1:$sk_port$QUERY" > "$TMP/www/v1/splits"
bytes=$(wc -c < "$TMP/www/v1/splits")
etag=$(curl -sfI "http://127.0.0.1:$sk_port$QUERY" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}')

# ---------------------------------------------------------------- the engine
for t in $THREADS; do
	port=$(free_port)
	"$BUILD/bench/mhd_static" "$port" "$t" "$TMP/www/v1/splits" "$etag" 2>"$TMP/mhd-$t.log" &
	pids+=("$!")
	E[$t]=$port
	wait_up "http://127.0.0.1:$port$QUERY"
	cmp -s <(curl -sf "http://127.0.0.1:$port$QUERY") "$TMP/www/v1/splits" ||
		{ echo "mhd_static does not serve the same bytes" >&2; exit 1; }
done

# ---------------------------------------------------------------- nginx
ng_port=$(free_port)
cat > "$TMP/nginx/nginx.conf" <<CONF
worker_processes $DEFAULT_THREADS;
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
pids+=("$!")
wait_up "http://127.0.0.1:$ng_port$QUERY"
cmp -s <(curl -sf "http://127.0.0.1:$ng_port$QUERY") "$TMP/www/v1/splits" ||
	{ echo "nginx does not serve the same bytes" >&2; exit 1; }

# ---------------------------------------------------------------- rotation
# ROTATION distinct GET queries, each answered 200 (checked here, once),
# cycled by the client: a reuse that only helps a repeated question gets
# one hit in ROTATION.
python3 - "$ROTATION" "$TMP/rotation.txt" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
targets = ["hopper", "gb10", "b200", "a100", "h100-pcie", "l40s", "rtx4090", "rtx5090"]
models = ["qwen3.8-27b", "llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "gemma-2-9b", "gpt-oss-120b"]
paths = []
i = 0
while len(paths) < n:
    t, m, b = targets[i % 8], models[(i // 8) % 6], 1 + (i // 48) % 256
    paths.append("/v1/splits?target=%s&model=%s&max_batch_size=%d" % (t, m, b))
    i += 1
assert len(set(paths)) == n, "the rotation repeats a query"
open(out, "w").write("\n".join(paths) + "\n")
PY
python3 - "$sk_port" "$TMP/rotation.txt" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
bodies = set()
for p in open(sys.argv[2]).read().split():
    c.request("GET", p)
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (p, r.status, body)
    bodies.add(body)
print("rotation: %d queries, %d distinct answers" % (len(open(sys.argv[2]).read().split()), len(bodies)))
PY
cat > "$TMP/rotation.lua" <<LUA
local paths = {}
for line in io.lines("$PWD/$TMP/rotation.txt") do paths[#paths + 1] = line end
local i = 0
request = function()
	i = i % #paths + 1
	return wrk.format(nil, paths[i])
end
LUA

# ---------------------------------------------------------------- runs
run_wrk() { # url conns [script] -> "rps p50ms p99ms"
	local url=$1 c=$2 script=${3:-} t=$WRK_THREADS out
	[ "$c" -lt "$t" ] && t=$c
	if [ -n "$script" ]; then
		out=$(wrk -t"$t" -c"$c" -d"${DURATION}s" --latency -s "$script" "$url")
	else
		out=$(wrk -t"$t" -c"$c" -d"${DURATION}s" --latency "$url")
	fi
	local rps p50 p99
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p50=$(awk '$1=="50%" {print $2}' <<<"$out" | to_ms)
	p99=$(awk '$1=="99%" {print $2}' <<<"$out" | to_ms)
	echo "$rps $p50 $p99"
}

declare -A R
peak_rss=$idle_rss
last_c=${CONCURRENCY##* }
for t in $THREADS; do
	for c in $CONCURRENCY; do
		for r in $(seq "$ROUNDS"); do
			whos="splitkd engine rotation engine-rotation"
			[ "$t" = "$DEFAULT_THREADS" ] && whos="$whos nginx"
			for who in $whos; do
				script=
				case $who in
				splitkd) url="http://127.0.0.1:${S[$t]}$QUERY" ;;
				engine) url="http://127.0.0.1:${E[$t]}$QUERY" ;;
				rotation) url="http://127.0.0.1:${S[$t]}/"; script=$TMP/rotation.lua ;;
				engine-rotation) url="http://127.0.0.1:${E[$t]}/"; script=$TMP/rotation.lua ;;
				nginx) url="http://127.0.0.1:$ng_port$QUERY" ;;
				esac
				if [ "$who" = splitkd ] && [ "$c" = "$last_c" ]; then
					( for _ in $(seq $((DURATION * 10))); do rss_kib "${SP[$t]}"; sleep 0.1; done ) > "$TMP/rss.$t.$r" &
					sampler=$!
				fi
				res=$(run_wrk "$url" "$c" "$script")
				R[$who,$t,$c,$r]=$res
				echo "threads=$t c=$c round=$r $who: $res"
				if [ "$who" = splitkd ] && [ "$c" = "$last_c" ]; then
					wait "$sampler" || true
					m=$(sort -n "$TMP/rss.$t.$r" | tail -1)
					[ "${m:-0}" -gt "$peak_rss" ] && peak_rss=$m
				fi
			done
		done
	done
done

# ---------------------------------------------------------------- batch
python3 bench/batch_body.py "$TMP/batch.json"
python3 bench/batch_body.py "$TMP/batch-fields.json" "$FIELDS"
for kind in batch batch-fields; do
	cat > "$TMP/$kind.lua" <<LUA
local f = io.open("$PWD/$TMP/$kind.json", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA
done
bt_port=${S[$BATCH_THREADS]:-}
if [ -z "$bt_port" ]; then
	bt_port=$(free_port)
	"$BUILD/splitkd" --listen "127.0.0.1:$bt_port" --access-log off --threads "$BATCH_THREADS" 2>"$TMP/splitkd-batch.log" &
	pids+=("$!")
	wait_up "http://127.0.0.1:$bt_port/healthz"
fi
post() { curl -sf -H 'Content-Type: application/json' --data-binary @"$1" "http://127.0.0.1:$2/v1/splits"; }
post "$TMP/batch.json" "$bt_port" > "$TMP/batch-answer.json"
post "$TMP/batch-fields.json" "$bt_port" > "$TMP/batch-fields-answer.json"
python3 - "$TMP/batch-answer.json" "$TMP/batch-fields-answer.json" "$FIELDS" <<'PY'
import json, sys
full, cut = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert full["count"] == 1024 and full["failures"] == 0, full["failures"]
want = sys.argv[3].split(",")
for a, b in zip(full["results"], cut["results"]):
    assert list(b) == want and all(a[k] == b[k] for k in want), (a, b)
PY
batch_bytes=$(wc -c < "$TMP/batch-answer.json")
fields_bytes=$(wc -c < "$TMP/batch-fields-answer.json")
bl_port=$(free_port)
"$BUILD/bench/mhd_static" "$bl_port" "$BATCH_THREADS" "$TMP/batch-answer.json" - 2>"$TMP/mhd-batch.log" &
pids+=("$!")
wait_up "http://127.0.0.1:$bl_port/"
cmp -s <(post "$TMP/batch.json" "$bl_port") "$TMP/batch-answer.json" ||
	{ echo "mhd_static does not answer the batch's bytes" >&2; exit 1; }
batch=() limit=() bratio=() bfields=()
for r in $(seq "$BATCH_RUNS"); do
	# 16 connections, so that with several threads each gets its share
	s=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/batch.lua" "http://127.0.0.1:$bt_port/v1/splits" | awk '/^Requests\/sec:/ {print $2}')
	l=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/batch.lua" "http://127.0.0.1:$bl_port/v1/splits" | awk '/^Requests\/sec:/ {print $2}')
	f=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/batch-fields.lua" "http://127.0.0.1:$bt_port/v1/splits" | awk '/^Requests\/sec:/ {print $2}')
	batch+=("$(awk -v r="$s" 'BEGIN {printf "%.0f", r * 1024}')")
	limit+=("$(awk -v r="$l" 'BEGIN {printf "%.0f", r * 1024}')")
	bratio+=("$(awk -v s="$s" -v l="$l" 'BEGIN {printf "%.3f", s / l}')")
	bfields+=("$(awk -v r="$f" 'BEGIN {printf "%.0f", r * 1024}')")
	echo "batch run=$r: splitkd $s requests/s (${batch[-1]} decisions/s), limit $l (${limit[-1]}), ratio ${bratio[-1]}; with fields ${bfields[-1]} decisions/s"
done
bratio_min=$(printf '%s\n' "${bratio[@]}" | sort -g | head -1)
batch_met=$(awk -v m="$bratio_min" -v f="$BATCH_FLOOR" 'BEGIN {print (m >= f) ? "met" : "MISSED"}')

# ---------------------------------------------------------------- OFREP
# The same decision through the OpenFeature Remote Evaluation Protocol:
# one flag and all five flags (bulk), 16 connections, beside GET
# /v1/splits. (Not the bulk poll's 304: wrk waits for the body its
# Content-Length announces, which RFC 9112 6.3 says a 304 never has.)
of_port=${S[$DEFAULT_THREADS]:-$sk_port}
CTX='{"context":{"target":"h100","model":"qwen3.8-27b","max_batch_size":16}}'
curl -sf -H 'Content-Type: application/json' -d "$CTX" "http://127.0.0.1:$of_port/ofrep/v1/evaluate/flags/num_splits" \
	| grep -q '"value":11,' || { echo "OFREP does not give the seed's 11" >&2; exit 1; }
cat > "$TMP/ofrep.lua" <<LUA
wrk.method = "POST"
wrk.body = '$CTX'
wrk.headers["Content-Type"] = "application/json"
LUA
declare -A O
for r in $(seq "$ROUNDS"); do
	for kind in get fields single bulk; do
		case $kind in
		get) res=$(run_wrk "http://127.0.0.1:$of_port$QUERY" 16) ;;
		fields) res=$(run_wrk "http://127.0.0.1:$of_port$QUERY&fields=$FIELDS" 16) ;;
		single) res=$(run_wrk "http://127.0.0.1:$of_port/ofrep/v1/evaluate/flags/num_splits" 16 "$TMP/ofrep.lua") ;;
		bulk) res=$(run_wrk "http://127.0.0.1:$of_port/ofrep/v1/evaluate/flags" 16 "$TMP/ofrep.lua") ;;
		esac
		O[$kind,$r]=$(echo "$res" | cut -d' ' -f1)
		echo "decision path round=$r $kind: ${O[$kind,$r]}"
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
col() { # who threads conns field(1 rps, 2 p50, 3 p99) -> median over rounds
	for r in $(seq "$ROUNDS"); do echo "${R[$1,$2,$3,$r]}" | cut -d' ' -f"$4"; done | median
}
ratio() { # who peer threads conns -> median over rounds of who / peer, each round against itself
	for r in $(seq "$ROUNDS"); do
		s=$(echo "${R[$1,$3,$4,$r]}" | cut -d' ' -f1); n=$(echo "${R[$2,$3,$4,$r]}" | cut -d' ' -f1)
		awk -v s="$s" -v n="$n" 'BEGIN {printf "%.3f\n", s / n}'
	done | median
}
omed() { for r in $(seq "$ROUNDS"); do echo "${O[$1,$r]}"; done | median | xargs printf '%.0f'; }
verdict() { awk -v v="$1" -v f="$2" 'BEGIN {print (v >= f) ? "met" : "MISSED"}'; }
{
	echo "# splitkd beside the HTTP engine's limit and nginx"
	echo
	echo "Measured by \`make bench\` (\`ROUNDS=$ROUNDS DURATION=$DURATION\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo
	echo "- Machine: $(nproc) cores, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
	echo "- splitkd $rev, libmicrohttpd $(pkg-config --modversion libmicrohttpd), built \`-O2\`, \`--threads T --access-log off\`"
	echo "- engine: \`bench/mhd_static.c\`, libmicrohttpd with splitkd's daemon options (T threads), the same $bytes bytes and headers from one persistent response: what the HTTP engine can do here"
	echo "- $(nginx -v 2>&1 | sed 's/nginx version: //'), $DEFAULT_THREADS workers, keep-alive, access log off, open_file_cache, sendfile off (its fastest for a small file here), the same bytes from disk"
	echo "- Client: $(wrk -v 2>&1 | head -1 | awk '{print "wrk", $2}') -t$WRK_THREADS, ${DURATION} s per run, $ROUNDS rounds alternating the servers; client and servers share the $(nproc) cores"
	echo "- Request: \`GET $QUERY\`; rotation: $ROTATION distinct \`GET /v1/splits\` queries cycled by \`bench/tmp/rotation.lua\` (the engine gets the same script and answers its one response)"
	echo
	echo "| threads | connections | splitkd req/s | engine req/s | splitkd / engine | rotation req/s | engine, same client | rotation / engine | nginx req/s | splitkd / nginx | splitkd p50 / p99 ms | engine p50 / p99 ms |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for t in $THREADS; do
		for c in $CONCURRENCY; do
			ng="—" ngr="—"
			if [ "$t" = "$DEFAULT_THREADS" ]; then
				ng=$(printf '%.0f' "$(col nginx "$t" "$c" 1)")
				ngr=$(printf '%.2fx' "$(ratio splitkd nginx "$t" "$c")")
			fi
			printf '| %s | %s | %.0f | %.0f | %.2fx | %.0f | %.0f | %.2fx | %s | %s | %s / %s | %s / %s |\n' "$t" "$c" \
				"$(col splitkd "$t" "$c" 1)" "$(col engine "$t" "$c" 1)" "$(ratio splitkd engine "$t" "$c")" \
				"$(col rotation "$t" "$c" 1)" "$(col engine-rotation "$t" "$c" 1)" \
				"$(ratio rotation engine-rotation "$t" "$c")" "$ng" "$ngr" \
				"$(col splitkd "$t" "$c" 2)" "$(col splitkd "$t" "$c" 3)" "$(col engine "$t" "$c" 2)" "$(col engine "$t" "$c" 3)"
		done
	done
	echo
	echo "Ratios are medians of per-round ratios (each round pits the servers against the same conditions)."
	echo "Against issue 22's floor of $GET_FLOOR for the repeated query:"
	for t in $THREADS; do
		for c in $CONCURRENCY; do
			v=$(ratio splitkd engine "$t" "$c")
			echo "threads $t, $c connections: $v ($(verdict "$v" "$GET_FLOOR"))"
		done
	done | sed 's/^/- /'
	echo
	echo "Batch: \`POST /v1/splits\` with 1024 queries ($(wc -c < "$TMP/batch.json") bytes, answer $batch_bytes bytes), $BATCH_THREADS thread(s), wrk -t2 -c16; the limit is the engine reading the same body and answering the same $batch_bytes bytes from one persistent response, $BATCH_THREADS thread(s). With \`\"fields\":\"$FIELDS\"\` the answer is $fields_bytes bytes."
	echo
	echo "| run | splitkd decisions/s | limit decisions/s | splitkd / limit | with fields, decisions/s |"
	echo "|---:|---:|---:|---:|---:|"
	for i in "${!batch[@]}"; do
		echo "| $((i + 1)) | ${batch[$i]} | ${limit[$i]} | ${bratio[$i]}x | ${bfields[$i]} |"
	done
	echo
	echo "Lowest batch / limit of the $BATCH_RUNS runs: $bratio_min, against a floor of $BATCH_FLOOR ($batch_met)."
	echo
	echo "| measure | result |"
	echo "|---|---:|"
	echo "| decision path, 16 connections, $DEFAULT_THREADS threads (requests/s, median of $ROUNDS) | GET /v1/splits $(omed get); with fields=$FIELDS $(omed fields); OFREP single flag $(omed single); OFREP bulk (5 flags) $(omed bulk) |"
	echo "| resident memory, idle | $((idle_rss / 1024)).$(( (idle_rss % 1024) * 10 / 1024 )) MiB |"
	echo "| resident memory, peak under the $last_c-connection load | $((peak_rss / 1024)).$(( (peak_rss % 1024) * 10 / 1024 )) MiB |"
	tls_col() { for r in $(seq "$ROUNDS"); do echo "${T[$1,$r]}" | cut -d' ' -f"$2"; done | median; }
	tls_ratio() { for r in $(seq "$ROUNDS"); do
		s=$(echo "${T[splitkd,$r]}" | cut -d' ' -f1); n=$(echo "${T[nginx,$r]}" | cut -d' ' -f1)
		awk -v s="$s" -v n="$n" 'BEGIN {printf "%.3f\n", s / n}'; done | median; }
	echo "| HTTPS GET on keep-alive, 16 connections (requests/s, median of $ROUNDS; the same certificate; splitkd with curl: $tls_desc) | splitkd $(tls_col splitkd 1 | xargs printf '%.0f') (p50 $(tls_col splitkd 2) ms, p99 $(tls_col splitkd 3) ms); nginx $(tls_col nginx 1 | xargs printf '%.0f') (p50 $(tls_col nginx 2) ms, p99 $(tls_col nginx 3) ms); splitkd / nginx $(tls_ratio | xargs printf '%.2f')x |"
	echo "| exec to first answered request (median, min, max of 15) | $(echo "$startup" | awk '{print $1 " ms (" $2 " to " $3 ")"}') |"
} > "$OUT"
echo
cat "$OUT"
