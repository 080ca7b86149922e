// Every reader of a request's body (parse and validate), by name: what off-loop.ts runs in place
// for a small body and on its worker thread for a large one. Each takes the text and its content
// type and answers plain data, which crosses a thread boundary as it is.
import YAML from 'yaml';
import { HttpError } from '../../errors/http-error.js';
import { workflowMaxJobs } from '../../config.js';
import { readSubmission } from './submission.js';
import { readWorkflowSubmission } from './workflow.js';
import { readCronJobSubmission } from './cronjob.js';
import { readQueueSubmission, readResourceQuotaSubmission } from './queue.js';
import { readRbacSubmission } from './rbac.js';
import { checkDepth, checkNesting, MAX_YAML_ALIASES } from './yaml-bounds.js';

/** A Kubernetes write's body: one JSON or YAML value, within the nesting and alias bounds. */
export function readObject(text: string): unknown {
  checkNesting(text);
  let object: unknown;
  try {
    object = text.trimStart().startsWith('{')
      ? JSON.parse(text)
      : YAML.parse(text, { maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    throw new HttpError(400, `the body is not a JSON or YAML object: ${(error as Error).message}`);
  }
  checkDepth(object);
  return object;
}

export const READERS = {
  submission: readSubmission,
  workflow: (text: string, contentType: string | undefined) =>
    readWorkflowSubmission(text, contentType, workflowMaxJobs()),
  cronjob: (text: string, contentType: string | undefined) => readCronJobSubmission(text, contentType),
  queue: readQueueSubmission,
  quota: readResourceQuotaSubmission,
  rbac: readRbacSubmission,
  object: (text: string) => readObject(text),
};

export type ReaderName = keyof typeof READERS;
export type ReadOf<N extends ReaderName> = ReturnType<(typeof READERS)[N]>;
