// What a CronJob makes at each occurrence: a Job (or a Workflow) named from the CronJob and the
// scheduled time, so a second fire of one occurrence is a key conflict, never a second run. The
// cron controller fires them (src/cron/store.ts); the API checks a CronJob against them.
import type { CronJobSpec, JobRequest, WorkflowRequest } from './resources.js';
import { toJobRequest, type Identity } from './job-request.js';
import { workflowRequestOf } from './workflow-request.js';
import { occurrenceName, parseSchedule, type CronSchedule } from '../cron/schedule.js';

/** The label every Job of a CronJob carries, naming it (as Kubernetes' controller-uid does for its owner). */
export const CRONJOB_LABEL = 'fencer.dev/cronjob';

// The defaults crds/cronjob.yaml declares (test/unit/cronjob-validation.test.ts holds the two together).
export const CRONJOB_SPEC_DEFAULTS = {
  timeZone: 'UTC',
  suspend: false,
  concurrencyPolicy: 'Allow',
  catchUp: 'latest',
  successfulJobsHistoryLimit: 3,
  failedJobsHistoryLimit: 1,
} as const;

/** The schedule of a stored (so already checked) CronJob spec. */
export function scheduleOf(spec: CronJobSpec): CronSchedule {
  return parseSchedule(spec.schedule, spec.timeZone ?? CRONJOB_SPEC_DEFAULTS.timeZone);
}

type StoredCronJob = { namespace: string; name: string; spec: CronJobSpec };

/**
 * The Job of one occurrence: the template as a Job named from the CronJob and the scheduled
 * time, due at that time. The same occurrence always gives the same name, so a second fire of it
 * is a key conflict, never a second run.
 */
export function occurrenceJob(
  cronJob: StoredCronJob,
  schedule: CronSchedule,
  at: Date,
  nameBroken = false,
): JobRequest {
  const template = cronJob.spec.jobTemplate!;
  const name = occurrenceName(cronJob.name, schedule, at);
  const job = toJobRequest(occurrenceIdentity(cronJob, name, template.metadata?.labels, nameBroken), template.spec);
  return { ...job, startAt: at.toISOString(), startAfterMs: null };
}

/**
 * The Workflow of one occurrence of a stored CronJob: the template as a Workflow named like an
 * occurrence's Job, each of its jobs due at the occurrence. Built, not checked again: the API
 * checked the Workflow of the occurrence with the longest name when it took the CronJob.
 */
export function occurrenceWorkflow(cronJob: StoredCronJob, at: Date, nameBroken = false): WorkflowRequest {
  const template = cronJob.spec.workflowTemplate!;
  const name = occurrenceName(cronJob.name, scheduleOf(cronJob.spec), at);
  const request = workflowRequestOf(
    occurrenceIdentity(cronJob, name, template.metadata?.labels, nameBroken),
    template.spec,
  );
  return { ...request, jobs: request.jobs.map((j) => ({ ...j, startAt: at.toISOString(), startAfterMs: null })) };
}

/** Who an occurrence's Job or Workflow is: its name, and the template's labels with the CronJob's. */
function occurrenceIdentity(
  cronJob: StoredCronJob,
  name: string,
  labels: Record<string, string> | undefined,
  nameBroken: boolean,
): Identity {
  return {
    namespace: cronJob.namespace,
    // Broken on purpose (src/testing/broken-guards.ts, cron-name): each fire makes a name of its own.
    name: nameBroken ? `${name}-${Math.random().toString(36).slice(2, 7)}` : name,
    generateName: null,
    labels: { ...labels, [CRONJOB_LABEL]: cronJob.name },
  };
}
