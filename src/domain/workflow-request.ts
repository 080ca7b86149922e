// A Workflow's request: what the store writes (its own row and one Job per job). The API builds it
// from a manifest (src/api/validation/workflow.ts), the cron controller from a CronJob's
// workflowTemplate (./cronjob-occurrence.ts); the store names it when the server made the name.
import type { JobRequest, JobSpec, WorkflowRequest, WorkflowSpec } from './resources.js';
import { parseDuration } from './duration.js';
import { toJobRequest, type Identity } from './job-request.js';
import { remainingPathMs } from '../workflows/dag.js';

/** Labels every job of a workflow carries: the workflow's name and the job's name within it. */
export const WORKFLOW_LABEL = 'fencer.dev/workflow';
export const WORKFLOW_JOB_LABEL = 'fencer.dev/workflow-job';

/**
 * A workflow's request from its checked spec: one Job per job, each with the workflow's pool, its
 * needs and the longest path from it to the end. Named at once unless the server is to make the
 * name (a generateName): then nameWorkflow names it once the store has.
 */
export function workflowRequestOf(identity: Identity, written: WorkflowSpec): WorkflowRequest {
  const pool = written.pool ?? null;
  const pathMs = remainingPathMs(
    written.jobs.map((job) => ({
      name: job.name,
      needs: job.needs ?? [],
      durationMs: parseDuration(job.template.duration) as number,
    })),
  );
  const jobs = written.jobs.map((job): JobRequest => ({
    ...toJobRequest(
      {
        namespace: identity.namespace,
        name: job.name,
        generateName: null,
        labels: { ...identity.labels, [WORKFLOW_JOB_LABEL]: job.name },
      },
      job.template,
    ),
    pool,
    needs: [...(job.needs ?? [])],
    pathMs: pathMs.get(job.name) as number,
    workflow: '',
  }));
  const spec: WorkflowSpec = {
    ...structuredClone(written),
    jobs: written.jobs.map((job, i) => ({
      ...structuredClone(job),
      template: structuredClone(jobs[i]!.spec) as JobSpec,
    })),
  };
  const unnamed: WorkflowRequest = { ...identity, spec, jobs };
  // With a generateName the store makes the workflow's name, then names the jobs with nameWorkflow.
  return identity.generateName === null ? nameWorkflow(unnamed, identity.name) : unnamed;
}

/**
 * The request with the workflow's name given to it and its jobs: each job becomes
 * `<workflow>-<job>`, its needs name those jobs, and it carries the workflow's name and label.
 *
 * validateWorkflow does this itself for a workflow with a name. For one with only a generateName
 * it returns the request unnamed, and the store calls this once it has made the name: until
 * then `name` is '', each job's `name` and `needs` are its name(s) within the workflow,
 * `workflow` is '' and the WORKFLOW_LABEL label is missing. Call it once per request.
 */
export function nameWorkflow(request: WorkflowRequest, name: string): WorkflowRequest {
  const full = (job: string): string => `${name}-${job}`;
  return {
    ...request,
    name,
    jobs: request.jobs.map((job) => ({
      ...job,
      name: full(job.name),
      labels: { ...job.labels, [WORKFLOW_LABEL]: name },
      needs: job.needs.map(full),
      workflow: name,
    })),
  };
}
