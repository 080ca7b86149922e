// Timings from the environment: each FENCER_<NAME> in milliseconds, refused when it would break
// a rule another timing depends on (a node must fence itself before it can be declared dead; a
// reconnecting node, still heartbeating, must not look killed).
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMINGS, FENCE_CHECK_MS, fenceMarginMs, selfFenceRule, timingsFromEnv } from '../../src/config.js';
import { selfFenceCause } from '../../src/agent/agent.js';

describe('timingsFromEnv', () => {
  it('gives the defaults, and takes what is set', () => {
    expect(timingsFromEnv({})).toEqual(DEFAULT_TIMINGS);
    expect(timingsFromEnv({ FENCER_LEASE_MS: '3000' })).toMatchObject({ leaseMs: 3000, renewMs: 1000 });
  });

  it.each([
    [{ FENCER_HEARTBEAT_MS: 'soon' }, /FENCER_HEARTBEAT_MS: "soon" is not a positive number/],
    [{ FENCER_SELF_FENCE_MS: '3000' }, /FENCER_SELF_FENCE_MS is no longer set on its own/],
    [{ FENCER_DISCONNECTED_QUIET_MS: '1000' }, /FENCER_DISCONNECTED_QUIET_MS \(1000\) minus the fence margin \(350 ms/],
    [
      { FENCER_FENCE_LAG_MS: '500' },
      /must be longer than FENCER_HEARTBEAT_MS \(1000\), or a node fences itself between two heartbeats/,
    ],
    [
      { FENCER_DEAD_AFTER_DISCONNECT_MS: '300' },
      /FENCER_DEAD_AFTER_DISCONNECT_MS \(300\) must be longer than the fence margin/,
    ],
  ])('refuses %o', (env, message) => {
    expect(() => timingsFromEnv(env)).toThrow(message);
  });
});

describe('the self-fence rule', () => {
  // Whatever the timings, each threshold of the node's rule is the death rule's minus one check
  // interval and the lag allowed: a node whose check runs that late still stops first.
  it.each([
    {},
    { FENCER_FENCE_LAG_MS: '50' },
    { FENCER_DEAD_AFTER_SILENT_MS: '8000', FENCER_DISCONNECTED_QUIET_MS: '2000' },
  ])('holds the margin for %o', (env) => {
    const timings = timingsFromEnv(env);
    const rule = selfFenceRule(timings);
    const margin = fenceMarginMs(timings);
    expect(margin).toBe(FENCE_CHECK_MS + timings.fenceLagMs);
    expect(rule.silentMs + margin).toBe(timings.deadAfterSilentMs);
    expect(rule.disconnectedMs + margin).toBe(timings.deadAfterDisconnectMs);
    expect(rule.quietMs + margin).toBe(timings.disconnectedQuietMs);
    expect(rule.quietMs).toBeGreaterThan(timings.heartbeatMs);
  });

  // The rule as a table (defaults: silent 4650, disconnected 650, quiet 1150). The watch time is
  // when the stream last delivered anything (a keepalive every 500 ms while it is open).
  const rule = selfFenceRule(DEFAULT_TIMINGS);
  it.each([
    ['heartbeats pass, keepalives flow', 10_000, 9_500, 9_800, null],
    ['no heartbeat for 4.6 s, keepalives flow', 10_000, 5_400, 9_800, null],
    ['no heartbeat for 4.7 s, keepalives flow (reports may well pass)', 10_000, 5_300, 9_800, 'no-heartbeat'],
    ['nothing from the stream for 2 s, heartbeats pass', 10_000, 9_500, 8_000, null],
    ['nothing from the stream for 0.7 s, no heartbeat for 1.2 s', 10_000, 8_800, 9_300, 'no-watch'],
    ['nothing from the stream for 0.6 s, no heartbeat for 1.2 s', 10_000, 8_800, 9_400, null],
    ['nothing from the stream for 4.7 s, heartbeats pass', 10_000, 9_900, 5_300, 'no-watch'],
  ] as const)('%s', (_what, now, lastHeartbeat, watchHeardAt, cause) => {
    expect(selfFenceCause(now, lastHeartbeat, watchHeardAt, rule)).toBe(cause);
  });
});
