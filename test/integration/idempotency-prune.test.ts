// The prune pass and a caller taking over its own expired Idempotency-Key, at once: the prune
// chose the key while it was expired, the claim refreshed it before the prune could delete it.
// The key is live from the claim's commit on (its job exists, and a retry must find it), so the
// prune must leave it. Interleaving, made certain here: the claim's transaction holds the row,
// refreshed and not yet committed; the prune's statement reads the old row (expired) and waits on
// the row's lock; the claim commits; the prune goes on with the row as it is now.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { transaction } from '../../src/store/db.js';
import { claimIdempotencyKey, pruneIdempotencyKeys } from '../../src/store/jobs.js';
import { eventually } from '../helpers/eventually.js';

const HOUR = 3_600_000;
const claim = { subject: 'alice', key: 'k-1', bodyHash: 'b-2', ttlMs: 24 * HOUR };

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase('idempotency_prune');
});
afterAll(() => t?.close());

async function pruneWhileTakenOver(): Promise<{ pruned: number; keys: unknown[] }> {
  await t.db.query('DELETE FROM idempotency_keys');
  await transaction(t.db, (tx) => claimIdempotencyKey(tx, 'Job', 'default', { ...claim, bodyHash: 'b-1' }));
  await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'");
  const claiming = await t.db.connect();
  try {
    await claiming.query('BEGIN');
    // Taken over (expired): null, the caller makes a new job under it.
    expect(await claimIdempotencyKey(claiming, 'Job', 'default', claim)).toBeNull();
    const pruning = transaction(t.db, (tx) => pruneIdempotencyKeys(tx, 24 * HOUR, 100));
    await eventually(
      async () =>
        (
          await t.db.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%DELETE FROM idempotency_keys%'",
          )
        ).rowCount,
      { what: 'the prune waiting on the claimed key' },
    );
    await claiming.query('COMMIT');
    const pruned = await pruning;
    return { pruned, keys: (await t.db.query('SELECT subject, key, body_hash FROM idempotency_keys')).rows };
  } finally {
    claiming.release();
  }
}

it('a key taken over while the prune pass waited on it is kept: the prune deletes only keys still expired', async () => {
  expect(await pruneWhileTakenOver()).toEqual({
    pruned: 0,
    keys: [{ subject: 'alice', key: 'k-1', body_hash: 'b-2' }],
  });
});

it('broken (FENCER_BREAK_GUARDS=idempotency-prune-age): the key taken over is deleted', async () => {
  process.env.FENCER_BREAK_GUARDS = 'idempotency-prune-age';
  try {
    expect(await pruneWhileTakenOver()).toEqual({ pruned: 1, keys: [] });
  } finally {
    delete process.env.FENCER_BREAK_GUARDS;
  }
});
