// Workflows for tests: a manifest from a compact description, and the validated request the store takes.
import YAML from 'yaml';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { validateWorkflow } from '../../src/api/validation/workflow.js';
import type { JobSpec, WorkflowRequest } from '../../src/domain/resources.js';

export interface TestJob {
  name: string;
  needs?: string[];
  template?: Partial<JobSpec>;
}

export function workflowYaml(name: string, jobs: TestJob[], opts: { pool?: string; namespace?: string } = {}): string {
  return YAML.stringify({
    apiVersion: 'fencer.dev/v1',
    kind: 'Workflow',
    metadata: { name, ...(opts.namespace ? { namespace: opts.namespace } : {}) },
    spec: {
      ...(opts.pool ? { pool: opts.pool } : {}),
      jobs: jobs.map((j) => ({
        name: j.name,
        ...(j.needs ? { needs: j.needs } : {}),
        template: { resources: { cpu: '500m', memory: '256Mi' }, duration: '1s', ...j.template },
      })),
    },
  });
}

export function workflowRequest(name: string, jobs: TestJob[], opts: { pool?: string } = {}): WorkflowRequest {
  return validateWorkflow(parseManifests(workflowYaml(name, jobs, opts))[0]!, { maxJobs: 500 });
}
