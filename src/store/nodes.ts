// Nodes as the API sees them: register, heartbeat, watch sessions (any replica).
import type { Db } from './db.js';
import { sql } from './sql.js';
import type { NodeRow } from './rows.js';

export async function registerNode(db: Db, name: string, cpuMillis: number, memoryBytes: number, labels: Record<string, string>): Promise<NodeRow> {
  return (await db.query<NodeRow>(sql('nodes/register'), [name, cpuMillis, memoryBytes, labels])).rows[0]!;
}

/** 'unknown' when no such node; 'Dead' when the node must re-register. */
export async function heartbeat(db: Db, name: string): Promise<'Ready' | 'Dead' | 'unknown'> {
  const row = (await db.query<{ state: 'Ready' | 'Dead' }>(sql('nodes/heartbeat'), [name])).rows[0];
  return row?.state ?? 'unknown';
}

export async function openWatch(db: Db, name: string, session: string, replica: string): Promise<'Ready' | 'Dead' | 'unknown'> {
  const row = (await db.query<{ state: 'Ready' | 'Dead' }>(sql('nodes/watch_open'), [name, session, replica])).rows[0];
  return row?.state ?? 'unknown';
}

export async function closeWatch(db: Db, name: string, session: string): Promise<void> {
  await db.query(sql('nodes/watch_close'), [name, session]);
}

export async function listNodes(db: Db): Promise<NodeRow[]> {
  return (await db.query<NodeRow>(sql('nodes/list'))).rows;
}
