// What becomes of a run that ended without success: a table of causes, policies, attempts and
// disruptions, and the backoff's full jitter (delay uniform in [0, min(cap, base·2^(attempt-1))]).
// Lag is not loss: a disruption (the node died, fenced itself, shut down) never uses an attempt.
import { describe, expect, it } from 'vitest';
import { backoffWindowMs, decideRetry, type RetryInput } from '../../src/job-reconcile/retry.js';

const base: RetryInput = {
  cause: 'job',
  attempt: 1,
  maxAttempts: 3,
  disruptions: 0,
  maxDisruptions: 10,
  retryPolicy: 'OnFailure',
  backoffBaseMs: 1000,
  backoffCapMs: 300_000,
};

describe('decideRetry', () => {
  it.each([
    { what: 'a job failure with attempts left', input: {}, kind: 'retry' },
    { what: 'a job failure of a job that asked not to be retried', input: { retryPolicy: 'Never' }, kind: 'failed' },
    { what: 'a job failure on the last attempt', input: { attempt: 3 }, kind: 'dead' },
    { what: 'a disruption', input: { cause: 'disruption' }, kind: 'retry' },
    {
      what: 'a disruption of a Never job (always retried)',
      input: { cause: 'disruption', retryPolicy: 'Never' },
      kind: 'retry',
    },
    {
      what: 'a disruption on the last attempt (it uses none)',
      input: { cause: 'disruption', attempt: 3 },
      kind: 'retry',
    },
    { what: 'a disruption below the cap', input: { cause: 'disruption', disruptions: 8 }, kind: 'retry' },
    {
      what: 'the disruption that reaches maxDisruptions',
      input: { cause: 'disruption', disruptions: 9 },
      kind: 'dead',
    },
    { what: 'a job failure with disruptions at the cap (they count apart)', input: { disruptions: 9 }, kind: 'retry' },
    { what: 'a run that never started, on the last attempt', input: { cause: 'never-ran', attempt: 3 }, kind: 'retry' },
  ] as const)('$what: $kind', ({ input, kind }) => {
    expect(decideRetry({ ...base, ...input }).kind).toBe(kind);
  });

  it("uses an attempt only for the job's own failure; one that never ran waits for nothing", () => {
    expect(decideRetry({ ...base, cause: 'never-ran' })).toEqual({ kind: 'retry', delayMs: 0, usesAttempt: false });
    expect(decideRetry({ ...base, cause: 'disruption' }, () => 0)).toEqual({
      kind: 'retry',
      delayMs: 0,
      usesAttempt: false,
    });
    expect(decideRetry({ ...base, cause: 'job' }, () => 0)).toEqual({ kind: 'retry', delayMs: 0, usesAttempt: true });
  });

  it('says which cap made a job Dead', () => {
    expect(decideRetry({ ...base, attempt: 3 })).toEqual({ kind: 'dead', by: 'attempts' });
    expect(decideRetry({ ...base, cause: 'disruption', disruptions: 9 })).toEqual({ kind: 'dead', by: 'disruptions' });
  });

  it('draws the delay from the whole window, both ends included', () => {
    expect(decideRetry({ ...base, attempt: 2 }, () => 0)).toMatchObject({ delayMs: 0 });
    expect(decideRetry({ ...base, attempt: 2 }, () => 0.9999999)).toMatchObject({ delayMs: 2000 });
    expect(decideRetry({ ...base, attempt: 2 }, () => 0.5)).toMatchObject({ delayMs: 1000 });
  });
});

describe('backoffWindowMs', () => {
  it.each([
    { attempt: 1, window: 1000 },
    { attempt: 2, window: 2000 },
    { attempt: 3, window: 4000 },
    { attempt: 9, window: 256_000 },
    { attempt: 10, window: 300_000 }, // capped
    { attempt: 500, window: 300_000 }, // no overflow
  ])('after attempt $attempt: $window ms', ({ attempt, window }) => {
    expect(backoffWindowMs({ attempt, backoffBaseMs: 1000, backoffCapMs: 300_000 })).toBe(window);
  });
});
