// fencer through PgBouncer in transaction mode (docs/connections.md): a small cluster whose
// replicas send their API and node traffic through Debian's pgbouncer while the lease, LISTEN and
// the leader's decisions stay direct. Jobs are placed and finish, the checker is clean, a NOTIFY
// sent by a transaction through the pooler reaches a direct LISTEN, the pooler's server sessions
// carry each replica's settings, and statements through it go unnamed (with the broken variant
// pooled-prepared-statements, named ones fail). Skips, saying why, without the Debian package.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import type { Job, List } from '../../src/domain/resources.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { PgBouncer, pgbouncerUnavailable } from '../../src/simulator/pgbouncer.js';
import { CHANNELS, pendingChanges } from '../../src/store/channels.js';
import { createPool, type Pool } from '../../src/store/db.js';
import { sql } from '../../src/store/sql.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, runFindings } from '../helpers/history.js';
import { jobYaml } from '../helpers/jobs.js';

const unavailable = pgbouncerUnavailable();
if (unavailable) console.warn(`PgBouncer tests skipped: ${unavailable}`);

let cluster: Cluster;
let db: Pool;
let home: string;

beforeAll(async () => {
  if (unavailable) return;
  home = mkdtempSync(join(tmpdir(), 'fencer-pgbouncer-'));
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 2,
    nodeCpu: '2',
    nodeMemory: '4Gi',
    home,
    pgbouncer: { poolSize: 2 },
    timings: DEFAULT_TIMINGS,
  });
  db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'test' });
}, 180_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
}, 120_000);

/** Through any replica, waiting as long as a loaded machine may make it (no test here is about time). */
async function submit(yaml: string): Promise<number> {
  return (await cluster.client({ timeoutMs: 30_000 }).submitJobs(yaml)).status;
}

async function phases(): Promise<Record<string, string>> {
  const list = await cluster.askAnyReplica<List<Job>>('/api/v1/jobs?limit=1000');
  return Object.fromEntries(list.items.map((job) => [job.metadata.name, job.status?.phase ?? 'Pending']));
}

describe.skipIf(unavailable !== null)(`fencer through PgBouncer (${unavailable ?? 'transaction mode'})`, () => {
  it('places and finishes jobs with the API and node traffic pooled; LISTEN stays direct; the checker is clean', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `pooled-${i}`);
    for (const name of names)
      expect(await submit(jobYaml(name, { cpu: '500m', memory: '256Mi', duration: '1s' }))).toBe(201);
    await eventually(
      async () => {
        const now = await phases();
        return names.every((name) => now[name] === 'Succeeded');
      },
      { timeoutMs: 120_000, what: 'every job succeeded' },
    );
    expect(
      await runFindings(
        db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);

    const sessions = await db.query<{ application_name: string; query: string }>(
      "SELECT application_name, query FROM pg_stat_activity WHERE application_name LIKE 'fencer:replica-%'",
    );
    const names_ = sessions.rows.map((r) => r.application_name);
    // Heartbeats and reports went through the pooler's server sessions...
    expect(names_).toEqual(expect.arrayContaining(['fencer:replica-1:pooled', 'fencer:replica-2:pooled']));
    // ...while each replica's LISTEN connection is its own, direct.
    const listening = sessions.rows.filter((r) => r.query.includes(`LISTEN ${CHANNELS.pending}`));
    expect(listening.map((r) => r.application_name).sort()).toEqual(['fencer:replica-1', 'fencer:replica-2']);
    // The history still names the replica of every change, those made through the pooler too
    // (submissions, the nodes' claims and ends): the pool's connect_query set fencer.replica.
    const history = await db.query<{ replica: string | null; to_state: string }>(
      "SELECT h.replica, h.to_state FROM history h JOIN jobs j ON j.uid = h.job_uid WHERE j.name LIKE 'pooled-%'",
    );
    expect(history.rows.filter((r) => r.to_state === 'Running').length).toBeGreaterThan(0);
    for (const row of history.rows) expect(['replica-1', 'replica-2']).toContain(row.replica);
  });

  it('a NOTIFY sent by a transaction through PgBouncer reaches a direct LISTEN connection', async () => {
    const listener = new pg.Client({ connectionString: cluster.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === CHANNELS.pending) heard.push(...pendingChanges(n.payload ?? '').pending);
    });
    try {
      await listener.query(`LISTEN ${CHANNELS.pending}`);
      expect(await submit(jobYaml('notified', { duration: '1s' }))).toBe(201);
      const job = await cluster.askAnyReplica<Job>('/api/v1/namespaces/default/jobs/notified');
      await eventually(() => heard.includes(job.metadata.uid ?? ''), {
        what: 'the job named by NOTIFY fencer_pending',
      });
    } finally {
      await listener.end();
    }
  });

  it("gives each replica's pooled server sessions its settings", async () => {
    const client = new pg.Client({ connectionString: cluster.pgbouncer!.pooledUrl('replica-2') });
    await client.connect();
    try {
      const { rows } = await client.query<{ replica: string; timeout: string }>(
        "SELECT current_setting('fencer.replica') AS replica, current_setting('idle_in_transaction_session_timeout') AS timeout",
      );
      expect(rows[0]).toEqual({ replica: 'replica-2', timeout: `${DEFAULT_TIMINGS.idleInTxTimeoutMs}ms` });
    } finally {
      await client.end();
    }
  });

  it('sends statements through the pooler unnamed: named ones fail there (broken variant pooled-prepared-statements)', async () => {
    // One server session behind the pool: two clients take turns on it.
    const bouncerHome = mkdtempSync(join(tmpdir(), 'fencer-pgbouncer-one-'));
    const bouncer = await PgBouncer.start({
      home: bouncerHome,
      databaseUrl: cluster.databaseUrl,
      replicas: ['one'],
      poolSize: 1,
    });
    const turns = async () => {
      const pool = createPool({ databaseUrl: bouncer.pooledUrl('one'), replica: 'one', pooled: true, max: 2 });
      const [a, b] = [await pool.connect(), await pool.connect()];
      try {
        for (const client of [a, b, a, b]) await client.query(sql('jobs/get'), ['default', 'notified']);
      } finally {
        a.release();
        b.release();
        await pool.end();
      }
    };
    try {
      await turns();
      process.env.FENCER_BREAK_GUARDS = 'pooled-prepared-statements';
      // b prepares the statement a prepared on the same server session: 42P05 already exists.
      await expect(turns()).rejects.toThrow(/prepared statement/);
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
      await bouncer.stop();
      rmSync(bouncerHome, { recursive: true, force: true });
    }
  });
});
