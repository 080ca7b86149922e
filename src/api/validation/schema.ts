// The CRDs in crds/ are the source of truth for what the API accepts: this module reads a
// CRD's openAPIV3Schema and compiles it with Ajv, after turning Kubernetes' structural
// dialect into plain JSON Schema and making it strict (unknown fields are errors, as with
// `kubectl apply --validate=strict`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { projectRoot } from '../../paths.js';
import { parseDateTime } from '../../domain/date-time.js';
import type { ManifestPath } from './manifest.js';

export type JsonSchema = { [keyword: string]: unknown };

export interface SchemaProblem {
  path: ManifestPath;
  message: string;
}

interface CustomResourceDefinition {
  spec: { versions: Array<{ name: string; schema?: { openAPIV3Schema?: JsonSchema } }> };
}

// Keywords Kubernetes adds to OpenAPI. They shape storage and merging, not validity, except
// int-or-string, which toApiSchema spells out as anyOf.
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

// A CRD may only constrain metadata.name and metadata.generateName; the apiserver validates
// the rest as the standard ObjectMeta. The API does the same with the fields fencer knows.
const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } };
const OBJECT_META: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    labels: STRING_MAP,
    annotations: STRING_MAP,
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: 'string' },
  },
};

/** The openAPIV3Schema of one version of the CRD in `file` (relative to the project root). */
export function readCrdSchema(file: string, version = 'v1'): JsonSchema {
  const crd = parse(readFileSync(join(projectRoot(), file), 'utf8')) as CustomResourceDefinition;
  const schema = crd.spec.versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  if (!schema) throw new Error(`${file} has no openAPIV3Schema for version ${version}`);
  return schema;
}

/**
 * The schema the API validates input with, from a CRD's schema (which is left untouched):
 * objects with `properties` refuse unknown fields unless they preserve them, int-or-string
 * becomes anyOf number|string, metadata is the standard ObjectMeta, and `status` accepts
 * anything, because it is fencer's to write: a user may send it back, and it is dropped.
 */
export function toApiSchema(crdSchema: JsonSchema): JsonSchema {
  const schema = strict(structuredClone(crdSchema));
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties?.metadata) {
    const own = (properties.metadata.properties as Record<string, JsonSchema> | undefined) ?? {};
    const meta = strict(structuredClone(OBJECT_META));
    for (const field of ['name', 'generateName']) {
      if (own[field]) (meta.properties as Record<string, JsonSchema>)[field] = { ...own[field], type: 'string' };
    }
    properties.metadata = meta;
  }
  if (properties?.status) properties.status = {};
  return schema;
}

