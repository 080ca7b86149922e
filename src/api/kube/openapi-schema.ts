// A kind's schema as kube-apiserver publishes a CRD's: the CRD's openAPIV3Schema with the
// standard metadata, the group-version-kind it is the schema of, and the changes each dialect
// needs. The descriptions carry through, which is what `kubectl explain` prints.
//
//   v3  x-kubernetes-int-or-string stays and gains anyOf [integer, string] (the apiserver
//       "unfolds" it), so a client that knows no extension still reads the type.
//   v2  Swagger 2.0 has no anyOf/allOf/oneOf/not or nullable: they are dropped, and where
//       kubectl would then see an untyped field with children (nullable,
//       preserve-unknown-fields) the children go too. The v2 document drops defaults too.
import { children, type JsonSchema } from '../validation/schema.js';
import type { KubeKind } from './kinds.js';
import { LIST_META, OBJECT_META } from './openapi-meta.js';

export type OpenApiDialect = 'v2' | 'v3';

/** How a reference to a named schema is spelled in each dialect. */
export function refTo(dialect: OpenApiDialect): (name: string) => string {
  const prefix = dialect === 'v2' ? '#/definitions/' : '#/components/schemas/';
  return (name) => `${prefix}${name}`;
}

/** The name of a kind's schema: the group reversed, then version and kind (dev.fencer.v1.Job). */
export function definitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].filter((part) => part !== '').join('.');
}

/** Where a schema refers to another, with a description of its own. */
function described(dialect: OpenApiDialect, name: string, description: string): JsonSchema {
  const ref = refTo(dialect)(name);
  // An OpenAPI 3.0 $ref ignores its siblings; kube-apiserver wraps it in allOf to keep them.
  return dialect === 'v2' ? { description, $ref: ref } : { description, default: {}, allOf: [{ $ref: ref }] };
}

const TYPE_META: Record<'apiVersion' | 'kind', string> = {
  apiVersion: 'The version of the schema this representation of the object is in.',
  kind: 'The kind of the object, in CamelCase.',
};

/** The published schema of a kind's objects. */
export function kindSchema(kind: KubeKind, dialect: OpenApiDialect): JsonSchema {
  const base: JsonSchema = kind.schema ? structuredClone(kind.schema) : { type: 'object' };
  const schema = dialect === 'v2' ? toV2(base) : unfold(base);
  const own = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  const description = (field: string, fallback: string) =>
    typeof own[field]?.description === 'string' ? (own[field].description as string) : fallback;
  schema.properties = {
    ...own,
    apiVersion: { description: description('apiVersion', TYPE_META.apiVersion), type: 'string' },
    kind: { description: description('kind', TYPE_META.kind), type: 'string' },
    metadata: described(dialect, OBJECT_META, description('metadata', 'Standard object metadata.')),
  };
  schema['x-kubernetes-group-version-kind'] = [{ group: kind.group, version: kind.version, kind: kind.kind }];
  return schema;
}

/** The published schema of a kind's lists (JobList). */
export function listSchema(kind: KubeKind, dialect: OpenApiDialect): JsonSchema {
  return {
    description: `${kind.listKind} is a list of ${kind.kind}.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { description: TYPE_META.apiVersion, type: 'string' },
      kind: { description: TYPE_META.kind, type: 'string' },
      items: {
        description: `The ${kind.plural}.`,
        type: 'array',
        items: { $ref: refTo(dialect)(definitionName(kind.group, kind.version, kind.kind)) },
      },
      metadata: described(dialect, LIST_META, 'Standard list metadata.'),
    },
    'x-kubernetes-group-version-kind': [{ group: kind.group, version: kind.version, kind: kind.listKind }],
  };
}

const INT_OR_STRING = [{ type: 'integer' }, { type: 'string' }];

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return JSON.stringify(anyOf) === JSON.stringify(INT_OR_STRING);
}

/** Spells x-kubernetes-int-or-string out as anyOf, beside the extension (mutates). */
function unfold(schema: JsonSchema): JsonSchema {
  if (schema['x-kubernetes-int-or-string'] === true) {
    const allOf = schema.allOf as JsonSchema[] | undefined;
    const spelled = isIntOrStringAnyOf(schema.anyOf) || isIntOrStringAnyOf(allOf?.[0]?.anyOf);
    if (!spelled && schema.anyOf === undefined) schema.anyOf = structuredClone(INT_OR_STRING);
    else if (!spelled) schema.allOf = [{ anyOf: structuredClone(INT_OR_STRING) }, ...(allOf ?? [])];
  }
  for (const child of children(schema)) unfold(child);
  return schema;
}

/** What Swagger 2.0 and kubectl's v2 reader cope with (mutates). */
export function toV2(schema: JsonSchema): JsonSchema {
  for (const keyword of ['allOf', 'anyOf', 'oneOf', 'not']) delete schema[keyword];
  const nullable = schema.nullable === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (nullable) {
    delete schema.type;
    delete schema.nullable;
  }
  if (nullable || preserve) {
    delete schema.items;
    delete schema.properties;
  }
  if ((schema.type === 'array' && schema.items === undefined) || (preserve && schema.type === 'object'))
    delete schema.type;
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  if (Array.isArray(schema.required)) {
    // A field that may be null may be missing: v2 has no other way to say it.
    schema.required = (schema.required as string[]).filter((field) => properties[field]?.nullable !== true);
    if ((schema.required as string[]).length === 0) delete schema.required;
  }
  for (const child of children(schema)) toV2(child);
  return schema;
}

/** Removes every default (mutates): kube-apiserver publishes none in v2. */
export function pruneDefaults(schema: JsonSchema): JsonSchema {
  delete schema.default;
  for (const child of children(schema)) pruneDefaults(child);
  return schema;
}
