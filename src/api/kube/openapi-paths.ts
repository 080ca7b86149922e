// The paths of fencer's resources in its OpenAPI documents, as kube-apiserver lays out a CRD's.
// Clients read more than schemas here: kubectl looks up the PATCH operation of a kind (by its
// x-kubernetes-group-version-kind) for a fieldValidation parameter, and when it finds one it
// leaves validation to the server instead of validating against /openapi/v2 itself. Only the
// operations of a kind's verbs are listed.
import type { KubeKind, Verb } from './kinds.js';
import { DELETE_OPTIONS, PATCH, STATUS } from './openapi-meta.js';
import { definitionName, refTo, type OpenApiDialect } from './openapi-schema.js';
import type { JsonSchema } from '../validation/schema.js';

type Action = 'list' | 'post' | 'deletecollection' | 'get' | 'put' | 'delete' | 'patch';
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface Operation {
  path: string;
  method: Method;
  action: Action;
  operationId: string;
  description: string;
  kind: KubeKind;
  /** What the request body holds, if it has one. */
  body: 'object' | 'patch' | 'deleteOptions' | null;
  /** What a success answers with. */
  answer: 'object' | 'list' | 'status';
}

const QUERY_PARAMETERS: Record<string, { type: 'string' | 'integer' | 'boolean'; description: string }> = {
  pretty: { type: 'string', description: "If 'true', the answer is indented." },
  dryRun: {
    type: 'string',
    description: 'All: check the request and answer as if it were made, without storing anything.',
  },
  fieldManager: { type: 'string', description: 'The name of the actor making the change, recorded in managedFields.' },
  fieldValidation: {
    type: 'string',
    description:
      'What to do with unknown or duplicate fields: Strict refuses the request, Warn and Ignore accept it (Warn with a warning).',
  },
  force: { type: 'boolean', description: 'For apply patches: take over fields other managers own.' },
  labelSelector: { type: 'string', description: 'Only objects whose labels match, e.g. app=web,tier!=db.' },
  fieldSelector: { type: 'string', description: 'Only objects whose fields match, e.g. status.phase=Running.' },
  limit: { type: 'integer', description: 'At most this many items; metadata.continue then names the next page.' },
  continue: { type: 'string', description: 'The continue token of the previous page.' },
  resourceVersion: { type: 'string', description: 'Read at (or from, for a watch) this version of the store.' },
  watch: { type: 'boolean', description: 'Stream changes (ADDED, MODIFIED, DELETED) instead of answering a list.' },
  allowWatchBookmarks: {
    type: 'boolean',
    description: 'Let a watch send BOOKMARK events that carry only a resourceVersion.',
  },
  timeoutSeconds: { type: 'integer', description: 'End a list or watch after this many seconds.' },
  gracePeriodSeconds: { type: 'integer', description: 'Seconds before the object is deleted.' },
  propagationPolicy: { type: 'string', description: 'Orphan, Background or Foreground: what becomes of dependents.' },
};

const LIST = [
  'labelSelector',
  'fieldSelector',
  'limit',
  'continue',
  'resourceVersion',
  'watch',
  'allowWatchBookmarks',
  'timeoutSeconds',
];
const WRITE = ['dryRun', 'fieldManager', 'fieldValidation'];
const DELETE = ['dryRun', 'gracePeriodSeconds', 'propagationPolicy'];

const PARAMETERS_BY_ACTION: Record<Action, string[]> = {
  list: LIST,
  get: ['resourceVersion'],
  post: WRITE,
  put: WRITE,
  patch: [...WRITE, 'force'],
  delete: DELETE,
  deletecollection: [...DELETE, ...LIST],
};

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

const SUCCESS_CODES: Record<Action, string[]> = {
  list: ['200'],
  get: ['200'],
  post: ['200', '201', '202'],
  put: ['200', '201'],
  patch: ['200', '201'],
  delete: ['200', '202'],
  deletecollection: ['200'],
};

type Place = 'allNamespaces' | 'collection' | 'object' | 'status';

/** A route kube-apiserver registers for a CRD, listed when the kind (or its status) has `verb`. */
interface Route {
  verb: Verb;
  at: Place;
  method: Method;
  action: Action;
  /** The verb of the operation id: read, replace, ... */
  id: string;
  describe: (kind: string) => string;
  body: Operation['body'];
  answer: Operation['answer'];
}

