// A Workflow manifest into the WorkflowRequest the store writes (its own row and one Job per
// job), or one ValidationError listing every problem with its path and line. Each job's
// template is a Job spec and gets the Job's checks; on top, the graph must hold together:
// unique job names, needs on jobs of this workflow only, no cycle, and one pool for all.
import type { WorkflowRequest, WorkflowSpec } from '../../domain/resources.js';
import { labelValueErrors } from '../../domain/names.js';
import { workflowRequestOf } from '../../domain/workflow-request.js';
import { findCycle } from '../../workflows/dag.js';
import { ValidationError } from '../../errors/validation-error.js';
import { parseManifests, type Manifest, type ManifestPath } from './manifest.js';
import { schemaProblems, workflowValidator, type SchemaProblem } from './schema.js';
import {
  GENERATED_SUFFIX_LENGTH,
  describe,
  fail,
  identityOf,
  identityProblems,
  isFields,
  metadataProblems,
  nameProblems,
  objectOf,
  specProblems,
  type Fields,
} from './job.js';

const NAME_MAX = 63;

export interface WorkflowLimits {
  /** The most jobs one workflow may have. */
  maxJobs: number;
}

/** A body holding exactly one Workflow document (YAML or JSON). */
export function readWorkflowSubmission(
  text: string,
  contentType: string | undefined,
  maxJobs: number,
): WorkflowRequest {
  const manifests = parseManifests(text, contentType);
  if (manifests.length > 1) {
    throw new ValidationError([
      { path: '', message: `${manifests.length} documents: submit one workflow per request` },
    ]);
  }
  return validateWorkflow(manifests[0]!, { maxJobs });
}

export function validateWorkflow(manifest: Manifest, opts: WorkflowLimits): WorkflowRequest {
  const object = objectOf(manifest);
  const identity = identityProblems(object, 'Workflow');
  if (identity.length > 0) fail(manifest, identity);

  const problems = [
    ...schemaProblems(workflowValidator(), object),
    ...metadataProblems(object),
    ...jobsProblems(object, opts),
  ];
  if (problems.length > 0) fail(manifest, problems);
  return toWorkflowRequest(object);
}

/**
 * What a schema cannot say about the jobs: each template's Job checks, the names, the pool, the
 * needs and the cycle. Like the Job's checks, each looks only at values of the right type.
 */
function jobsProblems(object: Fields, { maxJobs }: WorkflowLimits): SchemaProblem[] {
  const spec = isFields(object.spec) ? object.spec : {};
  if (!Array.isArray(spec.jobs)) return [];
  const jobs = spec.jobs as unknown[];
  const problems: SchemaProblem[] = [];
  if (jobs.length > maxJobs)
    problems.push({ path: ['spec', 'jobs'], message: `${jobs.length} jobs, at most ${maxJobs}` });
  const pool = typeof spec.pool === 'string' ? spec.pool : undefined;
  if (pool !== undefined) {
    problems.push(
      ...labelValueErrors(pool).map((why) => ({
        path: ['spec', 'pool'],
        message: `${describe(pool)} is not a valid pool: ${why}`,
      })),
    );
  }

  const tooLong = jobNameTooLong(object);
  // Each name's first job: a duplicate is reported where it is written again, and the graph
  // checks below see the first.
  const first = new Map<string, number>();
  jobs.forEach((job, i) => {
    if (!isFields(job)) return;
    const at: ManifestPath = ['spec', 'jobs', i];
    if (typeof job.name === 'string') {
      const invalid = nameProblems([...at, 'name'], job.name, 'job name');
      problems.push(...invalid);
      const why = invalid.length === 0 ? tooLong(job.name) : null;
      if (why !== null) problems.push({ path: [...at, 'name'], message: why });
      if (first.has(job.name))
        problems.push({ path: [...at, 'name'], message: `Duplicate value: ${describe(job.name)}` });
      else first.set(job.name, i);
    }
    problems.push(...specProblems(job.template, [...at, 'template']));
    const template = isFields(job.template) ? job.template : {};
    const selected = isFields(template.nodeSelector) ? template.nodeSelector.pool : undefined;
    if (pool !== undefined && typeof selected === 'string' && selected !== pool) {
      problems.push({
        path: [...at, 'template', 'nodeSelector', 'pool'],
        message: `${describe(selected)} differs from spec.pool ${describe(pool)}: every job of a workflow runs in its pool`,
      });
    }
  });

  jobs.forEach((job, i) => {
    const needs = needsOf(job);
    const seen = new Set<string>();
    needs.forEach((need, n) => {
      const path = ['spec', 'jobs', i, 'needs', n];
      if (!first.has(need)) problems.push({ path, message: `${describe(need)} is not a job of this workflow` });
      if (seen.has(need)) problems.push({ path, message: `Duplicate value: ${describe(need)}` });
      seen.add(need);
    });
  });

  const cycle = findCycle([...first].map(([name, i]) => ({ name, needs: needsOf(jobs[i]), durationMs: 0 })));
  if (cycle !== null)
    problems.push({ path: ['spec', 'jobs', first.get(cycle[0]!)!, 'needs'], message: `cycle: ${cycle.join(' → ')}` });
  return problems;
}

/**
 * Why the Job a job of this workflow becomes, `<workflow>-<job>`, would have too long a name, or
 * null. With a generateName the workflow's name is not known yet, only its length.
 */
function jobNameTooLong(object: Fields): (job: string) => string | null {
  const metadata = isFields(object.metadata) ? object.metadata : {};
  const { name, generateName } = metadata;
  if (typeof name === 'string') {
    return (job) => {
      const full = `${name}-${job}`;
      return full.length > NAME_MAX
        ? `its Job's name ${describe(full)} must be no more than ${NAME_MAX} characters`
        : null;
    };
  }
  if (typeof generateName === 'string' && generateName !== '') {
    return (job) => {
      const length = generateName.length + GENERATED_SUFFIX_LENGTH + 1 + job.length;
      return length > NAME_MAX
        ? `its Job's name (generateName, ${GENERATED_SUFFIX_LENGTH} random characters, '-', this name) must be no more than ` +
            `${NAME_MAX} characters, not ${length}`
        : null;
    };
  }
  return () => null; // no name at all: reported apart
}

function needsOf(job: unknown): string[] {
  if (!isFields(job) || !Array.isArray(job.needs)) return [];
  return (job.needs as unknown[]).filter((need): need is string => typeof need === 'string');
}

/** Only called once the object passed every check, so the casts hold. */
function toWorkflowRequest(object: Fields): WorkflowRequest {
  return workflowRequestOf(identityOf(object), object.spec as WorkflowSpec);
}
