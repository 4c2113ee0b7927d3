#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# What can be checked of docker/ on a machine without Docker or Kubernetes:
# the catalogs in the Kubernetes ConfigMap load, today.json with the digest
# of the embedded one and before-928.json with the digest of the embedded
# one with every target legacy (so neither can drift), and the systemd unit passes
# `systemd-analyze verify` where that tool exists.
# usage: scripts/check-manifests.sh path/to/splitkd
set -eu
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one ConfigMap key's text: its lines up to the next key (or the end)
key() {
	awk -v k="  $1: |" '$0 == k {on=1; next} on && (/^---/ || /^  [^ ]/) {exit} on {sub(/^    /, ""); print}' \
		docker/kubernetes.yaml
}
key today.json > "$tmp/today.json"
key before-928.json > "$tmp/before-928.json"
sed 's/"attn_decode_splitk": "auto"/"attn_decode_splitk": "legacy"/' api/catalog.json > "$tmp/legacy.json"
echo "== manifests"
for pair in "api/catalog.json today.json" "$tmp/legacy.json before-928.json"; do
	want=$("$bin" --check-catalog "${pair% *}")
	got=$("$bin" --check-catalog "$tmp/${pair#* }")
	echo "${pair#* }: embedded ${want#*: }; configmap ${got#*: }"
	[ "${want#*: }" = "${got#*: }" ] || { echo "manifests: FAILED: the ConfigMap's ${pair#* } differs from ${pair% *}" >&2; exit 1; }
done
for f in docker/Dockerfile docker/compose.yaml docker/kubernetes.yaml docker/splitkd.service; do
	[ -s "$f" ] || { echo "manifests: FAILED: $f is missing" >&2; exit 1; }
done
if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
	/usr/bin/python3 - <<'PY'
import yaml
kinds = [d["kind"] for d in yaml.safe_load_all(open("docker/kubernetes.yaml")) if d]
assert kinds == ["ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"], kinds
assert "splitkd" in yaml.safe_load(open("docker/compose.yaml"))["services"]
# the catalog must be able to change under a running pod: a whole-volume
# mount (a subPath mount never updates) and the watch not turned off
dep = [d for d in yaml.safe_load_all(open("docker/kubernetes.yaml")) if d and d["kind"] == "Deployment"][0]
pod = dep["spec"]["template"]["spec"]
cm = {v["name"] for v in pod["volumes"] if "configMap" in v}
for c in pod["containers"]:
    for m in c.get("volumeMounts", []):
        assert not (m["name"] in cm and "subPath" in m), f"the ConfigMap mount {m} uses subPath: it never updates"
    args = c.get("args", [])
    assert "--catalog-check" not in args or args[args.index("--catalog-check") + 1] != "0", \
        "the Deployment turns the catalog watch off (--catalog-check 0)"

print("yaml: kubernetes.yaml and compose.yaml parse;", ", ".join(kinds) + "; the ConfigMap mount follows edits")
PY
fi
echo "manifests: ok"
