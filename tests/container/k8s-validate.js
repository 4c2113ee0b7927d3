// SPDX-License-Identifier: AGPL-3.0-only
//
// Validates every object of Kubernetes YAML files without a cluster, twice:
//  1. kubernetes-models: the object against the JSON schema generated from
//     Kubernetes' own OpenAPI description (types, required fields, enums,
//     formats). Those schemas allow fields they do not name, so
//  2. TypeScript with kubernetes-types: each object as a typed object
//     literal, where a field the API does not have (`readinesProbe`) is an
//     error, as it is for an API server under kubectl's strict validation.
// Versions are pinned in package.json / package-lock.json (`npm ci`).
//
// usage: node tests/container/k8s-validate.js FILE.yaml...
// Prints one line per object; exits 1 on the first file with an invalid
// object, 2 on a usage or parse error.
"use strict";
const fs = require("fs");
const path = require("path");
const YAML = require("yaml");
const ts = require("typescript");

// "apps/v1" -> kubernetes-types/apps/v1, "v1" -> core/v1,
// "networking.k8s.io/v1" -> networking/v1
function typesModule(apiVersion) {
  const parts = apiVersion.split("/");
  if (parts.length === 1) {
    return `kubernetes-types/core/${parts[0]}`;
  }
  return `kubernetes-types/${parts[0].split(".")[0]}/${parts[1]}`;
}

function schemaErrors(obj) {
  let mod;
  try {
    mod = require(`kubernetes-models/${obj.apiVersion}`);
  } catch (e) {
    return [`no schema for apiVersion ${obj.apiVersion}`];
  }
  const Model = mod[obj.kind];
  if (typeof Model !== "function") {
    return [`no schema for kind ${obj.kind} in ${obj.apiVersion}`];
  }
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

// One program for every object: a .ts file that declares each one with its
// type, the JSON pretty-printed so that an error's line names the field.
function fieldErrors(objects) {
  const dir = fs.mkdtempSync(path.join(require("os").tmpdir(), "k8s-validate-"));
  const file = path.join(dir, "objects.ts");
  const src = objects
    .map((o, i) => `import type { ${o.kind} as T${i} } from "${typesModule(o.apiVersion)}";\n` +
      `export const object${i}: T${i} = ${JSON.stringify(o, null, 2)};\n`)
    .join("\n");
  fs.writeFileSync(file, src);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    typeRoots: [],
    types: [],
    baseUrl: __dirname,
    paths: { "kubernetes-types/*": [path.join(__dirname, "node_modules/kubernetes-types/*")] },
    moduleResolution: ts.ModuleResolutionKind.Node10,
  });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
    if (!d.file) {
      return { index: -1, text };
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const before = src.split("\n").slice(0, line + 1).join("\n");
    const index = (before.match(/^export const object/gm) || []).length - 1;
    return { index, text: `${text} (at: ${src.split("\n")[line].trim()})` };
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return errors;
}

function main(files) {
  if (files.length === 0) {
    console.error("usage: node k8s-validate.js FILE.yaml...");
    return 2;
  }
  let failed = false;
  for (const f of files) {
    let objects;
    try {
      objects = YAML.parseAllDocuments(fs.readFileSync(f, "utf8")).map((d) => {
        if (d.errors.length > 0) {
          throw new Error(d.errors[0].message);
        }
        return d.toJS();
      }).filter((o) => o !== null);
    } catch (e) {
      console.error(`${f}: does not parse: ${e.message}`);
      return 2;
    }
    const bad = objects.filter((o) => typeof o.apiVersion !== "string" || typeof o.kind !== "string");
    if (bad.length > 0 || objects.length === 0) {
      console.error(`${f}: ${objects.length === 0 ? "no object" : "an object without apiVersion and kind"}`);
      return 2;
    }
    const fieldErrs = fieldErrors(objects);
    objects.forEach((o, i) => {
      const errs = schemaErrors(o).concat(fieldErrs.filter((e) => e.index === i).map((e) => e.text));
      const name = `${o.apiVersion} ${o.kind} ${o.metadata && o.metadata.name}`;
      console.log(`${f}: ${name}: ${errs.length === 0 ? "valid" : "INVALID"}`);
      errs.forEach((e) => console.log(`  ${e}`));
      failed = failed || errs.length > 0;
    });
    fieldErrs.filter((e) => e.index < 0).forEach((e) => {
      console.log(`${f}: ${e.text}`);
      failed = true;
    });
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
