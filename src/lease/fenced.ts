// fenced(): the only way a leader writes a decision. The transaction first reads the lease
// row FOR SHARE and aborts with LeaseLostError unless the epoch is still ours; the share lock
// then holds off any takeover until we commit. Every history row it writes carries our epoch.
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { isBroken } from '../testing/broken-guards.js';
import { fencedCommitSeconds } from '../metrics/registry.js';

export interface EpochSource {
  epoch(): number | null;
}

export async function fenced<T>(db: Db, lease: EpochSource, fn: (tx: Tx, epoch: number) => Promise<T>): Promise<T> {
  const epoch = lease.epoch();
  if (epoch === null) throw new LeaseLostError(null, null);
  const breakFence = isBroken('fence');
  const committing = fencedCommitSeconds.startTimer();
  const result = await transaction(
    db,
    async (tx, opened) => {
      // BEGIN and the lease row FOR SHARE in one round trip, which also set the transaction's lock
      // timeout and epoch stamp (the file says why).
      const row = opened[0] as { epoch: number };
      if (row.epoch !== epoch && !breakFence) throw new LeaseLostError(epoch, row.epoch);
      await testHoldInsideFencedTx();
      return fn(tx, epoch);
    },
    undefined,
    sql('lease/begin_fenced'),
  );
  committing();
  return result;
}

/**
 * Test-only: when FENCER_TEST_HOLD_FENCED_TX names a file that exists, a fenced transaction
 * writes `<file>.inside` and waits, inside the transaction, until the file is removed. A test
 * SIGSTOPs the process meanwhile: a leader frozen mid-decision, for real.
 */
async function testHoldInsideFencedTx(): Promise<void> {
  const file = process.env.FENCER_TEST_HOLD_FENCED_TX;
  if (!file) return;
  const { existsSync, renameSync, writeFileSync } = await import('node:fs');
  if (!existsSync(file)) return;
  // The replica's name, not only its pid: in a container the pid is the container's own.
  // Written aside and renamed, so a reader never sees half of it.
  writeFileSync(
    `${file}.inside.${process.pid}`,
    JSON.stringify({ pid: process.pid, replica: process.env.FENCER_REPLICA_NAME ?? null }),
  );
  renameSync(`${file}.inside.${process.pid}`, `${file}.inside`);
  while (existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}
