#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# The recipe "a new input" (docs/DEVELOPING.md) checked on itself, in a
# scratch copy of the tree (the tracked files as they stand):
#
# 1. an engine input, scratch_knob (a count from 1 to 64, default 7), by
#    one row at the end of ENGINE_INPUTS in policy/engine_inputs.h and the
#    port that reads it (vLLM's: its bit in VLLM_READS, and one term of
#    its answer that shows the value it was handed), nothing else;
# 2. a decision input of the LIST kind, scratch_lens (1 to 4 counts from 1
#    to 65536), by one row of VOCAB_PARAMS in api/vocab.h, nothing else.
#
# The files each step changed are listed, and must be those alone. Then
# the copy must build; its daemon must parse both inputs in GET
# /v1/splits, a POST body, a batch's query and an OFREP context (a value
# answered, a word refused as "<name> must be ...", where the tree's own
# daemon says it knows no such parameter or, in OFREP, ignores it); a
# value past scratch_knob's bound is refused by its row's bounds; the
# struct engine_shape vLLM's port receives holds scratch_knob, the given
# value or the row's default (its term, in every way in that answers an
# engine), and vLLM's answer and /v1/compare write it as a member; GET
# /v1/engines lists it with its bounds and default, and vLLM reading it;
# and the contract's check (tests/unit/test_vocab.c) must fail naming an
# input, since api/openapi.json does not say them yet. Nothing outside
# the copy changes.
# usage: scripts/check-input-recipe.sh   (from anywhere; `make recipe-check`)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/splitkd-input-recipe-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$scratch"' EXIT
fail() { echo "input-recipe: FAILED: $*" >&2; exit 1; }
(cd "$top" && git ls-files -z | xargs -0 tar cf -) | tar xf - -C "$scratch"
(cd "$top" && git ls-files) >"$scratch/.tracked"
cd "$scratch"
# the tracked files the copy holds changed, as a sorted list on one line
touched() {
	while read -r f; do
		cmp -s "$top/$f" "$scratch/$f" || echo "$f"
	done <"$scratch/.tracked" | sort | tr '\n' ' ' | sed 's/ $//'
}

echo "== recipe 1: an engine input (scratch_knob) by one row of policy/engine_inputs.h and the port that reads it, in $scratch"
row='	X(A, SCRATCH_KNOB, scratch_knob, U32, QUERY, (1, 64, 7, 0), ZERO_REFUSED, "a scratch count")'
last=$(grep -n '^	X(A, [A-Z_]*, ' policy/engine_inputs.h | tail -n 1 | cut -d: -f1)
[ -n "$last" ] || fail "no last row of ENGINE_INPUTS in policy/engine_inputs.h"
# the last row may take two lines: the table ends at the first line without a backslash
end=$(awk -v from="$last" 'NR >= from && !/\\$/ { print NR; exit }' policy/engine_inputs.h)
sed -i "${end}s|\$| \\\\\\
$row|" policy/engine_inputs.h
grep -qF "$row" policy/engine_inputs.h || fail "the row did not go in"
sed -i 's/ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE)$/ENGINE_IN_SEQ_LEN | ENGINE_IN_PAGE_SIZE | ENGINE_IN_SCRATCH_KNOB)/' policy/vllm.h
grep -q 'ENGINE_IN_SCRATCH_KNOB)$' policy/vllm.h || fail "VLLM_READS did not take the bit"
sed -i 's|^	engine_term(a, "use_v1", use_v1 ? 1 : 0);$|&\
	engine_term(a, "scratch_knob", s->scratch_knob);|' policy/vllm.c
grep -q '"scratch_knob", s->scratch_knob' policy/vllm.c || fail "vLLM's port does not read it"
one=$(touched)
echo "files the recipe touched: $one"
[ "$one" = "policy/engine_inputs.h policy/vllm.c policy/vllm.h" ] ||
	fail "an engine input took more than its row and its port: $one"

echo "== recipe 2: a decision input of the LIST kind (scratch_lens) by one row of api/vocab.h"
lrow='	X(SCRATCH_LENS, scratch_lens, LIST, DECIDE, (1, 65536, 0, 4))'
before=$(grep -n '^	X(ENGINE, engine, NAME, ENGINE, VOCAB_NONE) *\\$' api/vocab.h | cut -d: -f1)
[ -n "$before" ] || fail "no engine row in api/vocab.h"
sed -i "${before}i\\
$lrow \\\\" api/vocab.h
grep -qF "$lrow \\" api/vocab.h || fail "the list row did not go in"
two=$(touched | tr ' ' '\n' | grep -vxF -e policy/engine_inputs.h -e policy/vllm.c -e policy/vllm.h |
	tr '\n' ' ' | sed 's/ $//')
