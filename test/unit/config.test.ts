// Timings from the environment: each FENCER_<NAME> in milliseconds, refused when it would break
// a rule another timing depends on (a node must fence itself before it can be declared dead; a
// reconnecting node, still heartbeating, must not look killed).
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMINGS, timingsFromEnv } from '../../src/config.js';

describe('timingsFromEnv', () => {
  it('gives the defaults, and takes what is set', () => {
    expect(timingsFromEnv({})).toEqual(DEFAULT_TIMINGS);
    expect(timingsFromEnv({ FENCER_LEASE_MS: '3000' })).toMatchObject({ leaseMs: 3000, renewMs: 1000 });
  });

  it.each([
    [{ FENCER_HEARTBEAT_MS: 'soon' }, /FENCER_HEARTBEAT_MS: "soon" is not a positive number/],
    [{ FENCER_SELF_FENCE_MS: '4950' }, /FENCER_SELF_FENCE_MS must be shorter than FENCER_DEAD_AFTER_SILENT_MS/],
    [{ FENCER_SELF_FENCE_DISCONNECTED_MS: '950' }, /FENCER_SELF_FENCE_DISCONNECTED_MS must be shorter/],
    [{ FENCER_DISCONNECTED_QUIET_MS: '1000' }, /FENCER_DISCONNECTED_QUIET_MS must be longer than FENCER_HEARTBEAT_MS/],
  ])('refuses %o', (env, message) => {
    expect(() => timingsFromEnv(env)).toThrow(message);
  });
});
