// How the fairness benchmark submits: a backlog in requests of SUBMIT_BATCH jobs, back to back,
// spread over the replicas (as bench packing does); a trickle of one job at a time on a fixed
// schedule. Jobs go as JSON (the API takes the same documents as YAML).
import { delay } from '../lifecycle.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';

export const SUBMIT_BATCH = 500;
/** Every job's shape. */
export const JOB_CPU_MILLIS = 1000;
export const JOB_MEMORY_BYTES = 2 ** 30;

export function jobManifest(namespace: string, queue: string, name: string, durationMs: number): object {
  return {
    apiVersion: 'fencer.dev/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      queue,
      resources: { cpu: `${JOB_CPU_MILLIS}m`, memory: String(JOB_MEMORY_BYTES) },
      duration: `${durationMs}ms`,
    },
  };
}

/** The backlog in requests of SUBMIT_BATCH, back to back, spread over the replicas; returns when the first was accepted (Date.now()). */
export async function submitBacklog(replicaUrls: string[], manifests: readonly object[]): Promise<number> {
  let firstAcceptedAt: number | undefined;
  for (let first = 0; first < manifests.length; first += SUBMIT_BATCH) {
    await submit(rotate(replicaUrls, first / SUBMIT_BATCH), manifests.slice(first, first + SUBMIT_BATCH));
    firstAcceptedAt ??= Date.now();
  }
  return firstAcceptedAt ?? Date.now();
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * POSTs the jobs to the first replica that takes them. A 429 is not waited out: a trickle's job
 * refused counts as refused, and a backlog refused ends the run.
 */
async function submit(replicaUrls: readonly string[], body: object | readonly object[]): Promise<void> {
  await new ApiClient(replicaUrls, {
    timeoutMs: 30_000,
    retryLaterForMs: 0,
    tryNextStatuses: TRY_NEXT_AFTER_500,
  }).submitJobs(body);
}

/**
 * One job every `periodMs` from each tenant, on a fixed schedule (the tenants half a period
 * apart), each to the next replica in turn; a slow answer delays no later submit.
 */
export class Trickle {
  submitted = 0;
  refused = 0;
  stopped = false;
  /** By namespace/name: when the request went out and when its 201 came back (Date.now()). */
  readonly times = new Map<string, { sentMs: number; answeredMs: number }>();
  private readonly done = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly replicaUrls: readonly string[],
    private readonly tenants: readonly string[],
    private readonly periodMs: number,
    private readonly durationMs: number,
  ) {}

  async run(): Promise<void> {
    const start = Date.now();
    for (let tick = 0; !this.stopped; tick++) {
      const tenant = this.tenants[tick % this.tenants.length]!;
      const n = Math.floor(tick / this.tenants.length) + 1;
      await delay(start + (tick * this.periodMs) / this.tenants.length - Date.now(), this.done.signal);
      if (this.stopped) break;
      const manifest = jobManifest(tenant, 'default', `trickle-${n}`, this.durationMs);
      const sentMs = Date.now();
      const sending = submit(rotate(this.replicaUrls, tick), manifest).then(
        () => {
          this.submitted++;
          this.times.set(`${tenant}/trickle-${n}`, { sentMs, answeredMs: Date.now() });
        },
        () => void this.refused++,
      );
      this.inFlight.add(sending);
      void sending.finally(() => this.inFlight.delete(sending));
    }
    await Promise.all(this.inFlight);
  }

  stop(): void {
    this.stopped = true;
    this.done.abort();
  }
}
