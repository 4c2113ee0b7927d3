#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# The recipe "a new catalog field" (docs/DEVELOPING.md) checked on itself.
# In a scratch copy of the tree (the tracked files as they stand), a field
# is added through the schema table alone: one row in api/catalog.c and
# its member in api/catalog.h. Then the copy must build, `splitkd --diff`
# of two catalogs that differ in that field alone must list it and exit 1,
# the fuzz seeds' check (test_catalog) must fail until the key is in
# fuzz/catalog.dict, and pass once it is, and the page must show it: the
# copy's daemon, serving the changed catalog, answers GET /v1/targets with
# the field, and the page's own column code (catalogColumns in the
# /ui/app.js it serves, run by node) makes it a column of the targets'
# table, before notes as the table has it. Nothing outside the copy
# changes.
# usage: scripts/check-field-recipe.sh   (from anywhere; `make recipe-check`)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/splitkd-recipe-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "recipe-check: FAILED: $*" >&2; exit 1; }
(cd "$top" && git ls-files -z | xargs -0 tar cf -) | tar xf - -C "$scratch"
cd "$scratch"
echo "== recipe: a new catalog field (tdp_watts) in a scratch copy, $scratch"
# the row and the member, before notes: nothing else
sed -i 's|^\tTARGET_FIELD("notes", |\tTARGET_FIELD("tdp_watts", FIELD_U32, false, tdp_watts),\n&|' api/catalog.c
sed -i '/^struct catalog_target {/,/^};/ s|^\tconst char \*notes; |\tuint32_t tdp_watts;\n&|' api/catalog.h
grep -q 'TARGET_FIELD("tdp_watts"' api/catalog.c || fail "the row did not go in"
grep -q 'uint32_t tdp_watts;' api/catalog.h || fail "the member did not go in"
make -s build/splitkd build/tests/unit/test_catalog >build.log 2>&1 || { tail -20 build.log; fail "the copy does not build"; }
build/splitkd --dump-catalog >old.json
python3 - old.json new.json <<'PY'
import json, sys
cat = json.load(open(sys.argv[1]))
cat["targets"][0]["tdp_watts"] = 700
json.dump(cat, open(sys.argv[2], "w"))
PY
rc=0
build/splitkd --diff old.json new.json >diff.json || rc=$?
[ "$rc" -eq 1 ] || fail "--diff exited $rc for a change of tdp_watts alone: $(cat diff.json)"
grep -q '"field":"tdp_watts","from":null,"to":700' diff.json || fail "--diff does not list tdp_watts: $(cat diff.json)"
echo "--diff: exit 1, lists {\"field\":\"tdp_watts\",\"from\":null,\"to\":700}"
seeds='catalog/the_fuzz_seeds_follow_the_table_and_the_catalog'
if build/tests/unit/test_catalog --filter "$seeds" >seeds.log 2>&1; then
	fail "the seeds' check passed with tdp_watts missing from fuzz/catalog.dict"
fi
grep -q 'lacks the key tdp_watts' seeds.log || { cat seeds.log; fail "the seeds' check failed for another reason"; }
echo "seeds' check without the key: fails, \"fuzz/catalog.dict lacks the key tdp_watts\""
printf '"\\"tdp_watts\\""\n' >>fuzz/catalog.dict
build/tests/unit/test_catalog --filter "$seeds" >seeds.log 2>&1 || { cat seeds.log; fail "the seeds' check fails with the key in"; }
echo "seeds' check with the key in fuzz/catalog.dict: passes"
# the page: the copy's daemon with the changed catalog, its /v1/targets and
# its /ui/app.js's column code
build/splitkd --listen 127.0.0.1:0 --catalog new.json --access-log off 2>daemon.log &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$scratch"' EXIT
port=
for _ in $(seq 50); do
	port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' daemon.log)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat daemon.log; fail "the copy's daemon did not start"; }
python3 - "$port" <<'PY' || fail "the page does not show tdp_watts"
import json, subprocess, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
targets = json.load(urllib.request.urlopen(base + "/v1/targets"))["targets"]
assert targets[0].get("tdp_watts") == 700, f"/v1/targets lacks tdp_watts: {targets[0]}"
app = urllib.request.urlopen(base + "/ui/app.js").read().decode()
start = app.index("  function catalogColumns(")
end = app.index("  // end of columns")
js = app[start:end] + "\nconsole.log(JSON.stringify(catalogColumns(JSON.parse(process.argv[1]))));\n"
cols = json.loads(subprocess.run(["node", "-e", js, json.dumps(targets)], check=True,
                                 capture_output=True, text=True).stdout)
assert "tdp_watts" in cols, f"the page's columns lack tdp_watts: {cols}"
assert cols.index("tdp_watts") + 1 == cols.index("notes"), f"not in the table's order: {cols}"
print("page: /v1/targets carries tdp_watts, the page's columns are " + ", ".join(cols))
PY
echo "recipe-check: ok"
