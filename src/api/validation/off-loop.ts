// Reading a large body on a worker thread. The yaml package parses about a megabyte a second here
// (a flow mapping with many keys several times slower: it checks keys for duplicates), and JSON
// goes through it too for its line numbers; on the replica's event loop that is seconds without
// answering a heartbeat or renewing the lease (a batch of ten thousand jobs once cost a leader its
// lease). So every body past OFF_LOOP_BYTES is parsed and validated on the worker, whatever its
// route; small bodies, nearly all of them, are read in place: a thread hop would cost more than
// it saves. One body at a time, each within a time bound counted from when its read starts (not
// while it waits): a body that outlasts it ends the thread (a new one starts for the next), so a
// slow body delays the next ones by at most that bound, and the queue of those waiting is bounded.
// The thread's memory is bounded too (bodyReadMemoryMb), so a large body cannot swell the replica.
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import { ValidationError } from '../../errors/validation-error.js';
import { HttpError } from '../../errors/http-error.js';
import { RetryLaterError } from '../../errors/retry-later-error.js';
import { bodyReadMemoryMb, bodyReadTimeoutMs, maxQueuedBodies } from '../../config.js';
import { READERS, type ReaderName, type ReadOf } from './readers.js';
import type { WorkerAnswer } from './submission-worker.js';

/** About a hundred job documents; reading them in place takes a few milliseconds. */
export const OFF_LOOP_BYTES = 32 * 1024;

let pool: Piscina | undefined;
/** The memory bound `pool`'s thread was started with. */
let poolMemoryMb = 0;
/** The tail of the line of reads; how many are in it (the one reading and those waiting). */
let turn: Promise<void> = Promise.resolve();
let inLine = 0;

/** `text` read by READERS[reader]: in place when small, else on the worker thread. */
export async function readOffLoop<N extends ReaderName>(
  reader: N,
  text: string,
  contentType: string | undefined,
): Promise<ReadOf<N>> {
  if (text.length < OFF_LOOP_BYTES) return READERS[reader](text, contentType) as ReadOf<N>;
  const queued = maxQueuedBodies();
  if (inLine > queued)
    throw new RetryLaterError(
      `${queued} large bodies are waiting to be read on this replica (FENCER_MAX_QUEUED_BODIES); send it again later`,
      1,
    );
  inLine++;
  const before = turn;
  let done!: () => void;
  turn = new Promise((resolve) => (done = resolve));
  let answer: WorkerAnswer;
  try {
    await before;
    answer = await readOnWorker({ reader, text, contentType });
  } finally {
    inLine--;
    done();
  }
  if ('details' in answer) throw new ValidationError(answer.details);
  if ('http' in answer) throw new HttpError(answer.http.statusCode, answer.http.message);
  return answer.read as ReadOf<N>;
}

async function readOnWorker(task: { reader: ReaderName; text: string; contentType: string | undefined }) {
  // One thread, started on first use, gone after a minute idle: big bodies are rare, and one at
  // a time is plenty on a machine whose cores the control plane shares.
  const memoryMb = bodyReadMemoryMb();
  if (pool && poolMemoryMb !== memoryMb) {
    void pool.destroy();
    pool = undefined;
  }
  pool ??= new Piscina({
    filename: workerFile(),
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
  });
  poolMemoryMb = memoryMb;
  const limitMs = bodyReadTimeoutMs();
  const signal = AbortSignal.timeout(limitMs);
  try {
    return (await pool.run(task, { signal })) as WorkerAnswer;
  } catch (err) {
    // Piscina ends the thread that was reading; the next read starts a new one.
    if (signal.aborted)
      throw new HttpError(
        413,
        `the body (${task.text.length} bytes) took longer than ${limitMs} ms to read (FENCER_BODY_READ_TIMEOUT_MS): send fewer objects, or fewer keys, per request`,
      );
    // Node ends a thread past its resourceLimits; Piscina starts a new one for the next read.
    if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
      throw new HttpError(
        413,
        `the body (${task.text.length} bytes) took more than ${memoryMb} MiB of memory to read (FENCER_BODY_READ_MEMORY_MB): send fewer objects per request`,
      );
    throw err;
  }
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
