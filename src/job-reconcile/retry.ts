// What becomes of a job whose run ended without success, pure: the leader decides it in a
// fenced transaction (job-reconcile, node-health) and stores the answer, due time included.
//
// Lag is not loss. A job uses an attempt only for a failure of its own run; a failure of the job
// itself is retried unless its retryPolicy is Never, and out of attempts the job is Dead. A
// disruption (its node died, fenced itself, was drained or shut down), as a Kubernetes Job's pod
// failure policy can ignore DisruptionTarget, uses no attempt: it is counted apart, and the job is
// Dead only at maxDisruptions, a job that every node it touches loses. A run that never started
// (its claim given back) is neither.

export type FailureCause = 'job' | 'disruption' | 'never-ran';

export interface RetryInput {
  cause: FailureCause;
  /** The attempt that just ended (1 for the first run). */
  attempt: number;
  maxAttempts: number;
  /** Disruptions before this run's end. */
  disruptions: number;
  maxDisruptions: number;
  retryPolicy: 'OnFailure' | 'Never';
  backoffBaseMs: number;
  backoffCapMs: number;
}

export type RetryDecision =
  | { kind: 'retry'; delayMs: number; usesAttempt: boolean }
  | { kind: 'failed' } // the job's own failure, and it asked not to be retried
  | { kind: 'dead'; by: 'attempts' | 'disruptions' };

/** `random` returns a number in [0, 1), as Math.random does (tests pass their own). */
export function decideRetry(input: RetryInput, random: () => number = Math.random): RetryDecision {
  if (input.cause === 'never-ran') return { kind: 'retry', delayMs: 0, usesAttempt: false };
  if (input.cause === 'disruption') {
    if (input.disruptions + 1 >= input.maxDisruptions) return { kind: 'dead', by: 'disruptions' };
    // Jittered as a failure is: the jobs of a node that died go back spread, not all at once.
    return {
      kind: 'retry',
      delayMs: Math.floor(random() * (backoffWindowMs({ ...input, attempt: input.disruptions + 1 }) + 1)),
      usesAttempt: false,
    };
  }
  if (input.retryPolicy === 'Never') return { kind: 'failed' };
  if (input.attempt >= input.maxAttempts) return { kind: 'dead', by: 'attempts' };
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
