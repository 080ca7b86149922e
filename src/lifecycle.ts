// The pieces every long-lived part is built from: an abortable sleep that a nudge can cut
// short, and a stop() that returns the promise already in flight when called twice. Also the
// one plain sleep (`delay`) and the one wait-until (`eventually`) of src/ and test/ alike.

export class Wakeup {
  private wake: (() => void) | undefined;
  private pending = false;

  /** Sleeps up to ms, or less if nudge() is called (also if it was called just before). */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      // However the sleep ends, it stops listening: a nudge after it is kept for the next one.
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  nudge(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Waits on a condition, never on a fixed sleep: polls until check() returns a truthy value and
 * returns it (a check that throws is tried again; its last error ends up in the timeout's message).
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${opts.what ?? 'a condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`,
      );
    }
    await delay(opts.intervalMs ?? 50);
  }
}

/** Installs the graceful-then-forceful signal handling of a fencer process. */
export function onTerminate(stop: () => Promise<void>, log: (msg: string) => void = () => {}): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`second ${signal}: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log(`${signal}: stopping gracefully (send it again to exit at once)`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * One decision at a time per replica: the controllers of a leader share this, so that one
 * controller's read-then-write never interleaves with another's (e.g. placing a job on a node
 * that node-health is declaring dead).
 */
export class DecisionThread {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
