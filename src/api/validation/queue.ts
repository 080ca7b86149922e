// Queue and ResourceQuota manifests into the requests the store writes, or one ValidationError
// that lists every problem with its path and line, as for a Job (./job.ts, whose checks of the
// object's identity and metadata these share). Both kinds are named by metadata.name only: they
// are configuration a user applies again and again, so a server-made name would only duplicate them.
import type {
  LaneMode,
  QueueRequest,
  QueueSpec,
  ResourceQuotaRequest,
  ResourceQuotaSpec,
} from '../../domain/resources.js';
import { parseCpu, parseMemory } from '../../domain/quantity.js';
import { ValidationError } from '../../errors/validation-error.js';
import { formatPath, parseManifests, type Manifest, type ManifestPath } from './manifest.js';
import { queueValidator, resourceQuotaValidator, schemaProblems, type SchemaProblem } from './schema.js';
import {
  describe,
  fail,
  identityOf,
  identityProblems,
  isFields,
  metadataProblems,
  objectOf,
  type Fields,
} from './job.js';

// The defaults crds/queue.yaml declares, applied as the apiserver would (its spec defaults to {});
// test/unit/queue-validation.test.ts holds the two together.
export const QUEUE_SPEC_DEFAULTS: { readonly weight: number; readonly lanes: LaneMode } = {
  weight: 1,
  lanes: 'weighted',
};

/** A body holding exactly one Queue document (YAML or JSON). */
export function readQueueSubmission(text: string, contentType: string | undefined): QueueRequest {
  return validateQueue(onlyManifest(text, contentType, 'Queue'));
}

/** A body holding exactly one ResourceQuota document (YAML or JSON). */
export function readResourceQuotaSubmission(text: string, contentType: string | undefined): ResourceQuotaRequest {
  return validateResourceQuota(onlyManifest(text, contentType, 'ResourceQuota'));
}

export function onlyManifest(text: string, contentType: string | undefined, kind: string): Manifest {
  const manifests = parseManifests(text, contentType);
  if (manifests.length > 1) {
    throw new ValidationError([{ path: '', message: `${manifests.length} documents: submit one ${kind} per request` }]);
  }
  return manifests[0]!;
}

export function validateQueue(manifest: Manifest): QueueRequest {
  const object = objectOf(manifest);
  const identity = identityProblems(object, 'Queue');
  if (identity.length > 0) fail(manifest, identity);

  const spec = isFields(object.spec) ? object.spec : {};
  const limit = isFields(spec.resourceLimit) ? spec.resourceLimit : {};
  const problems = [
    ...schemaProblems(queueValidator(), object),
    ...namedMetadataProblems(object, 'Queue'),
    ...limitProblems(['spec', 'resourceLimit', 'cpu'], limit.cpu, parseCpu, 'a CPU quantity'),
    ...limitProblems(['spec', 'resourceLimit', 'memory'], limit.memory, parseMemory, 'a memory quantity'),
  ];
  if (problems.length > 0) fail(manifest, problems);
  return toQueueRequest(object);
}

export function validateResourceQuota(manifest: Manifest): ResourceQuotaRequest {
  const object = objectOf(manifest);
  const identity = identityProblems(object, 'ResourceQuota');
  if (identity.length > 0) fail(manifest, identity);

  const spec = isFields(object.spec) ? object.spec : undefined;
  const hard = isFields(spec?.hard) ? spec.hard : {};
  const problems = [
    ...schemaProblems(resourceQuotaValidator(), object),
    ...namedMetadataProblems(object, 'ResourceQuota'),
    ...limitProblems(['spec', 'hard', 'cpu'], hard.cpu, parseCpu, 'a CPU quantity'),
    ...limitProblems(['spec', 'hard', 'memory'], hard.memory, parseMemory, 'a memory quantity'),
  ];
  if (spec !== undefined && spec.hard === undefined && spec.placementRate === undefined) {
    problems.push({ path: ['spec'], message: 'Required value: hard or placementRate (a quota that limits nothing)' });
  }
  if (problems.length > 0) fail(manifest, problems);
  return toResourceQuotaRequest(object);
}

