// fencer's OpenAPI documents, as kube-apiserver serves them:
//
//   GET /openapi/v3                    the index: one entry per group version, each with a
//                                      URL that carries the hash of its document
//   GET /openapi/v3/apis/fencer.dev/v1 OpenAPI 3.0: paths and components.schemas (what
//                                      kubectl explain and kubectl's validation read)
//   GET /openapi/v2                    Swagger 2.0 of everything, in JSON
//
// A client caches a v3 document by the hash in its URL, so the hash is of the content: the
// same CRDs give the same URL across replicas and restarts, and a changed CRD a new one.
import { createHash } from 'node:crypto';
import type { JsonSchema } from '../validation/schema.js';
import { groupVersionOf, type KubeKind } from './kinds.js';
import { metaDefinitions } from './openapi-meta.js';
import { paths } from './openapi-paths.js';
import { definitionName, kindSchema, listSchema, pruneDefaults, refTo, type OpenApiDialect } from './openapi-schema.js';

export interface OpenApiV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

const INFO = { title: 'fencer', version: 'v1' };

/** The schemas of `kinds` and their lists, with the metadata they refer to, names sorted. */
function schemas(kinds: readonly KubeKind[], dialect: OpenApiDialect): Record<string, JsonSchema> {
  const all: Record<string, JsonSchema> = { ...metaDefinitions(refTo(dialect)) };
  for (const kind of kinds) {
    all[definitionName(kind.group, kind.version, kind.kind)] = kindSchema(kind, dialect);
    all[definitionName(kind.group, kind.version, kind.listKind)] = listSchema(kind, dialect);
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
}

/** GET /openapi/v3/PATH for PATH `apis/GROUP/VERSION` (or `api/v1`), or null when nothing is served there. */
export function openApiV3(kinds: readonly KubeKind[], path: string): JsonSchema | null {
  const served = kinds.filter((k) => v3PathOf(k) === path);
  if (served.length === 0) return null;
  return { openapi: '3.0.0', info: INFO, paths: paths(served, 'v3'), components: { schemas: schemas(served, 'v3') } };
}

/** GET /openapi/v3: each group version of `kinds` with the URL of its current document. */
export function openApiV3Index(kinds: readonly KubeKind[]): OpenApiV3Index {
  const index: OpenApiV3Index = { paths: {} };
  for (const path of new Set(kinds.map(v3PathOf))) {
    const document = openApiV3(kinds, path) as JsonSchema;
    index.paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${documentHash(document)}` };
  }
  return index;
}

/** GET /openapi/v2: Swagger 2.0 with every kind, without defaults (kube-apiserver prunes them). */
export function openApiV2(kinds: readonly KubeKind[]): JsonSchema {
  const definitions = schemas(kinds, 'v2');
  for (const schema of Object.values(definitions)) pruneDefaults(schema);
  return { swagger: '2.0', info: INFO, paths: paths(kinds, 'v2'), definitions };
}

/** The hash a document is cached by: SHA-512 of its JSON, in upper-case hex as kube-apiserver writes it. */
export function documentHash(document: unknown): string {
  return createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase();
}

function v3PathOf(kind: KubeKind): string {
  return kind.group === '' ? `api/${kind.version}` : `apis/${groupVersionOf(kind)}`;
}
