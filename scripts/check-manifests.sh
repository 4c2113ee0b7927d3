#!/bin/sh
# SPDX-License-Identifier: AGPL-3.0-only
#
# What can be checked of docker/ on a machine without Docker or Kubernetes:
# the catalog in the Kubernetes ConfigMap loads and has the digest of the
# embedded one (so the two cannot drift apart), and the systemd unit passes
# `systemd-analyze verify` where that tool exists.
# usage: scripts/check-manifests.sh path/to/splitkd
set -eu
bin=$1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

awk '/^  catalog.json: \|$/ {on=1; next} on && /^---/ {exit} on {sub(/^    /, ""); print}' \
	docker/kubernetes.yaml > "$tmp"
want=$("$bin" --check-catalog api/catalog.json)
got=$("$bin" --check-catalog "$tmp")
echo "== manifests"
echo "embedded:  ${want#*: }"
echo "configmap: ${got#*: }"
[ "${want#*: }" = "${got#*: }" ] || { echo "manifests: FAILED: the ConfigMap catalog differs from api/catalog.json" >&2; exit 1; }
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