/**
 * The metadata checks of a Job, for a kind that must be named: metadata.name is required and
 * generateName refused, where a Job takes either.
 */
export function namedMetadataProblems(object: Fields, kind: string): SchemaProblem[] {
  const metadata = isFields(object.metadata) ? object.metadata : {};
  const { generateName, ...withoutGenerateName } = metadata;
  const problems: SchemaProblem[] = [];
  if (metadata.name === undefined)
    problems.push({ path: ['metadata', 'name'], message: `Required value: a ${kind} is named by metadata.name` });
  if (generateName !== undefined) {
    problems.push({
      path: ['metadata', 'generateName'],
      message: `not supported for a ${kind}: name it with metadata.name`,
    });
  }
  // metadataProblems would ask for "name or generateName" again: the first check says it for this kind.
  const others = metadataProblems({ ...object, metadata: withoutGenerateName }).filter(
    (p) => !(formatPath(p.path) === 'metadata.name' && p.message.startsWith('Required value')),
  );
  return [...problems, ...others];
}

/** A limit is a quantity of zero or more (zero: nothing may be held); a Job's request must be more. */
function limitProblems(
  path: ManifestPath,
  value: unknown,
  parse: (value: string | number) => number | null,
  what: string,
): SchemaProblem[] {
  if (typeof value !== 'string' && typeof value !== 'number') return [];
  const amount = parse(value);
  if (amount === null) return [{ path, message: `${describe(value)} is not ${what}` }];
  if (amount < 0) return [{ path, message: 'must not be negative' }];
  return [];
}

/** Only called once the object passed every check, so the casts hold. */
function toQueueRequest(object: Fields): QueueRequest {
  const { namespace, name, labels, annotations } = identityOf(object);
  const written = (object.spec ?? {}) as QueueSpec;
  const spec: QueueSpec = {
    ...structuredClone(written),
    weight: written.weight ?? QUEUE_SPEC_DEFAULTS.weight,
    lanes: written.lanes ?? QUEUE_SPEC_DEFAULTS.lanes,
  };
  const limit = spec.resourceLimit ?? {};
  return {
    namespace,
    name,
    labels,
    ...(annotations ? { annotations } : {}),
    spec,
    weight: spec.weight!,
    concurrencyLimit: spec.concurrencyLimit ?? null,
    cpuLimitMillis: limit.cpu === undefined ? null : parseCpu(limit.cpu),
    memoryLimitBytes: limit.memory === undefined ? null : parseMemory(limit.memory),
    strictLanes: spec.lanes === 'strict',
  };
}

/**
 * Only called once the object passed every check. The burst a placement rate leaves out is the
 * smallest whole number of placements not below one second's worth, and is written into the
 * spec, so what is stored and shown is what placement uses.
 */
function toResourceQuotaRequest(object: Fields): ResourceQuotaRequest {
  const { namespace, name, labels, annotations } = identityOf(object);
  const spec = structuredClone(object.spec) as ResourceQuotaSpec;
  if (spec.placementRate && spec.placementRate.burst === undefined) {
    spec.placementRate = { ...spec.placementRate, burst: defaultBurst(spec.placementRate.perSecond) };
  }
  const hard = spec.hard ?? {};
  return {
    namespace,
    name,
    labels,
    ...(annotations ? { annotations } : {}),
    spec,
    pendingJobs: hard.pendingJobs ?? null,
    cpuLimitMillis: hard.cpu === undefined ? null : parseCpu(hard.cpu),
    memoryLimitBytes: hard.memory === undefined ? null : parseMemory(hard.memory),
    ratePerSecond: spec.placementRate?.perSecond ?? null,
    rateBurst: spec.placementRate?.burst ?? null,
  };
}

export function defaultBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}
