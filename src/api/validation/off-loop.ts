// Reading a large submission on a worker thread. Parsing and validating ten thousand documents
// takes about 1.5 s of CPU; on the replica's event loop that is 1.5 s without answering a
// heartbeat or renewing the lease (it once cost a leader its lease). Small bodies, nearly all
// of them, are read in place: a thread hop would cost more than it saves.
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { ValidationError } from '../../errors/validation-error.js';
import { readSubmission, type Submission } from './submission.js';
import type { WorkerAnswer } from './submission-worker.js';

/** About a hundred job documents; reading them takes a few milliseconds. */
const OFF_LOOP_BYTES = 32 * 1024;

let pool: Piscina | undefined;

export async function readSubmissionOffLoop(text: string, contentType: string | undefined): Promise<Submission> {
  if (text.length < OFF_LOOP_BYTES) return readSubmission(text, contentType);
  // One thread, started on first use, gone after a minute idle: big submissions are rare, and
  // one at a time is plenty on a machine whose cores the control plane shares.
  pool ??= new Piscina({ filename: workerFile(), minThreads: 0, maxThreads: 1, idleTimeout: 60_000 });
  const answer = (await pool.run({ text, contentType })) as WorkerAnswer;
  if ('details' in answer) throw new ValidationError(answer.details);
  return answer.submission;
}

function workerFile(): string {
  const beside = new URL('./submission-worker.js', import.meta.url);
  if (existsSync(beside)) return beside.href;
  // Running from the TypeScript sources (the test suite's in-process replicas): a worker thread
  // cannot load TypeScript, so it runs the build of the same file (the suite builds first).
  const built = new URL('../../../dist/api/validation/submission-worker.js', import.meta.url);
  if (existsSync(built)) return built.href;
  throw new Error(`no submission-worker.js beside ${import.meta.url} nor in dist/: run npm run build`);
}
