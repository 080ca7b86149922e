// The apimachinery types fencer's OpenAPI documents refer to, named as kube-apiserver names
// them so that clients that know Kubernetes (kubectl explain, generated clients) recognise
// them: the metadata of objects and lists, and what the paths send and answer besides a kind.
// Only the fields fencer fills in or that a client may send are described.
import type { JsonSchema } from '../validation/schema.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const STATUS = `${META}.Status`;
export const PATCH = `${META}.Patch`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
const TIME = `${META}.Time`;
const MANAGED_FIELDS_ENTRY = `${META}.ManagedFieldsEntry`;
const OWNER_REFERENCE = `${META}.OwnerReference`;
const FIELDS_V1 = `${META}.FieldsV1`;

/** The description of the name, shared with the Name column of tables. */
export const NAME_DESCRIPTION =
  'The name of the object, unique among the objects of its kind in its namespace. Set when the object is created and never changed.';

const STRING_MAP = { type: 'object', additionalProperties: { type: 'string', default: '' } };

/**
 * The definitions, keyed by name. `ref(name)` spells a reference in the document's dialect:
 * `#/definitions/NAME` in OpenAPI v2, `#/components/schemas/NAME` in v3.
 */
export function metaDefinitions(ref: (name: string) => string): Record<string, JsonSchema> {
  const to = (name: string, description?: string): JsonSchema => ({
    ...(description ? { description } : {}),
    $ref: ref(name),
  });
  return {
    [OBJECT_META]: {
      description: 'Metadata every stored object has.',
      type: 'object',
      properties: {
        name: { description: NAME_DESCRIPTION, type: 'string' },
        generateName: {
          description:
            'A prefix from which the server makes a unique name when name is not given, by appending random characters.',
          type: 'string',
        },
        namespace: {
          description: 'The namespace the object lives in; empty for cluster-scoped kinds.',
          type: 'string',
        },
        labels: { description: 'String keys and values to select objects by (label selectors).', ...STRING_MAP },
        annotations: {
          description: 'String keys and values that tools keep on the object; not used to select it.',
          ...STRING_MAP,
        },
        uid: {
          description:
            "Unique across the object's lifetime and the cluster's: a new object of the same name has another uid.",
          type: 'string',
        },
        resourceVersion: {
          description:
            'An opaque version the server changes at every write; sent back on update for optimistic concurrency.',
          type: 'string',
        },
        generation: {
          description: 'Counts the changes of the desired state (spec).',
          type: 'integer',
          format: 'int64',
        },
        creationTimestamp: to(TIME, 'When the server created the object (RFC 3339, UTC).'),
        deletionTimestamp: to(TIME, 'When deletion was requested, while finalizers hold the object.'),
        deletionGracePeriodSeconds: {
          description: 'The grace period of a requested deletion.',
          type: 'integer',
          format: 'int64',
        },
        finalizers: {
          description: 'What must happen before the object is removed from storage.',
          type: 'array',
          items: { type: 'string', default: '' },
          'x-kubernetes-list-type': 'set',
        },
        ownerReferences: {
          description: 'The objects this one depends on; it is garbage-collected when they are gone.',
          type: 'array',
          items: { ...to(OWNER_REFERENCE), default: {} },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['uid'],
          'x-kubernetes-patch-merge-key': 'uid',
          'x-kubernetes-patch-strategy': 'merge',
        },
        managedFields: {
          description: 'Which manager (kubectl, a controller) set which fields, for server-side apply.',
          type: 'array',
          items: { ...to(MANAGED_FIELDS_ENTRY), default: {} },
          'x-kubernetes-list-type': 'atomic',
        },
      },
    },
    [LIST_META]: {
      description: 'Metadata of a list.',
      type: 'object',
      properties: {
        resourceVersion: {
          description: 'The version of the store the list was read at; a watch from it misses nothing.',
          type: 'string',
        },
        continue: {
          description: 'Set when the list was cut at limit: send it back to get the next page.',
          type: 'string',
        },
        remainingItemCount: {
          description: 'How many items the later pages hold, when the server knows.',
          type: 'integer',
          format: 'int64',
        },
      },
    },
    [TIME]: { description: 'A time in RFC 3339, to the second, in UTC.', type: 'string', format: 'date-time' },
    [FIELDS_V1]: { description: 'A set of fields in the FieldsV1 format of server-side apply.', type: 'object' },
    [MANAGED_FIELDS_ENTRY]: {
      description: 'The fields one manager set with one operation.',
      type: 'object',
      properties: {
        manager: { description: 'Who set the fields.', type: 'string' },
        operation: { description: 'Apply or Update.', type: 'string' },
        apiVersion: { description: 'The version of the object the fields are named in.', type: 'string' },
        time: to(TIME, 'When the fields last changed.'),
        fieldsType: { description: 'The format of fieldsV1: always FieldsV1.', type: 'string' },
        fieldsV1: to(FIELDS_V1, 'The fields.'),
        subresource: { description: 'The subresource written, e.g. status; empty for the object.', type: 'string' },
      },
    },
    [OWNER_REFERENCE]: {
      description: 'An object this one depends on, in the same namespace.',
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'uid'],
      properties: {
        apiVersion: { description: 'API version of the owner.', type: 'string', default: '' },
        kind: { description: 'Kind of the owner.', type: 'string', default: '' },
        name: { description: 'Name of the owner.', type: 'string', default: '' },
        uid: { description: 'UID of the owner.', type: 'string', default: '' },
        controller: { description: 'True for the owner that manages this object.', type: 'boolean' },
        blockOwnerDeletion: {
          description: 'Whether deleting the owner in the foreground waits for this object.',
          type: 'boolean',
        },
      },
      'x-kubernetes-map-type': 'atomic',
    },
    [STATUS]: {
      description: 'The answer of a call that returns no object: a deletion, or an error.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { ...to(LIST_META), default: {} },
        status: { description: 'Success or Failure.', type: 'string' },
        message: { description: 'What happened, for a person.', type: 'string' },
        reason: {
          description: 'What happened, as a CamelCase word a program can switch on, e.g. NotFound.',
          type: 'string',
        },
        code: { description: 'The HTTP status code.', type: 'integer', format: 'int32' },
        details: {
          description: 'The object the answer is about, and field-level causes.',
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    },
    [PATCH]: {
      description: 'A patch: a JSON Patch, a JSON merge patch or an apply configuration, by Content-Type.',
      type: 'object',
    },
    [DELETE_OPTIONS]: {
      description: 'Options of a deletion.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        dryRun: {
          description: 'All: check the deletion without making it.',
          type: 'array',
          items: { type: 'string', default: '' },
        },
        gracePeriodSeconds: { description: 'Seconds before the object is deleted.', type: 'integer', format: 'int64' },
        propagationPolicy: {
          description: 'Orphan, Background or Foreground: what becomes of dependents.',
          type: 'string',
        },
      },
    },
  };
}
