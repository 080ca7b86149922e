// Jobs submitted continuously to whichever replica answers, at a steady rate, with sizes and
// durations drawn from a seeded generator so that a campaign can be replayed. Every tenth
// submission is a small workflow instead (a fan-out and fan-in whose parts may fail once and be
// retried after a backoff, some due a moment after submit), so that needs, skips, retries and
// start times go through the same failovers. Lone jobs go in turn to the queue `default` and to
// two queues with hard limits (CAMPAIGN_QUEUES), with priorities drawn high, normal or low, so
// the checker can prove the limits held through every failover.
import { setMaxListeners } from 'node:events';
import { delay } from '../lifecycle.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import type { CronJobRequest, QueueRequest } from '../domain/resources.js';
import { validateCronJob } from '../api/validation/cronjob.js';
import { parseManifests } from '../api/validation/manifest.js';

const WORKFLOW_EVERY = 10;

/** The limited queues a campaign's jobs go to (besides `default`); the campaign creates them. */
export const CAMPAIGN_QUEUES: readonly QueueRequest[] = [
  // At 10 jobs a second a third of the lone jobs come here, about 6 running at once on average:
  // the limits bind often, and the backlog still drains.
  limitedQueue('limited', { weight: 2, concurrencyLimit: 8 }, { weight: 2, concurrencyLimit: 8 }),
  limitedQueue(
    'capped',
    { resourceLimit: { cpu: '4', memory: '4Gi' } },
    { cpuLimitMillis: 4000, memoryLimitBytes: 4 * 1024 ** 3 },
  ),
];

function limitedQueue(name: string, spec: QueueRequest['spec'], fields: Partial<QueueRequest>): QueueRequest {
  return {
    namespace: 'default',
    name,
    labels: {},
    spec,
    weight: 1,
    concurrencyLimit: null,
    cpuLimitMillis: null,
    memoryLimitBytes: null,
    strictLanes: false,
    ...fields,
  };
}

/**
 * CronJobs firing every few seconds through every failover, one per overlap policy and two
 * catch-up policies: a freeze spans occurrences, so a new leader catches up on some. The checker
 * proves from their occurrence records that each was handled once, none early, none missed.
 */
export const CAMPAIGN_CRONJOBS: readonly CronJobRequest[] = [
  campaignCronJob('tick', '*/2 * * * * *', 'UTC', 'catchUp: all', '1s'),
  campaignCronJob('solo', '*/3 * * * * *', 'Europe/Berlin', 'concurrencyPolicy: Forbid', '4s'),
  campaignCronJob('swap', '*/5 * * * * *', 'America/New_York', 'concurrencyPolicy: Replace', '7s'),
];

function campaignCronJob(
  name: string,
  schedule: string,
  timeZone: string,
  policy: string,
  duration: string,
): CronJobRequest {
  const yaml = `apiVersion: fencer.dev/v1
kind: CronJob
metadata: { name: ${name} }
spec:
  schedule: "${schedule}"
  timeZone: ${timeZone}
  ${policy}
  jobTemplate:
    spec: { resources: { cpu: 250m, memory: 128Mi }, duration: ${duration} }
`;
  return validateCronJob(parseManifests(yaml)[0]!);
}

const QUEUES = ['default', ...CAMPAIGN_QUEUES.map((q) => q.name)];
const PRIORITIES = ['high', 'normal', 'low'];

export class JobFlow {
  /** Jobs accepted, a workflow's jobs included. */
  accepted = 0;
  workflowsAccepted = 0;
  private submitted = 0;
  private running: Promise<void> | undefined;
  private stopped = false;
  // Ends every post's retries at stop(); each one pausing between rounds listens to it.
  private readonly done = stopSignal();

  constructor(
    private readonly urls: () => string[],
    private readonly perSecond: number,
    private readonly random: () => number,
    private readonly prefix = 'c',
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.done.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    const gap = 1000 / this.perSecond;
    while (!this.stopped) {
      const n = this.submitted++;
      const name = `${this.prefix}-${n}`;
      if (n % WORKFLOW_EVERY === WORKFLOW_EVERY - 1) void this.submitWorkflow(`${name}-wf`);
      else void this.submit(name);
      await delay(gap);
    }
  }

  private async submit(name: string): Promise<void> {
    const queue = QUEUES[this.submitted % QUEUES.length]!;
    const priority = PRIORITIES[Math.floor(this.random() * PRIORITIES.length)]!;
    const body = `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\nspec:\n${this.spec('  ')}  queue: ${queue}\n  priority: ${priority}\n`;
    if (await this.post('/api/v1/jobs', body)) this.accepted++;
  }

  /** prep → 2 or 3 parts → merge; one part fails its first run, and prep may start a second late. */
  private async submitWorkflow(name: string): Promise<void> {
    const parts = 2 + Math.floor(this.random() * 2);
    const failing = Math.floor(this.random() * parts);
    const late = this.random() < 0.3;
    const job = (jobName: string, needs: string[], extra = '') =>
      `    - name: ${jobName}\n` +
      (needs.length > 0 ? `      needs: [${needs.join(', ')}]\n` : '') +
      `      template:\n${this.spec('        ')}${extra}`;
    const partNames = Array.from({ length: parts }, (_, i) => `part-${i}`);
    const body = [
      `apiVersion: fencer.dev/v1\nkind: Workflow\nmetadata:\n  name: ${name}\nspec:\n  jobs:\n`,
      job('prep', [], late ? '        startAfter: 1s\n' : ''),
      ...partNames.map((p, i) =>
        job(
          p,
          ['prep'],
          i === failing
            ? '        backoff: { base: 200ms, cap: 1s }\n        simulate: { failAttempts: 1, exitCode: 3 }\n'
            : '',
        ),
      ),
      job('merge', partNames),
    ].join('');
    if (await this.post('/api/v1/workflows', body)) {
      this.workflowsAccepted++;
      this.accepted += parts + 2;
    }
  }

  private spec(indent: string): string {
    const cpu = ['250m', '500m', '1'][Math.floor(this.random() * 3)]!;
    const memory = ['128Mi', '256Mi', '512Mi'][Math.floor(this.random() * 3)]!;
    const duration = `${1 + Math.floor(this.random() * 3)}s`;
    return `${indent}resources: { cpu: "${cpu}", memory: ${memory} }\n${indent}duration: ${duration}\n`;
  }

  /** True once a replica accepted the body. */
  private async post(path: string, body: string): Promise<boolean> {
    // Keep trying every replica until one accepts: a submission during a failover must not be
    // dropped by the client either (the server side guarantees the rest). 200 means an earlier
    // try of ours got through but its answer was lost: accepted too. A full backlog (429) is one
    // more "not now": the flow keeps its pace rather than queueing up behind Retry-After.
    const client = new ApiClient(this.urls(), {
      tryNextStatuses: [429, ...TRY_NEXT_AFTER_500],
      retryLaterForMs: 0,
      rounds: 50,
      roundPauseMs: 200,
      signal: this.done.signal,
    });
    return client.exchange('POST', path, body).then(
      () => true,
      () => false,
    );
  }
}

/** An abort controller whose signal any number of posts in flight may wait on at once. */
function stopSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
