// A CronJob manifest into the request the store writes, or one ValidationError listing every
// problem with its path and line. Its jobTemplate.spec is a Job spec and goes through the Job's
// own checks; the schedule and time zone through the cron math that will fire them, so a
// schedule accepted here is one the controller can compute (and one that fires at all).
import type { CronJobRequest, CronJobSpec, WorkflowRequest } from '../../domain/resources.js';
import { ScheduleError, occurrenceName, parseSchedule } from '../../cron/schedule.js';
import { CRONJOB_LABEL, CRONJOB_SPEC_DEFAULTS, scheduleOf } from '../../domain/cronjob-occurrence.js';
import { formatPath, type Manifest, type ManifestPath } from './manifest.js';
import { validateWorkflow } from './workflow.js';
import { ValidationError } from '../../errors/validation-error.js';
import { workflowMaxJobs } from '../../config.js';
import { cronJobValidator, schemaProblems, type SchemaProblem } from './schema.js';
import { fail, identityOf, identityProblems, isFields, labelProblems, objectOf, specProblems } from './job.js';
import { namedMetadataProblems, onlyManifest } from './queue.js';

/** A Job is named `<cronjob>-<time>`: 52 leaves room for 10 digits of seconds since the epoch, as in Kubernetes. */
export const CRONJOB_NAME_MAX = 52;

/** A body holding exactly one CronJob document (YAML or JSON). */
export function readCronJobSubmission(text: string, contentType: string | undefined, now = new Date()): CronJobRequest {
  return validateCronJob(onlyManifest(text, contentType, 'CronJob'), now);
}

export function validateCronJob(manifest: Manifest, now = new Date()): CronJobRequest {
  const object = objectOf(manifest);
  const identity = identityProblems(object, 'CronJob');
  if (identity.length > 0) fail(manifest, identity);

  const spec = isFields(object.spec) ? object.spec : {};
  const template = isFields(spec.jobTemplate) ? spec.jobTemplate : {};
  const templateMetadata = isFields(template.metadata) ? template.metadata : {};
  const templateSpec = isFields(template.spec) ? template.spec : {};
  const problems = [
    ...schemaProblems(cronJobValidator(), object),
    ...namedMetadataProblems(object, 'CronJob'),
    ...nameLengthProblems(object),
    ...templateChoiceProblems(spec),
    ...scheduleProblems(spec, now),
  ];
  if (spec.jobTemplate !== undefined) {
    problems.push(
      ...labelProblems(['spec', 'jobTemplate', 'metadata', 'labels'], templateMetadata.labels),
      ...specProblems(template.spec, ['spec', 'jobTemplate', 'spec']),
      ...(['startAt', 'startAfter'] as const)
        .filter((field) => templateSpec[field] !== undefined)
        .map((field) => ({
          path: ['spec', 'jobTemplate', 'spec', field],
          message: 'not allowed in a CronJob: each Job is due at its occurrence',
        })),
    );
  }
  if (problems.length > 0) fail(manifest, problems);
  // A workflow template is checked as the Workflow of the occurrence with the longest name.
  if (spec.workflowTemplate !== undefined) workflowOf(manifest, object, new Date(9_999_999_999_000));
  const written = structuredClone(object.spec) as CronJobSpec;
  return {
    ...identityOf(object),
    spec: {
      ...written,
      timeZone: written.timeZone ?? CRONJOB_SPEC_DEFAULTS.timeZone,
      suspend: written.suspend ?? CRONJOB_SPEC_DEFAULTS.suspend,
      concurrencyPolicy: written.concurrencyPolicy ?? CRONJOB_SPEC_DEFAULTS.concurrencyPolicy,
      catchUp: written.catchUp ?? CRONJOB_SPEC_DEFAULTS.catchUp,
      successfulJobsHistoryLimit:
        written.successfulJobsHistoryLimit ?? CRONJOB_SPEC_DEFAULTS.successfulJobsHistoryLimit,
      failedJobsHistoryLimit: written.failedJobsHistoryLimit ?? CRONJOB_SPEC_DEFAULTS.failedJobsHistoryLimit,
    },
  };
}

function templateChoiceProblems(spec: Record<string, unknown>): SchemaProblem[] {
  const both = spec.jobTemplate !== undefined && spec.workflowTemplate !== undefined;
  const neither = spec.jobTemplate === undefined && spec.workflowTemplate === undefined;
  if (both) return [{ path: ['spec', 'workflowTemplate'], message: 'exactly one of jobTemplate and workflowTemplate' }];
  if (neither) return [{ path: ['spec', 'jobTemplate'], message: 'Required value: jobTemplate or workflowTemplate' }];
  return [];
}

/**
 * The Workflow of one occurrence (the template as a Workflow named like an occurrence's Job),
 * checked as any Workflow is. Its problems are reported where the CronJob has them
 * (spec.workflowTemplate.spec...; a name that leaves its jobs no room: metadata.name). The cron
 * controller builds the same Workflow without checking it again (src/domain/cronjob-occurrence.ts).
 */
function workflowOf(manifest: Manifest, object: Record<string, unknown>, at: Date): WorkflowRequest {
  const spec = object.spec as CronJobSpec;
  const metadata = object.metadata as { name: string; namespace?: string };
  const name = occurrenceName(metadata.name, scheduleOf(spec), at);
  const template = spec.workflowTemplate!;
  const workflow = {
    apiVersion: object.apiVersion,
    kind: 'Workflow',
    metadata: {
      name,
      namespace: metadata.namespace,
      labels: { ...template.metadata?.labels, [CRONJOB_LABEL]: metadata.name },
    },
    spec: template.spec,
  };
  const inCronJob = (path: ManifestPath): ManifestPath =>
    path[0] === 'spec' ? ['spec', 'workflowTemplate', ...path] : ['metadata', 'name'];
  try {
    return validateWorkflow(
      { object: workflow, lineOf: (path) => manifest.lineOf(inCronJob(path)) },
      { maxJobs: workflowMaxJobs() },
    );
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(
      error.details.map((d) => ({
        ...d,
        path: d.path.startsWith('spec') ? `spec.workflowTemplate.${d.path}` : formatPath(['metadata', 'name']),
      })),
    );
  }
}

function nameLengthProblems(object: Record<string, unknown>): SchemaProblem[] {
  const name = isFields(object.metadata) ? object.metadata.name : undefined;
  if (typeof name !== 'string' || name.length <= CRONJOB_NAME_MAX) return [];
  return [
    {
      path: ['metadata', 'name'],
      message: `must be no more than ${CRONJOB_NAME_MAX} characters (each Job is named <name>-<time>)`,
    },
  ];
}

function scheduleProblems(spec: Record<string, unknown>, now: Date): SchemaProblem[] {
  if (typeof spec.schedule !== 'string') return []; // the schema said so
  const timeZone = typeof spec.timeZone === 'string' ? spec.timeZone : CRONJOB_SPEC_DEFAULTS.timeZone;
  try {
    parseSchedule(spec.schedule, timeZone, now);
    return [];
  } catch (error) {
    if (!(error instanceof ScheduleError)) throw error;
    return [{ path: ['spec', error.field], message: error.message }];
  }
}