echo "files the recipe touched: $two"
[ "$two" = "api/vocab.h" ] || fail "a decision input took more than its row: $two"

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
probe() { # probe PORT WHO: each way in, each input: a value then a word
	python3 - "$1" "$2" <<'PY'
import json, sys, urllib.error, urllib.parse, urllib.request
base, who = f"http://127.0.0.1:{sys.argv[1]}", sys.argv[2]
q = {"target": "h100", "model": "qwen3.8-27b", "max_batch_size": 16}
e = {"target": "h100", "model": "llama-3.1-8b", "engine": "vllm-v0", "seq_len": 100000}

def call(path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)

def get(query, key, v):
    return call("/v1/splits?" + urllib.parse.urlencode(dict(query, **{key: v})))

def batch(query, key, v):
    status, answer = call("/v1/splits", {"queries": [dict(query, **{key: v})]})
    first = answer["results"][0] if status == 200 else answer
    return (400 if "error" in first else status), first.get("error", first)

def text(v):  # a list's value in a query string
    return ",".join(map(str, v)) if isinstance(v, list) else v

ways = {
    "GET": lambda query, key, v: get(query, key, text(v)),
    "POST": lambda query, key, v: call("/v1/splits", dict(query, **{key: v})),
    "batch": batch,
    "OFREP": lambda query, key, v: call("/ofrep/v1/evaluate/flags/num_splits", {"context": dict(query, **{key: v})}),
}
for key, query, value in [("scratch_knob", e, 3), ("scratch_lens", q, [1, 2, 65536])]:
    for way, ask in ways.items():
        number, word = ask(query, key, value), ask(query, key, "many")
        knob = number[1].get("terms", {}).get("scratch_knob") if way != "OFREP" else None
        print(who, key, way, number[0], word[0], json.dumps(word[1].get("detail") or word[1].get("errorDetails")),
              "term", knob)
# an engine's answer without the input: the row's default reaches the port
status, a = get(e, "cuda_graph", "false")
print(who, "default", status, "term", a.get("terms", {}).get("scratch_knob"), "member", a.get("scratch_knob"))
status, a = get(e, "scratch_knob", "3")
print(who, "member", status, a.get("scratch_knob"))
status, a = get(e, "scratch_knob", "65")
print(who, "bound", status, json.dumps(a.get("detail")))
status, a = batch(e, "scratch_knob", 65)  # the fast reader holds the bounds too
print(who, "batch-bound", status, json.dumps(a.get("detail")))
status, a = get(q, "scratch_lens", "1,2,3,4,5")
print(who, "length", status, json.dumps(a.get("detail")))
status, a = call("/v1/compare?" + urllib.parse.urlencode({k: v for k, v in dict(e, scratch_knob=5).items() if k != "engine"}))
print(who, "compare", status, a.get("scratch_knob"))
status, a = call("/v1/engines")
row = [x for x in a.get("inputs", []) if x["name"] == "scratch_knob"]
vllm = [x for x in a.get("engines", []) if x["name"] == "vllm-v0"]
print(who, "engines", status, json.dumps(row[0] if row else None), "vllm reads it:",
      bool(vllm) and "scratch_knob" in vllm[0]["reads"])
PY
}
start build/splitkd
probe "$port" copy >copy.txt || { cat copy.txt; fail "the copy's daemon did not answer"; }
kill $pid; wait $pid 2>/dev/null || true; pid=
start "$top/build/splitkd"
probe "$port" tree >tree.txt || { cat tree.txt; fail "the tree's daemon did not answer"; }
kill $pid; wait $pid 2>/dev/null || true; pid=
cat copy.txt tree.txt
for key in scratch_knob scratch_lens; do
	for way in GET POST batch OFREP; do
		grep -q "^copy $key $way 200 400 .*$key must be" copy.txt || fail "the copy's $way does not parse $key"
	done
	for way in GET POST batch; do
		grep -q "^tree $key $way .*$key" tree.txt || fail "the tree's own $way does not refuse $key"
		! grep -q "^tree $key $way 200 .*$key must be" tree.txt || fail "the tree's daemon knows $key"
	done
	grep -q "^tree $key OFREP 200 200 " tree.txt || fail "the tree's OFREP does not ignore $key, a context key it does not know"
done
for way in GET POST batch; do
	grep -q "^copy scratch_knob $way 200 .* term 3$" copy.txt || fail "vLLM's port was not handed scratch_knob=3 by $way"
done
grep -q '^copy default 200 term 7 member 7$' copy.txt || fail "the row's default did not reach the port and the answer"
grep -q '^copy member 200 3$' copy.txt || fail "vLLM's answer does not write scratch_knob"
grep -q '^copy bound 400 "scratch_knob must be from 1 to 64"$' copy.txt || fail "the row's bounds do not hold"
grep -q '^copy batch-bound 400 "scratch_knob must be from 1 to 64"$' copy.txt || fail "a batch's query passes the row's bounds"
grep -q '^copy length 400 "scratch_lens must be 1 to 4 plain decimals' copy.txt || fail "the list's length does not hold"
grep -q '^copy compare 200 5$' copy.txt || fail "/v1/compare does not say scratch_knob"
grep -q '^copy engines 200 {"name": "scratch_knob", "type": "integer", "minimum": 1, "maximum": 64, "default": 7, .* vllm reads it: True$' copy.txt ||
	fail "GET /v1/engines does not list scratch_knob, or vLLM reading it"
if build/tests/unit/test_vocab >vocab.log 2>&1; then
	fail "the contract's check passed with scratch_knob and scratch_lens missing from api/openapi.json"
fi
grep -q 'GET /v1/splits does not take scratch_' vocab.log || { cat vocab.log; fail "the contract's check failed for another reason"; }
echo "contract's check: fails, \"$(grep -o 'openapi.json: GET /v1/splits does not take scratch_[a-z]*' vocab.log | head -n 1)\""
echo "input-recipe: ok"
