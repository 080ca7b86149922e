// A Job manifest into the JobRequest the scheduler works with, or one ValidationError that
// lists every problem at once, each with its path and line (nothing is half-accepted).
// The checks of metadata and of a job spec at any path are exported: a Workflow's job
// templates are Job specs and go through the same ones (./workflow.ts).
import { API_VERSION, type JobRequest, type JobSpec, PRIORITY_VALUES } from '../../domain/resources.js';
import { parseCpu, parseMemory } from '../../domain/quantity.js';
import { formatDuration, parseDuration } from '../../domain/duration.js';
import { dns1123LabelErrors, labelKeyErrors, labelValueErrors } from '../../domain/names.js';
import { toJobRequest, type Identity } from '../../domain/job-request.js';
import { ValidationError } from '../../errors/validation-error.js';
import { maxAnnotationBytes, maxLabels } from '../../config.js';
import { formatPath, type Manifest, type ManifestPath } from './manifest.js';
import { jobValidator, schemaProblems, type SchemaProblem } from './schema.js';

const DEFAULT_NAMESPACE = 'default';

/** How many random characters the server appends to a generateName (as Kubernetes does). */
export const GENERATED_SUFFIX_LENGTH = 5;
const NAME_MAX = 63;

export type Fields = Record<string, unknown>;

export function validateJob(manifest: Manifest): JobRequest {
  const object = objectOf(manifest);
  // The Job schema says nothing useful about another kind: stop before it reports every
  // field of a CronJob or a batch/v1 Job as wrong.
  const identity = identityProblems(object, 'Job');
  if (identity.length > 0) fail(manifest, identity);

  const problems = [
    ...schemaProblems(jobValidator(), object),
    ...metadataProblems(object),
    ...specProblems(object.spec, ['spec']),
  ];
  if (problems.length > 0) fail(manifest, problems);
  return toJobRequest(identityOf(object), object.spec as JobSpec);
}

/** The manifest's object, or a ValidationError when it is not one (a list, a scalar). */
export function objectOf(manifest: Manifest): Fields {
  const object = manifest.object;
  if (!isFields(object))
    fail(manifest, [{ path: [], message: `a manifest must be an object, not ${describe(object)}` }]);
  return object;
}

export function identityProblems(object: Fields, kind: string): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const { apiVersion } = object;
  if (apiVersion === undefined)
    problems.push({ path: ['apiVersion'], message: `Required value (expected ${API_VERSION})` });
  else if (apiVersion !== API_VERSION) {
    problems.push({
      path: ['apiVersion'],
      message: `${describe(apiVersion)} is not supported (expected ${API_VERSION})`,
    });
  }
  if (object.kind === undefined) problems.push({ path: ['kind'], message: `Required value (expected ${kind})` });
  else if (object.kind !== kind)
    problems.push({ path: ['kind'], message: `${describe(object.kind)} is not a known kind (expected ${kind})` });
  return problems;
}

/**
 * What a schema cannot say about metadata. Each check looks only at values of the right type,
 * so a field the schema already refused is not reported twice (here and in specProblems).
 */
export function metadataProblems(object: Fields): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const metadata = isFields(object.metadata) ? object.metadata : {};
  const { name, generateName } = metadata;
  if (typeof name === 'string') problems.push(...nameProblems(['metadata', 'name'], name, 'name'));
  else if (name === undefined && !generateName) {
    problems.push({ path: ['metadata', 'name'], message: 'Required value: name or generateName is required' });
  }
  if (typeof generateName === 'string' && generateName !== '') problems.push(...generateNameProblems(generateName));
  if (typeof metadata.namespace === 'string') {
    problems.push(...nameProblems(['metadata', 'namespace'], metadata.namespace, 'namespace'));
  }
  problems.push(...labelProblems(['metadata', 'labels'], metadata.labels));
  problems.push(...annotationProblems(metadata.annotations));
  return problems;
}

/** A prefix that, with the server's random characters after it, is a DNS-1123 label. */
function generateNameProblems(prefix: string): SchemaProblem[] {
  const path = ['metadata', 'generateName'];
  const problems: SchemaProblem[] = [];
  const max = NAME_MAX - GENERATED_SUFFIX_LENGTH;
  if (prefix.length > max) {
    problems.push({
      path,
      message: `must be no more than ${max} characters (the server appends ${GENERATED_SUFFIX_LENGTH})`,
    });
  }
  if (!/^[a-z0-9][-a-z0-9]*$/.test(prefix)) {
    problems.push({
      path,
      message:
        `${describe(prefix)} is not a valid generateName: it must consist of lower case alphanumeric characters or '-', ` +
        "and must start with an alphanumeric character (e.g. 'build-')",
    });
  }
  return problems;
}

/** What a schema cannot say about a Job spec written at `at` (`spec`, or a workflow job's `template`). */
export function specProblems(value: unknown, at: ManifestPath): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const spec = isFields(value) ? value : {};
  const resources = isFields(spec.resources) ? spec.resources : {};
  problems.push(...quantityProblems([...at, 'resources', 'cpu'], resources.cpu, parseCpu, 'a CPU quantity'));
  problems.push(
    ...quantityProblems([...at, 'resources', 'memory'], resources.memory, parseMemory, 'a memory quantity'),
  );
  const durationMs = durationOf(problems, [...at, 'duration'], spec.duration, 'positive');
  problems.push(...labelProblems([...at, 'nodeSelector'], spec.nodeSelector));

  const backoff = isFields(spec.backoff) ? spec.backoff : {};
  durationOf(problems, [...at, 'backoff', 'base'], backoff.base, 'positive');
  durationOf(problems, [...at, 'backoff', 'cap'], backoff.cap, 'positive');

  durationOf(problems, [...at, 'startAfter'], spec.startAfter, 'zero');
  if (spec.startAt !== undefined && spec.startAfter !== undefined) {
    problems.push({ path: [...at, 'startAfter'], message: 'at most one of startAt and startAfter' });
  }

  if (typeof spec.queue === 'string') problems.push(...nameProblems([...at, 'queue'], spec.queue, 'queue name'));
  problems.push(...priorityProblems([...at, 'priority'], spec.priority));

  const simulate = isFields(spec.simulate) ? spec.simulate : {};
  const failAfterMs = durationOf(problems, [...at, 'simulate', 'failAfter'], simulate.failAfter, 'zero');
  if (failAfterMs !== null && durationMs !== null && failAfterMs >= durationMs) {
    problems.push({
      path: [...at, 'simulate', 'failAfter'],
      message: `must be shorter than ${formatPath([...at, 'duration'])} (${formatDuration(durationMs)})`,
    });
  }
  return problems;
}

