// A fresh database per test file, named after it, on the run's PostgreSQL server: migrated (a copy of
// the run's template) unless asked for an empty one.
import { inject } from 'vitest';
import pg from 'pg';
import { createPool, type Db } from '../../src/store/db.js';

export interface TestDatabase {
  url: string;
  db: Db;
  close(): Promise<void>;
}

export async function freshDatabase(label: string, opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl');
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Migrated: a copy of the run's migrated template (helpers/global-setup.ts).
  await admin.query(
    opts.migrate === false
      ? `CREATE DATABASE ${name}`
      : `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`,
  );
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = createPool({ databaseUrl: url.toString(), replica: 'test' });
  return { url: url.toString(), db, close: () => db.end() };
}
