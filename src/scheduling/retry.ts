// What becomes of a job whose run ended without success, pure: the leader decides it in a
// fenced transaction (job-reconcile, node-health) and stores the answer, due time included.
//
// As a Kubernetes Job's pod failure policy: a failure of the infrastructure (the node died, was
// lost, or fenced itself) is retried while attempts remain; a failure of the job itself is
// retried unless its retryPolicy is Never. Out of attempts, the job is Dead: the dead letter a
// user can replay. A run that never started (its claim given back) is not a failure at all.

export type FailureCause = 'infrastructure' | 'job' | 'never-ran';

export interface RetryInput {
  cause: FailureCause;
  /** The attempt that just ended (1 for the first run). */
  attempt: number;
  maxAttempts: number;
  retryPolicy: 'OnFailure' | 'Never';
  backoffBaseMs: number;
  backoffCapMs: number;
}

export type RetryDecision =
  | { kind: 'retry'; delayMs: number; usesAttempt: boolean }
  | { kind: 'failed' } // the job's own failure, and it asked not to be retried
  | { kind: 'dead' }; // out of attempts

/** `random` returns a number in [0, 1), as Math.random does (tests pass their own). */
export function decideRetry(input: RetryInput, random: () => number = Math.random): RetryDecision {
  if (input.cause === 'never-ran') return { kind: 'retry', delayMs: 0, usesAttempt: false };
  if (input.cause === 'job' && input.retryPolicy === 'Never') return { kind: 'failed' };
  if (input.attempt >= input.maxAttempts) return { kind: 'dead' };
  return { kind: 'retry', delayMs: Math.floor(random() * (backoffWindowMs(input) + 1)), usesAttempt: true };
}

/**
 * Full jitter (the delay is uniform in [0, window]) over an exponential window: after the first
 * run fails the window is base, then 2·base, 4·base, … up to cap. Jitter spreads the retries of
 * many jobs that failed together (a node's death) instead of sending them back at once.
 */
export function backoffWindowMs(input: Pick<RetryInput, 'attempt' | 'backoffBaseMs' | 'backoffCapMs'>): number {
  const exponent = Math.min(Math.max(input.attempt - 1, 0), 52);
  return Math.min(input.backoffCapMs, input.backoffBaseMs * 2 ** exponent);
}
