// Waits for a cluster's leadership to move past an epoch (after a kill or a freeze).
import type { Cluster } from '../../src/simulator/cluster.js';
import { eventually } from './eventually.js';

export async function leaderAfter(c: Cluster, epoch: number): Promise<void> {
  await eventually(async () => {
    const l = await c.leader().catch(() => null);
    return l !== null && l.epoch > epoch;
  }, { intervalMs: 20, timeoutMs: 20_000, what: 'a new leader' });
}
