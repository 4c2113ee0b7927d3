#!/usr/bin/env bash
# SPDX-License-Identifier: AGPL-3.0-only
# Issue 49's bench: a POST of 1,024 decisions, each a mixed batch of 8
# lengths (seq_lens), answered by engine=ENGINE (default fa3) against the
# same bytes answered by the seed (engine=seed), RUNS runs of each
# alternating on one splitkd (--threads 1, loopback), wall time of each
# request by curl; prints both medians and their ratio.
# usage: bench/mixed_batch.sh path/to/splitkd [RUNS]
set -euo pipefail
bin=$1
runs=${2:-31}
engine=${ENGINE:-fa3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 "$here/batch_body.py" "$tmp/engine.json" - "$engine" mixed
python3 "$here/batch_body.py" "$tmp/seed.json" - seed mixed
"$bin" --listen "127.0.0.1:$port" --access-log off --threads 1 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
one() {
	curl -s -o "$tmp/out" -w '%{time_total}\n' -H 'Content-Type: application/json' \
		--data-binary "@$tmp/$1.json" "http://127.0.0.1:$port/v1/splits"
}
# each answer must be 1,024 results and no failure, or the timing means nothing
for b in engine seed; do
	one "$b" >/dev/null
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["count"]==1024 and d["failures"]==0, d["failures"]' "$tmp/out"
done
: >"$tmp/t.engine"
: >"$tmp/t.seed"
for _ in $(seq "$runs"); do
	one engine >>"$tmp/t.engine"
	one seed >>"$tmp/t.seed"
done
python3 - "$tmp/t.engine" "$tmp/t.seed" "$engine" "$runs" <<'PY'
import statistics, sys
e = [float(x) for x in open(sys.argv[1])]
s = [float(x) for x in open(sys.argv[2])]
me, ms = statistics.median(e), statistics.median(s)
print(f"1,024 mixed batches of 8 lengths, {sys.argv[4]} alternating runs: engine={sys.argv[3]} "
      f"median {me*1000:.2f} ms, seed median {ms*1000:.2f} ms, ratio {me/ms:.2f} (at most 2)")
sys.exit(0 if me <= 2 * ms else 1)
PY
