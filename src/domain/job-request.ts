// A Job's request from its checked spec: what the store writes and the scheduler works with.
// The API builds it from a manifest (src/api/validation/job.ts), the cron controller from a
// CronJob's template (./cronjob-occurrence.ts), a workflow for each of its jobs (./workflow-request.ts).
import {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_CAP_MS,
  type JobRequest,
  type JobSpec,
  type RetryPolicy,
  DEFAULT_QUEUE,
  PRIORITY_VALUES,
} from './resources.js';
import { parseCpu, parseMemory } from './quantity.js';
import { formatDuration, parseDuration } from './duration.js';
import { parseDateTime } from './date-time.js';

// The defaults crds/job.yaml declares, applied to the spec as the apiserver would apply them
// (a field of an object that was written); test/unit/validation.test.ts holds the two together.
export const SPEC_DEFAULTS = {
  maxAttempts: 3,
  maxDisruptions: 10,
  retryPolicy: 'OnFailure',
  backoff: { base: formatDuration(DEFAULT_BACKOFF_BASE_MS), cap: formatDuration(DEFAULT_BACKOFF_CAP_MS) },
  simulate: { exitCode: 1 },
} as const;

/** Who an object is, as its metadata says once checked; `name` is '' when the server is to make one. */
export interface Identity {
  namespace: string;
  name: string;
  generateName: string | null;
  labels: Record<string, string>;
  /** Only when there are some. */
  annotations?: Record<string, string>;
}

/**
 * A lone job's request from a checked spec: every unit worked out, the CRD's defaults filled
 * in (in `spec` too, so what is stored reads as the apiserver would store it). A workflow sets
 * pool, needs, pathMs and workflow on top.
 */
export function toJobRequest(identity: Identity, written: JobSpec): JobRequest {
  const spec = withSpecDefaults(written);
  const durationMs = parseDuration(spec.duration) as number;
  return {
    namespace: identity.namespace,
    name: identity.name,
    generateName: identity.generateName,
    labels: identity.labels,
    ...(identity.annotations ? { annotations: identity.annotations } : {}),
    spec,
    cpuMillis: parseCpu(spec.resources.cpu) as number,
    memoryBytes: parseMemory(spec.resources.memory) as number,
    durationMs,
    nodeSelector: { ...spec.nodeSelector },
    maxAttempts: spec.maxAttempts as number,
    image: spec.image ?? null,
    pool: null,
    retryPolicy: spec.retryPolicy as RetryPolicy,
    backoffBaseMs:
      spec.backoff?.base === undefined ? DEFAULT_BACKOFF_BASE_MS : (parseDuration(spec.backoff.base) as number),
    backoffCapMs:
      spec.backoff?.cap === undefined ? DEFAULT_BACKOFF_CAP_MS : (parseDuration(spec.backoff.cap) as number),
    startAt: spec.startAt === undefined ? null : new Date(parseDateTime(spec.startAt) as number).toISOString(),
    startAfterMs: spec.startAfter === undefined ? null : (parseDuration(spec.startAfter) as number),
    needs: [],
    pathMs: durationMs,
    workflow: null,
    queue: spec.queue ?? DEFAULT_QUEUE,
    priority: priorityValue(spec.priority),
  };
}

function priorityValue(priority: JobSpec['priority']): number {
  if (priority === undefined) return 0;
  return typeof priority === 'number' ? priority : PRIORITY_VALUES[priority];
}

function withSpecDefaults(written: JobSpec): JobSpec {
  const spec: JobSpec = {
    ...structuredClone(written),
    maxAttempts: written.maxAttempts ?? SPEC_DEFAULTS.maxAttempts,
    maxDisruptions: written.maxDisruptions ?? SPEC_DEFAULTS.maxDisruptions,
    retryPolicy: written.retryPolicy ?? SPEC_DEFAULTS.retryPolicy,
  };
  if (spec.backoff) spec.backoff = { ...SPEC_DEFAULTS.backoff, ...spec.backoff };
  if (spec.simulate) spec.simulate = { ...SPEC_DEFAULTS.simulate, ...spec.simulate };
  return spec;
}
