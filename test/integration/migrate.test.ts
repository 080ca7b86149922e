// Three replicas starting at once migrate one database: the advisory lock makes them take
// turns, so each migration is applied exactly once and nobody fails.
import { afterAll, expect, it } from 'vitest';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { migrate, migrationFiles } from '../../src/store/migrate.js';

let t: TestDatabase;
afterAll(() => t?.close());

it('applies every migration once when three replicas migrate at the same moment', async () => {
  t = await freshDatabase('migrate', { migrate: false });
  const clients = await Promise.all(
    [1, 2, 3].map(async () => {
      const c = new pg.Client({ connectionString: t.url });
      await c.connect();
      return c;
    }),
  );
  const applied = await Promise.all(clients.map((c) => migrate(c)));
  await Promise.all(clients.map((c) => c.end()));
  const all = migrationFiles().map((m) => m.name);
  expect(applied.flat().sort()).toEqual(all.sort()); // together they applied each one exactly once
  const recorded = (await t.db.query('SELECT name FROM schema_migrations ORDER BY version')).rows.map((r) => r.name);
  expect(recorded).toEqual(all);
  expect((await t.db.query('SELECT count(*)::int AS n FROM lease')).rows[0].n).toBe(1);
});
