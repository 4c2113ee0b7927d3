// SPDX-License-Identifier: AGPL-3.0-only
//
// Prints docker/kubernetes.yaml as `podman kube play` can run it on one
// host, with the two edits that needs and no more:
//  - podman 4.3 publishes every containerPort on the host (0.0.0.0, the same
//    port number), so the Deployment gets one replica (a second could not
//    bind the port) and its port is published on 127.0.0.1:HOST_PORT only;
//  - podman 4.3 fails on a Secret volume whose secret does not exist, even
//    one marked optional (as the TLS Secret is: the file's default serves
//    plain HTTP), so an optional Secret volume and its mount are dropped.
// Everything else (ConfigMap, mounts, args, security context, probes, the
// Service, PDB and HPA that podman ignores) is the file's own.
// usage: node tests/container/kube-local.js FILE.yaml HOST_PORT > out.yaml
"use strict";
const fs = require("fs");
const YAML = require("yaml");

const [file, hostPort] = process.argv.slice(2);
if (!file || !/^[0-9]+$/.test(hostPort || "")) {
  console.error("usage: node kube-local.js FILE.yaml HOST_PORT");
  process.exit(2);
}
const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
let edited = 0;
for (const doc of docs) {
  const o = doc.toJS();
  if (!o || o.kind !== "Deployment") {
    continue;
  }
  doc.setIn(["spec", "replicas"], 1);
  const volumes = doc.getIn(["spec", "template", "spec", "volumes"]);
  const optional = new Set();
  for (const v of volumes ? [...volumes.items] : []) {
    if (v.getIn(["secret", "optional"]) === true) {
      optional.add(v.get("name"));
      volumes.delete(volumes.items.indexOf(v));
    }
  }
  const containers = doc.getIn(["spec", "template", "spec", "containers"]);
  containers.items.forEach((c) => {
    const mounts = c.get("volumeMounts");
    for (const m of mounts ? [...mounts.items] : []) {
      if (optional.has(m.get("name"))) {
        mounts.delete(mounts.items.indexOf(m));
      }
    }
    const ports = c.get("ports");
    (ports ? ports.items : []).forEach((p) => {
      p.set("hostIP", "127.0.0.1");
      p.set("hostPort", Number(hostPort));
      edited++;
    });
  });
}
if (edited !== 1) {
  console.error(`kube-local: expected one container port in one Deployment, found ${edited}`);
  process.exit(1);
}
process.stdout.write(docs.map((d) => d.toString()).join(""));
