// A submitted body (YAML documents, a JSON object or a JSON array) into the jobs it asks for, or
// one ValidationError naming every problem with its document index, path and line. Nothing is
// accepted unless everything is valid, so this runs whole before anything is written.
import type { JobRequest } from '../../domain/resources.js';
import { ValidationError, type ValidationDetail } from '../../errors/validation-error.js';
import { validateJob } from './job.js';
import { parseManifests } from './manifest.js';

export interface Submission {
  jobs: JobRequest[];
  /** Several documents: answered with a JobList, all accepted or none. */
  several: boolean;
}

export function readSubmission(text: string, contentType: string | undefined): Submission {
  const manifests = parseManifests(text, contentType);
  if (manifests.length === 1) return { jobs: [validateJob(manifests[0]!)], several: false };
  const details: ValidationDetail[] = [];
  const jobs: JobRequest[] = [];
  for (const [i, manifest] of manifests.entries()) {
    try {
      jobs.push(validateJob(manifest));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      details.push(...error.details.map((d) => ({ ...d, path: d.path ? `[${i}].${d.path}` : `[${i}]` })));
    }
  }
  if (details.length > 0) throw new ValidationError(details);
  const names = new Set<string>();
  for (const job of jobs) {
    if (job.generateName) continue; // named by the server, each its own
    const key = `${job.namespace}/${job.name}`;
    if (names.has(key)) throw new ValidationError([{ path: '(body)', message: `job ${key} appears twice` }]);
    names.add(key);
  }
  return { jobs, several: true };
}
