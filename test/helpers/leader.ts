// Waits for a cluster's leadership to move past an epoch (after a kill or a freeze); the new leader.
import type { Cluster } from '../../src/simulator/local-cluster.js';
import { eventually } from './eventually.js';

export async function leaderAfter(
  c: Cluster,
  epoch: number,
  timeoutMs = 20_000,
): Promise<{ name: string; epoch: number }> {
  return eventually(
    async () => {
      const l = await c.leader().catch(() => null);
      return l !== null && l.epoch > epoch ? l : null;
    },
    { intervalMs: 20, timeoutMs, what: 'a new leader' },
  );
}
