// Numbered .sql migrations, applied in order, each in its own transaction, under an advisory
// lock so that replicas starting at the same moment take turns instead of racing.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

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
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
    );
    for (const migration of migrationFiles()) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.text);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.name} failed: ${(err as Error).message}`);
      }
      applied.push(migration.name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
  return applied;
}
