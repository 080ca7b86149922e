// Numbered .sql migrations, applied in order, each in its own transaction, under an advisory
// lock so that replicas starting at the same moment take turns instead of racing.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { inTransaction } from './db.js';
import { sql } from './sql.js';

const MIGRATION_LOCK = 7_310_001; // any constant; only migrations use it
const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

export function migrationFiles(): Array<{ version: number; name: string; text: string }> {
  return readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({ version: Number(name.slice(0, 4)), name, text: readFileSync(migrationsDir + name, 'utf8') }));
}

/** Brings the schema up to date; returns the names of the migrations it applied. */
export async function migrate(client: pg.ClientBase): Promise<string[]> {
  const applied: string[] = [];
  await client.query(sql('migrate/lock'), [MIGRATION_LOCK]);
  try {
    await client.query(sql('migrate/ledger'));
    const done = new Set((await client.query<{ version: number }>(sql('migrate/applied'))).rows.map((r) => r.version));
    for (const migration of migrationFiles()) {
      if (done.has(migration.version)) continue;
      await inTransaction(client, async () => {
        await client.query(migration.text);
        await client.query(sql('migrate/record'), [migration.version, migration.name]);
      }).catch((err: unknown) => {
        throw new Error(`migration ${migration.name} failed: ${(err as Error).message}`);
      });
      applied.push(migration.name);
    }
  } finally {
    await client.query(sql('migrate/unlock'), [MIGRATION_LOCK]);
  }
  return applied;
}