function priorityProblems(path: ManifestPath, value: unknown): SchemaProblem[] {
  if (typeof value === 'string' && !Object.hasOwn(PRIORITY_VALUES, value)) {
    return [{ path, message: `${describe(value)} is not a priority (high, normal, low, or an integer)` }];
  }
  if (typeof value === 'number' && (!Number.isInteger(value) || Math.abs(value) > 1_000_000_000)) {
    return [{ path, message: `${value} is not a priority: an integer between -1000000000 and 1000000000` }];
  }
  return [];
}

export function nameProblems(path: ManifestPath, value: string, what: string): SchemaProblem[] {
  return dns1123LabelErrors(value).map((why) => ({
    path,
    message: `${describe(value)} is not a valid ${what}: ${why}`,
  }));
}

/** The milliseconds of a duration field, or null when it is absent or wrong (then `problems` says why). */
function durationOf(
  problems: SchemaProblem[],
  path: ManifestPath,
  value: unknown,
  least: 'zero' | 'positive',
): number | null {
  if (typeof value !== 'string') return null;
  const ms = parseDuration(value);
  if (ms === null) {
    problems.push({ path, message: `${describe(value)} is not a duration (use 30s, 5m, 1h)` });
    return null;
  }
  if (least === 'positive' && ms <= 0) {
    problems.push({ path, message: 'must be greater than zero' });
    return null;
  }
  return ms;
}

function quantityProblems(
  path: ManifestPath,
  value: unknown,
  parse: (value: string | number) => number | null,
  what: string,
): SchemaProblem[] {
  if (typeof value !== 'string' && typeof value !== 'number') return [];
  const amount = parse(value);
  if (amount === null) return [{ path, message: `${describe(value)} is not ${what}` }];
  if (amount <= 0) return [{ path, message: 'must be greater than zero' }];
  return [];
}

// Labels and node selectors are matched against each other, so both follow Kubernetes' label syntax.
export function labelProblems(path: ManifestPath, labels: unknown): SchemaProblem[] {
  if (!isFields(labels)) return [];
  const most = maxLabels();
  const count = Object.keys(labels).length;
  if (count > most) return [{ path, message: `${count} entries: at most ${most} (FENCER_MAX_LABELS)` }];
  return Object.entries(labels).flatMap(([key, value]) => [
    ...labelKeyErrors(key).map((why) => ({
      path: [...path, key],
      message: `${describe(key)} is not a valid label key: ${why}`,
    })),
    ...(typeof value === 'string'
      ? labelValueErrors(value).map((why) => ({
          path: [...path, key],
          message: `${describe(value)} is not a valid label value: ${why}`,
        }))
      : []),
  ]);
}

/** As Kubernetes: a map of strings, keys like label keys, at most 256 KiB in all (FENCER_MAX_ANNOTATION_BYTES). */
export function annotationProblems(annotations: unknown): SchemaProblem[] {
  const path = ['metadata', 'annotations'];
  if (annotations === undefined) return [];
  if (!isFields(annotations)) return [{ path, message: `must be a map of strings, not ${describe(annotations)}` }];
  const problems: SchemaProblem[] = [];
  for (const [key, value] of Object.entries(annotations)) {
    problems.push(
      ...labelKeyErrors(key).map((why) => ({
        path: [...path, key],
        message: `${describe(key)} is not a valid annotation key: ${why}`,
      })),
    );
    if (typeof value !== 'string')
      problems.push({ path: [...path, key], message: `must be a string, not ${describe(value)}` });
  }
  const most = maxAnnotationBytes();
  const bytes = Buffer.byteLength(JSON.stringify(annotations));
  if (bytes > most)
    problems.push({ path, message: `${bytes} bytes: must be at most ${most} in all (FENCER_MAX_ANNOTATION_BYTES)` });
  return problems;
}

/** Only called once the object passed every check, so the casts hold. */
export function identityOf(object: Fields): Identity {
  const metadata = (object.metadata ?? {}) as {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // As in Kubernetes, a name wins over a generateName written beside it.
  const generateName = metadata.name === undefined && metadata.generateName ? metadata.generateName : null;
  return {
    namespace: metadata.namespace ?? DEFAULT_NAMESPACE,
    name: metadata.name ?? '',
    generateName,
    labels: { ...metadata.labels },
    ...(metadata.annotations && Object.keys(metadata.annotations).length > 0
      ? { annotations: { ...metadata.annotations } }
      : {}),
  };
}

export function fail(manifest: Manifest, problems: SchemaProblem[]): never {
  throw new ValidationError(
    problems.map(({ path, message }) => {
      const line = manifest.lineOf(path);
      return line === undefined ? { path: formatPath(path), message } : { path: formatPath(path), message, line };
    }),
  );
}

export function isFields(value: unknown): value is Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A value as a message quotes it: strings in quotes, the rest by what they are. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `an ${typeof value}`;
}
