// A fresh, migrated database per test file, named after it, on the run's PostgreSQL server.
import { inject } from 'vitest';
import pg from 'pg';
import { migrate } from '../../src/store/migrate.js';
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
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = createPool({ databaseUrl: url.toString(), replica: 'test' });
  if (opts.migrate !== false) {
    const client = await db.connect();
    await migrate(client);
    client.release();
  }
  return { url: url.toString(), db, close: () => db.end() };
}