function strict(schema: JsonSchema): JsonSchema {
  if (schema['x-kubernetes-int-or-string'] === true && schema.anyOf === undefined) {
    schema.anyOf = [{ type: 'number' }, { type: 'string' }];
  }
  // OpenAPI 3.0, which CRDs speak, marks a bound exclusive with a boolean beside it; JSON Schema
  // writes the bound itself as exclusiveMinimum/exclusiveMaximum.
  for (const [bound, exclusive] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    if (typeof schema[exclusive] !== 'boolean') continue;
    if (schema[exclusive] === true) {
      schema[exclusive] = schema[bound];
      delete schema[bound];
    } else {
      delete schema[exclusive];
    }
  }
  if (
    schema.properties !== undefined &&
    schema.additionalProperties === undefined &&
    schema['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    schema.additionalProperties = false;
  }
  for (const child of children(schema)) strict(child);
  return schema;
}

/** A schema's direct subschemas (properties, items, additionalProperties, not, anyOf/allOf/oneOf). */
export function children(schema: JsonSchema): JsonSchema[] {
  const found: unknown[] = [
    ...Object.values((schema.properties as Record<string, unknown> | undefined) ?? {}),
    schema.additionalProperties,
    schema.items,
    schema.not,
    ...[schema.anyOf, schema.allOf, schema.oneOf].flatMap((list) => (Array.isArray(list) ? list : [])),
  ];
  return found.filter((s): s is JsonSchema => s !== null && typeof s === 'object' && !Array.isArray(s));
}

const validators = new Map<string, ValidateFunction>();

/** The compiled API schema of a CRD file, compiled once per process. */
export function crdValidator(file: string, version = 'v1'): ValidateFunction {
  const key = `${file}#${version}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = newAjv().compile(toApiSchema(readCrdSchema(file, version)));
    validators.set(key, validate);
  }
  return validate;
}

export function jobValidator(): ValidateFunction {
  return crdValidator('crds/job.yaml');
}

export function workflowValidator(): ValidateFunction {
  return crdValidator('crds/workflow.yaml');
}

export function queueValidator(): ValidateFunction {
  return crdValidator('crds/queue.yaml');
}

export function cronJobValidator(): ValidateFunction {
  return crdValidator('crds/cronjob.yaml');
}

export function resourceQuotaValidator(): ValidateFunction {
  return crdValidator('crds/resourcequota.yaml');
}

function newAjv(): Ajv {
  // verbose: errors carry the schema and data, which the messages below quote.
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true });
  ajv.addVocabulary(KUBERNETES_KEYWORDS);
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseDateTime(text) !== null });
  return ajv;
}

/** Everything `validate` finds wrong with `object`, as paths into it with Kubernetes-like messages. */
export function schemaProblems(validate: ValidateFunction, object: unknown): SchemaProblem[] {
  if (validate(object)) return [];
  const errors = validate.errors ?? [];
  return errors
    .filter((error) => !/\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath)) // the anyOf error says it better
    .map((error) => problem(error, object));
}

const FORMATS: Record<string, string> = { 'date-time': 'an RFC 3339 date-time (e.g. 2026-01-02T15:04:05Z)' };

const COMPARISON: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'greater than', '<': 'less than' };

function problem(error: ErrorObject, root: unknown): SchemaProblem {
  const path = pointerToPath(error.instancePath, root);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: [...path, String(params.missingProperty)], message: 'Required value' };
    case 'additionalProperties':
      return { path: [...path, String(params.additionalProperty)], message: 'unknown field' };
    case 'type':
      return { path, message: `must be ${withArticle(String(params.type))}, not ${withArticle(typeOf(error.data))}` };
    case 'anyOf':
    case 'oneOf': {
      const types = (error.schema as JsonSchema[]).map((branch) => branch.type).filter((t) => typeof t === 'string');
      if (types.length === 0) return { path, message: error.message ?? 'is invalid' };
      return {
        path,
        message: `must be ${types.map(withArticle).join(' or ')}, not ${withArticle(typeOf(error.data))}`,
      };
    }
    case 'minLength':
    case 'minItems':
      return {
        path,
        message:
          params.limit === 1
            ? 'must not be empty'
            : `must have at least ${params.limit} ${error.keyword === 'minLength' ? 'characters' : 'items'}`,
      };
    case 'format':
      return {
        path,
        message: `${JSON.stringify(error.data)} is not ${FORMATS[String(params.format)] ?? `a ${params.format}`}`,
      };
    case 'enum':
      return {
        path,
        message: `${JSON.stringify(error.data)} is not one of ${(params.allowedValues as unknown[]).join(', ')}`,
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, message: `must be ${COMPARISON[String(params.comparison)] ?? params.comparison} ${params.limit}` };
    default:
      return { path, message: error.message ?? `fails ${error.keyword}` };
  }
}

/** A JSON pointer (`/spec/resources/cpu`) as path segments, array indices as numbers. */
function pointerToPath(pointer: string, root: unknown): ManifestPath {
  if (pointer === '') return [];
  const path: ManifestPath = [];
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path.push(Number(key));
      node = node[Number(key)];
    } else {
      path.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`;
}
