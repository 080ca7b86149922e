// Checks rendered manifests against the Kubernetes API's own schemas, offline: what
// `kubectl apply --dry-run=server` would refuse for its shape, without a cluster.
//
//   node deploy/tools/check-schemas.mjs NAME=FILE...   (FILE: what `kubectl kustomize` printed)
//
// Two checks per object, both from the Kubernetes OpenAPI as the kubernetes-models packages
// carry it (deploy/tools/package.json pins them; scripts/validate-deploy.sh installs them):
//   1. its kind's compiled JSON-schema validator: types, required fields, formats;
//   2. its kind's TypeScript type, with the object as a literal: TypeScript refuses a field the
//      type does not have, at any depth, which the validators let through (the OpenAPI does not
//      say additionalProperties: false). A misspelt `readinesProbe` fails here.
// Exits 1 listing every problem, each with its file and object.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));

/** The module with the model of a kind: Kubernetes' own groups in kubernetes-models, others by project. */
function modelModule(apiVersion, kind) {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  if (group === 'cert-manager.io') return `@kubernetes-models/cert-manager/${group}/${version}/${kind}`;
  const builtIn = !group.includes('.') || group.endsWith('.k8s.io');
  if (!builtIn) return undefined;
  return group === '' ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
}

function readObjects(name, file) {
  const objects = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${name}: ${file} is not YAML: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push({ source: name, value, label: `${name}: ${value.kind}/${value.metadata?.name}` });
  }
  return objects;
}

async function validateEach(objects) {
  const problems = [];
  for (const object of objects) {
    const { apiVersion, kind } = object.value;
    const specifier =
      typeof apiVersion === 'string' && typeof kind === 'string' ? modelModule(apiVersion, kind) : undefined;
    if (!specifier) {
      problems.push(`${object.label}: no schema for apiVersion ${apiVersion}, kind ${kind}`);
      continue;
    }
    let model;
    try {
      model = (await import(specifier))[kind];
    } catch {
      model = undefined;
    }
    if (typeof model !== 'function') {
      problems.push(`${object.label}: no schema for apiVersion ${apiVersion}, kind ${kind} (${specifier})`);
      continue;
    }
    object.specifier = specifier;
    try {
      new model(withoutLineBreaksInBytes(object.value)).validate();
    } catch (err) {
      problems.push(`${object.label}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/**
 * kustomize writes a generated Secret's base64 values over several lines; the API server's
 * decoder (Go's encoding/base64) skips line breaks, the validators' "byte" format does not.
 */
function withoutLineBreaksInBytes(value) {
  if (value.apiVersion !== 'v1' || value.kind !== 'Secret' || typeof value.data !== 'object' || value.data === null)
    return value;
  const data = Object.fromEntries(
    Object.entries(value.data).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/[\r\n]/g, '') : v]),
  );
  return { ...value, data };
}

/** Type-checks every object as a literal of its kind's interface, in one program held in memory. */
function typeCheck(objects) {
  const file = join(here, '__rendered_manifests__.ts');
  const lines = [];
  const objectOnLine = new Map();
  objects.forEach((object, i) => {
    if (!object.specifier) return;
    lines.push(`import type { I${object.value.kind} as T${i} } from '${object.specifier}';`);
  });
  objects.forEach((object, i) => {
    if (!object.specifier) return;
    objectOnLine.set(lines.length, object);
    lines.push(`export const object${i}: T${i} = ${JSON.stringify(object.value)};`);
  });
  const text = lines.join('\n') + '\n';
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? text : readFile.call(host, name));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
    if (!d.file || d.start === undefined) return message;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const object = d.file.fileName === file ? objectOnLine.get(line) : undefined;
    return object ? `${object.label}: ${message}` : `${d.file.fileName}:${line + 1}: ${message}`;
  });
}

const inputs = process.argv.slice(2);
if (inputs.length === 0) {
  console.error('usage: node deploy/tools/check-schemas.mjs NAME=FILE...');
  process.exit(2);
}
const objects = inputs.flatMap((input) => {
  const eq = input.indexOf('=');
  return eq > 0 ? readObjects(input.slice(0, eq), input.slice(eq + 1)) : readObjects(input, input);
});
const problems = [...(await validateEach(objects)), ...typeCheck(objects)];
for (const input of inputs) {
  const name = input.includes('=') ? input.slice(0, input.indexOf('=')) : input;
  const count = objects.filter((o) => o.source === name).length;
  console.log(`check-schemas: ${name}: ${count} objects`);
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`check-schemas: ${problem}`);
  console.error(`check-schemas: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log('check-schemas: every object matches its Kubernetes schema (validators and types)');
