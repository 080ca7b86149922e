// Cluster.restartDatabase(): the cluster's own embedded PostgreSQL stops (every connection
// drops) and starts again on the same port and data. What was submitted before survives it,
// and the replicas and nodes carry on: every job still finishes, none placed twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import type { Job, List } from '../../src/domain/resources.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { createPool, type Pool } from '../../src/store/db.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, runFindings } from '../helpers/history.js';
import { jobYaml, submit } from '../helpers/jobs.js';

let cluster: Cluster;
let db: Pool;
let home: string;
const savedDatabaseUrl = process.env.DATABASE_URL;

beforeAll(async () => {
  // With no database given (nor DATABASE_URL), the cluster starts and owns its PostgreSQL.
  delete process.env.DATABASE_URL;
  home = mkdtempSync(join(tmpdir(), 'fencer-db-restart-'));
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 1,
    nodeCpu: '2',
    nodeMemory: '4Gi',
    home,
    timings: DEFAULT_TIMINGS,
  });
  db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'test' });
});

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  if (savedDatabaseUrl !== undefined) process.env.DATABASE_URL = savedDatabaseUrl;
  if (home) rmSync(home, { recursive: true, force: true });
});

async function phases(): Promise<Record<string, string>> {
  const list = await cluster.askAnyReplica<List<Job>>('/api/v1/jobs');
  return Object.fromEntries(list.items.map((job) => [job.metadata.name, job.status?.phase ?? 'Pending']));
}

describe('restarting the embedded PostgreSQL', () => {
  it('keeps the jobs submitted before it, and they still finish', async () => {
    // Two run at a time on the one node: most are still waiting when the database goes away.
    const names = Array.from({ length: 6 }, (_, i) => `before-restart-${i}`);
    for (const name of names)
      expect(await submit(cluster.replicaUrls, jobYaml(name, { cpu: '1', memory: '1Gi', duration: '2s' }))).toBe(201);
    const epochBefore = (await eventually(() => cluster.leader().catch(() => null), { what: 'a leader' })).epoch;

    const startedAt = Date.now();
    await cluster.restartDatabase();
    console.log(`embedded PostgreSQL restarted in ${Date.now() - startedAt} ms`);

    const after = await eventually(
      async () => {
        const now = await phases();
        return names.every((name) => name in now) && now;
      },
      { what: 'the jobs to be listed again' },
    );
    expect(Object.keys(after).sort()).toEqual([...names].sort());
    await eventually(async () => Object.values(await phases()).every((phase) => phase === 'Succeeded'), {
      timeoutMs: 60_000,
      what: 'every job to succeed after the restart',
    });
    expect(await eventually(() => db.query('SELECT 1').then(() => true), { what: 'the database to answer' })).toBe(
      true,
    );
    expect(
      await runFindings(
        db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    const leader = await eventually(() => cluster.leader().catch(() => null), { what: 'a leader after the restart' });
    expect(leader.epoch).toBeGreaterThanOrEqual(epochBefore);
  });
});