const ROUTES: readonly Route[] = [
  {
    verb: 'list',
    at: 'allNamespaces',
    method: 'get',
    action: 'list',
    id: 'list',
    describe: (k) => `list objects of kind ${k}`,
    body: null,
    answer: 'list',
  },
  {
    verb: 'list',
    at: 'collection',
    method: 'get',
    action: 'list',
    id: 'list',
    describe: (k) => `list objects of kind ${k}`,
    body: null,
    answer: 'list',
  },
  {
    verb: 'create',
    at: 'collection',
    method: 'post',
    action: 'post',
    id: 'create',
    describe: (k) => `create a ${k}`,
    body: 'object',
    answer: 'object',
  },
  {
    verb: 'deletecollection',
    at: 'collection',
    method: 'delete',
    action: 'deletecollection',
    id: 'deleteCollection',
    describe: (k) => `delete collection of ${k}`,
    body: 'deleteOptions',
    answer: 'status',
  },
  {
    verb: 'get',
    at: 'object',
    method: 'get',
    action: 'get',
    id: 'read',
    describe: (k) => `read the specified ${k}`,
    body: null,
    answer: 'object',
  },
  {
    verb: 'update',
    at: 'object',
    method: 'put',
    action: 'put',
    id: 'replace',
    describe: (k) => `replace the specified ${k}`,
    body: 'object',
    answer: 'object',
  },
  {
    verb: 'delete',
    at: 'object',
    method: 'delete',
    action: 'delete',
    id: 'delete',
    describe: (k) => `delete a ${k}`,
    body: 'deleteOptions',
    answer: 'status',
  },
  {
    verb: 'patch',
    at: 'object',
    method: 'patch',
    action: 'patch',
    id: 'patch',
    describe: (k) => `partially update the specified ${k}`,
    body: 'patch',
    answer: 'object',
  },
  {
    verb: 'get',
    at: 'status',
    method: 'get',
    action: 'get',
    id: 'read',
    describe: (k) => `read status of the specified ${k}`,
    body: null,
    answer: 'object',
  },
  {
    verb: 'update',
    at: 'status',
    method: 'put',
    action: 'put',
    id: 'replace',
    describe: (k) => `replace status of the specified ${k}`,
    body: 'object',
    answer: 'object',
  },
  {
    verb: 'patch',
    at: 'status',
    method: 'patch',
    action: 'patch',
    id: 'patch',
    describe: (k) => `partially update status of the specified ${k}`,
    body: 'patch',
    answer: 'object',
  },
];

/** The operations of one kind, in the order kube-apiserver registers a CRD's routes. */
export function operations(kind: KubeKind): Operation[] {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  const collection = kind.namespaced ? `${base}/namespaces/{namespace}/${kind.plural}` : `${base}/${kind.plural}`;
  const path: Record<Place, string> = {
    allNamespaces: `${base}/${kind.plural}`,
    collection,
    object: `${collection}/{name}`,
    status: `${collection}/{name}/status`,
  };
  const scoped = `${kind.namespaced ? 'Namespaced' : ''}${kind.kind}`;
  const idSuffix: Record<Place, string> = {
    allNamespaces: `${kind.kind}ForAllNamespaces`,
    collection: scoped,
    object: scoped,
    status: `${scoped}Status`,
  };
  const served = (route: Route) =>
    route.at === 'status'
      ? (kind.statusVerbs ?? []).includes(route.verb)
      : kind.verbs.includes(route.verb) && (route.at !== 'allNamespaces' || kind.namespaced);
  return ROUTES.filter(served).map((route) => ({
    path: path[route.at],
    method: route.method,
    action: route.action,
    operationId: `${route.id}${operationPrefix(kind)}${idSuffix[route.at]}`,
    description: route.describe(kind.kind),
    kind,
    body: route.body,
    answer: route.answer,
  }));
}

/** fencer.dev/v1 → FencerDevV1, as kube-apiserver prefixes a group's operation ids. */
function operationPrefix(kind: KubeKind): string {
  return [...kind.group.split('.'), kind.version]
    .filter((part) => part !== '')
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('');
}

function tagOf(kind: KubeKind): string {
  const [first = '', ...rest] = kind.group.split('.');
  const group = first + rest.map((part) => part[0]?.toUpperCase() + part.slice(1)).join('');
  return group === '' ? `core_${kind.version}` : `${group}_${kind.version}`;
}

