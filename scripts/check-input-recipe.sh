#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# The recipe "a new input" (docs/DEVELOPING.md) checked on itself. In a
# scratch copy of the tree (the tracked files as they stand), one row is
# added to VOCAB_PARAMS in api/vocab.h and nothing else: a decision input
# scratch_knob, a number. Then the copy must build; its daemon must parse
# the input in GET /v1/splits, a POST body, a batch's query and an OFREP
# context (a number is answered as before, a word is refused as
# "scratch_knob must be ..." where the tree's own daemon says it knows no
# such parameter, or, in OFREP, ignores it); and the contract's check
# (tests/unit/test_vocab.c) must fail naming scratch_knob, since
# api/openapi.json does not say it yet. Nothing outside the copy changes.
# usage: scripts/check-input-recipe.sh   (from anywhere; `make recipe-check`)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/splitkd-input-recipe-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$scratch"' EXIT
fail() { echo "input-recipe: FAILED: $*" >&2; exit 1; }
(cd "$top" && git ls-files -z | xargs -0 tar cf -) | tar xf - -C "$scratch"
cd "$scratch"
echo "== recipe: a new input (scratch_knob) by one row of api/vocab.h, in $scratch"
last=$(grep -n '^	X([A-Z_]*, [a-zA-Z_]*, [A-Z0-9]*, [A-Z]*)$' api/vocab.h | tail -n 1 | cut -d: -f1)
[ -n "$last" ] || fail "no last row of VOCAB_PARAMS in api/vocab.h"
sed -i "${last}s|\$| \\\\\\
	X(SCRATCH_KNOB, scratch_knob, U32, DECIDE)|" api/vocab.h
grep -q 'X(SCRATCH_KNOB, scratch_knob, U32, DECIDE)$' api/vocab.h || fail "the row did not go in"
[ "$(git -C "$top" diff --no-index --numstat "$top/api/vocab.h" "$scratch/api/vocab.h" | cut -f1,2)" = "$(printf '2\t1')" ] ||
	fail "the recipe changed more than one row"
make -s build/splitkd build/tests/unit/test_vocab >build.log 2>&1 || { tail -20 build.log; fail "the copy does not build"; }

start() { # start BINARY: sets pid and port
	"$1" --listen 127.0.0.1:0 --access-log off >/dev/null 2>"$scratch/daemon.log" &
	pid=$!
	for _ in $(seq 50); do
		port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$scratch/daemon.log")
		[ -n "$port" ] && return
		sleep 0.1
	done
	cat "$scratch/daemon.log" >&2
	fail "$1 did not start"
}
probe() { # probe PORT WHO: each way in, a number then a word
	python3 - "$1" "$2" <<'PY'
import json, sys, urllib.error, urllib.request
base, who = f"http://127.0.0.1:{sys.argv[1]}", sys.argv[2]
q = {"target": "h100", "model": "qwen3.8-27b", "max_batch_size": 16}

def call(path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

ways = {
    "GET": lambda v: call("/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16&scratch_knob=" + str(v)),
    "POST": lambda v: call("/v1/splits", dict(q, scratch_knob=v)),
    "batch": lambda v: call("/v1/splits", {"queries": [dict(q, scratch_knob=v)]}),
    "OFREP": lambda v: call("/ofrep/v1/evaluate/flags/num_splits", {"context": dict(q, scratch_knob=v)}),
}
for way, ask in ways.items():
    number, word = ask(3), ask("many")
    if way == "batch":  # each query's own answer, or its problem under "error"
        number = (400 if "error" in number[1]["results"][0] else number[0], {})
        word = (400 if "error" in word[1]["results"][0] else word[0], word[1]["results"][0].get("error", {}))
    print(who, way, number[0], word[0], json.dumps(word[1].get("detail") or word[1].get("errorDetails")
                                                    or word[1].get("problem", {}).get("detail")))
PY
}
start build/splitkd
probe "$port" copy >copy.txt || { cat copy.txt; fail "the copy's daemon did not answer"; }
kill $pid; wait $pid 2>/dev/null || true; pid=
start "$top/build/splitkd"
probe "$port" tree >tree.txt || { cat tree.txt; fail "the tree's daemon did not answer"; }
kill $pid; wait $pid 2>/dev/null || true; pid=
cat copy.txt tree.txt
for way in GET POST batch OFREP; do
	grep -q "^copy $way 200 .*scratch_knob must be" copy.txt || fail "the copy's $way does not parse scratch_knob"
done
for way in GET POST batch; do
	grep -q "^tree $way .*scratch_knob" tree.txt || fail "the tree's own $way does not refuse scratch_knob"
	! grep -q "^tree $way 200 .*scratch_knob must be" tree.txt || fail "the tree's daemon knows scratch_knob"
done
grep -q "^tree OFREP 200 200 " tree.txt || fail "the tree's OFREP does not ignore scratch_knob, as a context key it does not know"
if build/tests/unit/test_vocab >vocab.log 2>&1; then
	fail "the contract's check passed with scratch_knob missing from api/openapi.json"
fi
grep -q 'GET /v1/splits does not take scratch_knob' vocab.log || { cat vocab.log; fail "the contract's check failed for another reason"; }
echo "contract's check: fails, \"openapi.json: GET /v1/splits does not take scratch_knob\""
echo "input-recipe: ok"
