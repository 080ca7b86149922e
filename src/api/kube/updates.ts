// Changes to an object that exists, as Kubernetes clients make them: a whole new object (PUT,
// optimistic on metadata.resourceVersion), a JSON merge patch (RFC 7386; what kubectl's
// client-side apply, edit and patch send for custom resources) or server-side apply (the
// applied object's fields win). Queues, ResourceQuotas and CronJobs change; of a Job or a
// Workflow only the labels and annotations do (the same spec again is fine); nodes are fencer's.
import type { ApiContext } from '../context.js';
import type { KubeKind } from './kinds.js';
import { HttpError } from '../../errors/http-error.js';
import { KubeError } from './status.js';
import { readOffLoop } from '../validation/off-loop.js';
import { applyQueue, applyQuota } from '../../fair-share/store.js';
import { applyCronJob } from '../../cron/store.js';
import { setMetadata } from '../../store/jobs.js';
import { fail, metadataProblems } from '../validation/job.js';
import { presentCronJob, presentQueue, presentResourceQuota } from '../present.js';
import type { KubeObject } from './table.js';
import { isDeepStrictEqual } from 'node:util';

type Fields = Record<string, unknown>;

/** RFC 7386: null removes a field, an object merges into an object, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Fields =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Fields) } : {};
  for (const [key, value] of Object.entries(patch as Fields)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** What a client may write of an object: apiVersion, kind, metadata's name, namespace, labels and annotations, spec. */
function writable(object: Fields): Fields {
  const metadata = (object.metadata ?? {}) as Fields;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name: metadata.name,
      ...(metadata.namespace !== undefined ? { namespace: metadata.namespace } : {}),
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
    },
    spec: object.spec,
  };
}

/**
 * Writes `desired` over `current` (both whole objects): with `expectedVersion`, only if the object
 * is still at that version (else Conflict). Returns the object as stored.
 */
export async function replaceObject(
  ctx: ApiContext,
  kind: KubeKind,
  current: KubeObject,
  desired: Fields,
  expectedVersion: number | null,
  reread: () => Promise<KubeObject | undefined>,
): Promise<KubeObject> {
  const name = String((current.metadata ?? {}).name);
  const wanted = writable(desired);
  const given = (wanted.metadata as Fields).name;
  if (given !== undefined && given !== name)
    throw new HttpError(400, `the name of the object (${String(given)}) does not match the name on the URL (${name})`);
  (wanted.metadata as Fields).name = name;
  if (kind.namespaced) (wanted.metadata as Fields).namespace = (current.metadata ?? {}).namespace;
  // The merged object, validated as a body of its kind is: off the event loop when large
  // (off-loop.ts). Its text is made here, so a refusal's line would point at nothing the client sent.
  const read = <N extends 'queue' | 'quota' | 'cronjob'>(reader: N) =>
    readOffLoop(reader, JSON.stringify(wanted), 'application/json');
  const conflict = () =>
    new KubeError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${kind.plural}.${kind.group} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
  switch (kind.kind) {
    case 'Queue': {
      const result = await applyQueue(ctx.db, await read('queue'), expectedVersion);
      if (result.outcome === 'stale') throw conflict();
      return presentQueue(result.queue) as unknown as KubeObject;
    }
    case 'ResourceQuota': {
      const result = await applyQuota(ctx.db, await read('quota'), expectedVersion);
      if (result.outcome === 'stale' || result.outcome === 'conflict') throw conflict();
      return presentResourceQuota(result.quota) as unknown as KubeObject;
    }
    case 'CronJob': {
      const result = await applyCronJob(ctx.db, await read('cronjob'), expectedVersion);
      if (result.outcome === 'stale') throw conflict();
      return presentCronJob(result.cronJob) as unknown as KubeObject;
    }
    case 'Job':
    case 'Workflow': {
      // The spec is fixed at create; labels and annotations change, as a pod's do.
      if (!isDeepStrictEqual(writable(current).spec, wanted.spec)) {
        throw new KubeError(
          422,
          'Invalid',
          `${kind.kind} ${name} is immutable but for its labels and annotations: spec cannot change (delete it and create it again)`,
        );
      }
      const problems = metadataProblems(wanted);
      if (problems.length > 0) fail({ object: wanted, lineOf: () => undefined }, problems);
      const metadata = { labels: stringsAt(wanted, 'labels'), annotations: stringsAt(wanted, 'annotations') };
      const unchanged =
        isDeepStrictEqual(stringsAt(current, 'labels'), metadata.labels) &&
        isDeepStrictEqual(stringsAt(current, 'annotations'), metadata.annotations);
      if (unchanged) {
        if (
          expectedVersion !== null &&
          String(expectedVersion) !== String(((current.metadata ?? {}) as Fields).resourceVersion)
        )
          throw conflict();
        return current;
      }
      if (
        !(await setMetadata(
          ctx.db,
          kind.kind,
          String((wanted.metadata as Fields).namespace),
          name,
          metadata,
          expectedVersion,
        ))
      )
        throw conflict();
      const stored = await reread();
      if (!stored) throw new KubeError(404, 'NotFound', `${kind.plural}.${kind.group} "${name}" not found`);
      return stored;
    }
    default:
      throw new KubeError(
        405,
        'MethodNotAllowed',
        `${kind.plural}.${kind.group} are written by fencer, not by clients`,
      );
  }
}

/** metadata.labels or metadata.annotations of an object, {} when absent. */
function stringsAt(object: Fields, field: 'labels' | 'annotations'): Record<string, string> {
  return (((object.metadata ?? {}) as Fields)[field] ?? {}) as Record<string, string>;
}

/** The resourceVersion an update names, or null when it names none (an unconditional update). */
export function expectedVersionOf(object: Fields): number | null {
  const version = ((object.metadata ?? {}) as Fields).resourceVersion;
  if (version === undefined || version === null || version === '') return null;
  const n = Number(version);
  if (!Number.isInteger(n))
    throw new HttpError(400, `metadata.resourceVersion: "${String(version)}" is not a resource version`);
  return n;
}