/** The paths object of `kinds` in one dialect, keys sorted. */
export function paths(kinds: readonly KubeKind[], dialect: OpenApiDialect): Record<string, Record<string, JsonSchema>> {
  const result: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of kinds.flatMap(operations)) {
    const item = (result[operation.path] ??= {});
    item[operation.method] = dialect === 'v2' ? operationV2(operation) : operationV3(operation);
  }
  return Object.fromEntries(Object.entries(result).sort(([a], [b]) => a.localeCompare(b)));
}

function answerSchema(operation: Operation, dialect: OpenApiDialect): JsonSchema {
  const { kind } = operation;
  const name =
    operation.answer === 'status'
      ? STATUS
      : definitionName(kind.group, kind.version, operation.answer === 'list' ? kind.listKind : kind.kind);
  return { $ref: refTo(dialect)(name) };
}

function bodySchema(operation: Operation, dialect: OpenApiDialect): JsonSchema {
  const name =
    operation.body === 'patch'
      ? PATCH
      : operation.body === 'deleteOptions'
        ? DELETE_OPTIONS
        : definitionName(operation.kind.group, operation.kind.version, operation.kind.kind);
  return { $ref: refTo(dialect)(name) };
}

function pathParameters(operation: Operation): Array<{ name: string; description: string }> {
  return [
    ...(operation.path.includes('{name}') ? [{ name: 'name', description: `name of the ${operation.kind.kind}` }] : []),
    ...(operation.path.includes('{namespace}')
      ? [{ name: 'namespace', description: 'object name and auth scope, such as for teams and projects' }]
      : []),
  ];
}

function queryParameters(operation: Operation): Array<{ name: string; type: string; description: string }> {
  return ['pretty', ...PARAMETERS_BY_ACTION[operation.action]].map((name) => ({
    name,
    ...(QUERY_PARAMETERS[name] as (typeof QUERY_PARAMETERS)[string]),
  }));
}

function extensions(operation: Operation): JsonSchema {
  const { kind } = operation;
  return {
    'x-kubernetes-action': operation.action,
    'x-kubernetes-group-version-kind': { group: kind.group, version: kind.version, kind: kind.kind },
  };
}

function operationV3(operation: Operation): JsonSchema {
  const answer = { 'application/json': { schema: answerSchema(operation, 'v3') } };
  const bodyTypes = operation.body === 'patch' ? PATCH_TYPES : ['application/json', 'application/yaml'];
  return {
    tags: [tagOf(operation.kind)],
    description: operation.description,
    operationId: operation.operationId,
    parameters: [
      ...pathParameters(operation).map((p) => ({
        ...p,
        in: 'path',
        required: true,
        schema: { type: 'string', uniqueItems: true },
      })),
      ...queryParameters(operation).map(({ name, type, description }) => ({
        name,
        in: 'query',
        description,
        schema: { type, uniqueItems: true },
      })),
    ],
    ...(operation.body
      ? {
          requestBody: {
            content: Object.fromEntries(bodyTypes.map((type) => [type, { schema: bodySchema(operation, 'v3') }])),
            required: operation.body !== 'deleteOptions',
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(
        SUCCESS_CODES[operation.action].map((code) => [code, { description: STATUS_TEXT[code], content: answer }]),
      ),
      '401': { description: 'Unauthorized' },
    },
    ...extensions(operation),
  };
}

function operationV2(operation: Operation): JsonSchema {
  const bodyTypes = operation.body === 'patch' ? PATCH_TYPES : ['application/json', 'application/yaml'];
  return {
    description: operation.description,
    ...(operation.body ? { consumes: bodyTypes } : {}),
    produces: ['application/json'],
    tags: [tagOf(operation.kind)],
    operationId: operation.operationId,
    parameters: [
      ...pathParameters(operation).map((p) => ({
        ...p,
        in: 'path',
        required: true,
        type: 'string',
        uniqueItems: true,
      })),
      ...queryParameters(operation).map(({ name, type, description }) => ({
        name,
        in: 'query',
        description,
        type,
        uniqueItems: true,
      })),
      ...(operation.body
        ? [
            {
              name: 'body',
              in: 'body',
              required: operation.body !== 'deleteOptions',
              schema: bodySchema(operation, 'v2'),
            },
          ]
        : []),
    ],
    responses: {
      ...Object.fromEntries(
        SUCCESS_CODES[operation.action].map((code) => [
          code,
          { description: STATUS_TEXT[code], schema: answerSchema(operation, 'v2') },
        ]),
      ),
      '401': { description: 'Unauthorized' },
    },
    ...extensions(operation),
  };
}

const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };
