// Writes docs/schema.sql: every migration applied to an empty database (a throwaway embedded
// PostgreSQL), then the schema read back from the catalog (src/store/schema.ts). Run it after
// adding a migration: `npm run schema` (it builds dist/ first).
import { writeFileSync } from 'node:fs';
import { startEmbeddedPostgres } from '../dist/store/embedded.js';
import { createPool } from '../dist/store/db.js';
import { migrate } from '../dist/store/migrate.js';
import { schemaSnapshot } from '../dist/store/schema.js';

const TARGET = new URL('../docs/schema.sql', import.meta.url);

const database = await startEmbeddedPostgres();
try {
  const pool = createPool({ databaseUrl: database.url, replica: 'schema-snapshot', max: 1 });
  try {
    const client = await pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
    writeFileSync(TARGET, await schemaSnapshot(pool));
  } finally {
    await pool.end();
  }
} finally {
  await database.stop();
}
console.log('wrote docs/schema.sql');
