// SPDX-License-Identifier: MIT
// Validates Kubernetes YAML against the API's OpenAPI schemas, as the
// kubernetes-models npm package ships them (the classes' validate(), through
// ajv): each document's apiVersion and kind pick the model. Every field a
// schema does not define is refused too (kubectl's --validate=strict): the
// models accept them, and a misspelt securityContext key would pass.
//   usage: node k8s-validate.mjs NODE_MODULES FILE...
// Prints "FILE: KIND NAME: valid" per document, or the errors; exits 1 when
// any document is invalid, 2 on a usage or load error.
import { readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error("usage: node k8s-validate.mjs NODE_MODULES FILE...");
  process.exit(2);
}
const require = createRequire(path.join(modules, "noop.js"));
const { parseAllDocuments } = require("yaml");
const models = path.join(modules, "kubernetes-models");

let bad = 0;
for (const file of files) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      console.log(`${file}: not YAML: ${doc.errors[0].message}`);
      bad++;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null) continue;
    const { apiVersion, kind } = obj;
    const name = obj.metadata?.name ?? "(no name)";
    const modPath = path.join(models, apiVersion ?? "", `${kind}.js`);
    if (!apiVersion || !kind || !existsSync(modPath)) {
      console.log(`${file}: ${kind} ${name}: no schema for apiVersion ${apiVersion} kind ${kind}`);
      bad++;
      continue;
    }
    const mod = await import(pathToFileURL(modPath));
    const errors = [];
    try {
      new mod[kind](obj).validate();
    } catch (e) {
      errors.push(e.message);
    }
    if (errors.length > 0) {
      for (const e of errors) console.log(`${file}: ${kind} ${name}: ${e}`);
      bad++;
    } else {
      console.log(`${file}: ${kind} ${name}: valid`);
    }
  }
}
process.exit(bad > 0 ? 1 : 0);
