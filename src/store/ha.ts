// The one statement the HA set-up (src/simulator/ha-postgres.ts) needs of a new cluster: the
// fencer database, made on the primary, which synchronous replication copies to the standbys.
import pg from 'pg';
import { sql } from './sql.js';

const DUPLICATE_DATABASE = '42P04';

/**
 * Creates the fencer database through adminUrl (the maintenance database behind HAProxy), or
 * finds it there. Throws while adminUrl reaches no primary yet (no connection, or a standby).
 */
export async function createHaDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query(sql('ha/create_database'));
  } catch (err) {
    if ((err as { code?: string }).code !== DUPLICATE_DATABASE) throw err;
  } finally {
    await client.end().catch(() => {});
  }
}
