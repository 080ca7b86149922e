// A Job manifest into the JobRequest the scheduler works with, or one ValidationError that
// lists every problem at once, each with its path and line (nothing is half-accepted).
import { API_VERSION, withJobDefaults, type JobRequest, type JobSpec } from '../../domain/resources.js';
import { parseCpu, parseMemory } from '../../domain/quantity.js';
import { parseDuration } from '../../domain/duration.js';
import { dns1123LabelErrors, labelKeyErrors, labelValueErrors } from '../../domain/names.js';
import { ValidationError } from '../../errors/validation-error.js';
import { formatPath, type Manifest, type ManifestPath } from './manifest.js';
import { jobValidator, schemaProblems, type SchemaProblem } from './schema.js';

const KIND = 'Job';
const DEFAULT_NAMESPACE = 'default';
const DEFAULT_MAX_ATTEMPTS = 3;

type Fields = Record<string, unknown>;

export function validateJob(manifest: Manifest): JobRequest {
  const object = manifest.object;
  if (!isFields(object)) {
    fail(manifest, [{ path: [], message: `a manifest must be an object, not ${describe(object)}` }]);
  }
  // The Job schema says nothing useful about another kind: stop before it reports every
  // field of a CronJob or a batch/v1 Job as wrong.
  const identity = identityProblems(object);
  if (identity.length > 0) fail(manifest, identity);

  const problems = [...schemaProblems(jobValidator(), object), ...semanticProblems(object)];
  if (problems.length > 0) fail(manifest, problems);
  return toJobRequest(object);
}

function identityProblems(object: Fields): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const { apiVersion, kind } = object;
  if (apiVersion === undefined) problems.push({ path: ['apiVersion'], message: `Required value (expected ${API_VERSION})` });
  else if (apiVersion !== API_VERSION) {
    problems.push({ path: ['apiVersion'], message: `${describe(apiVersion)} is not supported (expected ${API_VERSION})` });
  }
  if (kind === undefined) problems.push({ path: ['kind'], message: `Required value (expected ${KIND})` });
  else if (kind !== KIND) problems.push({ path: ['kind'], message: `${describe(kind)} is not a known kind (expected ${KIND})` });
  return problems;
}

/**
 * What a schema cannot say. Each check looks only at values of the right type, so a field
 * the schema already refused is not reported twice.
 */
function semanticProblems(object: Fields): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const metadata = isFields(object.metadata) ? object.metadata : {};
  if (metadata.name === undefined) problems.push({ path: ['metadata', 'name'], message: 'Required value' });
  else if (typeof metadata.name === 'string') problems.push(...nameProblems(['metadata', 'name'], metadata.name, 'name'));
  if (typeof metadata.namespace === 'string') {
    problems.push(...nameProblems(['metadata', 'namespace'], metadata.namespace, 'namespace'));
  }
  problems.push(...labelProblems(['metadata', 'labels'], metadata.labels));

  const spec = isFields(object.spec) ? object.spec : {};
  const resources = isFields(spec.resources) ? spec.resources : {};
  problems.push(...quantityProblems(['spec', 'resources', 'cpu'], resources.cpu, parseCpu, 'a CPU quantity'));
  problems.push(...quantityProblems(['spec', 'resources', 'memory'], resources.memory, parseMemory, 'a memory quantity'));
  if (typeof spec.duration === 'string') {
    const ms = parseDuration(spec.duration);
    const path = ['spec', 'duration'];
    if (ms === null) problems.push({ path, message: `${describe(spec.duration)} is not a duration (use 30s, 5m, 1h)` });
    else if (ms <= 0) problems.push({ path, message: 'must be greater than zero' });
  }
  problems.push(...labelProblems(['spec', 'nodeSelector'], spec.nodeSelector));
  return problems;
}

function nameProblems(path: ManifestPath, value: string, what: string): SchemaProblem[] {
  return dns1123LabelErrors(value).map((why) => ({ path, message: `${describe(value)} is not a valid ${what}: ${why}` }));
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
function labelProblems(path: ManifestPath, labels: unknown): SchemaProblem[] {
  if (!isFields(labels)) return [];
  return Object.entries(labels).flatMap(([key, value]) => [
    ...labelKeyErrors(key).map((why) => ({ path: [...path, key], message: `${describe(key)} is not a valid label key: ${why}` })),
    ...(typeof value === 'string'
      ? labelValueErrors(value).map((why) => ({ path: [...path, key], message: `${describe(value)} is not a valid label value: ${why}` }))
      : []),
  ]);
}

/** Only called once the object passed every check, so the casts hold. */
function toJobRequest(object: Fields): JobRequest {
  const metadata = (object.metadata ?? {}) as { name: string; namespace?: string; labels?: Record<string, string> };
  const written = object.spec as JobSpec;
  const spec: JobSpec = { ...structuredClone(written), maxAttempts: written.maxAttempts ?? DEFAULT_MAX_ATTEMPTS };
  return withJobDefaults({
    namespace: metadata.namespace ?? DEFAULT_NAMESPACE,
    name: metadata.name,
    labels: { ...metadata.labels },
    spec,
    cpuMillis: parseCpu(spec.resources.cpu) as number,
    memoryBytes: parseMemory(spec.resources.memory) as number,
    durationMs: parseDuration(spec.duration) as number,
    nodeSelector: { ...spec.nodeSelector },
    maxAttempts: spec.maxAttempts as number,
  });
}

function fail(manifest: Manifest, problems: SchemaProblem[]): never {
  throw new ValidationError(
    problems.map(({ path, message }) => {
      const line = manifest.lineOf(path);
      return line === undefined ? { path: formatPath(path), message } : { path: formatPath(path), message, line };
    }),
  );
}

function isFields(value: unknown): value is Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A value as a message quotes it: strings in quotes, the rest by what they are. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `an ${typeof value}`;
}
