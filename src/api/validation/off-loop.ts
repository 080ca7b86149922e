// Reading a large body on a worker thread. The yaml package parses about a megabyte a second here
// (a flow mapping with many keys several times slower: it checks keys for duplicates), and JSON
// goes through it too for its line numbers; on the replica's event loop that is seconds without
// answering a heartbeat or renewing the lease (a batch of ten thousand jobs once cost a leader its
// lease). So every body past OFF_LOOP_BYTES is parsed and validated on the worker, whatever its
// route; small bodies, nearly all of them, are read in place: a thread hop would cost more than
// it saves.
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { ValidationError } from '../../errors/validation-error.js';
import { HttpError } from '../../errors/http-error.js';
import { READERS, type ReaderName, type ReadOf } from './readers.js';
import type { WorkerAnswer } from './submission-worker.js';

/** About a hundred job documents; reading them in place takes a few milliseconds. */
export const OFF_LOOP_BYTES = 32 * 1024;

let pool: Piscina | undefined;

/** `text` read by READERS[reader]: in place when small, else on the worker thread. */
export async function readOffLoop<N extends ReaderName>(
  reader: N,
  text: string,
  contentType: string | undefined,
): Promise<ReadOf<N>> {
  if (text.length < OFF_LOOP_BYTES) return READERS[reader](text, contentType) as ReadOf<N>;
  // One thread, started on first use, gone after a minute idle: big bodies are rare, and one at
  // a time is plenty on a machine whose cores the control plane shares.
  pool ??= new Piscina({ filename: workerFile(), minThreads: 0, maxThreads: 1, idleTimeout: 60_000 });
  const answer = (await pool.run({ reader, text, contentType })) as WorkerAnswer;
  if ('details' in answer) throw new ValidationError(answer.details);
  if ('http' in answer) throw new HttpError(answer.http.statusCode, answer.http.message);
  return answer.read as ReadOf<N>;
}

/** A batch of jobs (POST /api/v1/jobs), off the loop when large. */
export function readSubmissionOffLoop(text: string, contentType: string | undefined) {
  return readOffLoop('submission', text, contentType);
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
