// fencer on HA PostgreSQL (docs/ha.md): one cluster of etcd, three PostgreSQL members under
// Patroni (synchronous replication) and HAProxy, shared by every test of this file, with two
// replicas and two nodes on it. Each test disturbs the primary one way and checks the interleaving
// docs/ha.md names: nothing acknowledged is lost, a session on a demoted or cut-off primary
// cannot commit, LISTEN connections come back, the epoch never goes backwards, and the checker
// finds nothing over the nodes' run logs. Skips, saying why, where the Debian packages are missing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import type { Job, List } from '../../src/domain/resources.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { haUnavailable, type HaMember } from '../../src/simulator/ha-postgres.js';
import { createPool, type Pool } from '../../src/store/db.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, runFindings } from '../helpers/history.js';
import { jobYaml, submit } from '../helpers/jobs.js';

const unavailable = haUnavailable();
if (unavailable) console.warn(`Patroni tests skipped: ${unavailable}`);

let cluster: Cluster;
let db: Pool;
let home: string;
const FAILOVER_MS = 120_000;

beforeAll(async () => {
  if (unavailable) return;
  home = mkdtempSync(join(tmpdir(), 'fencer-patroni-'));
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 2,
    nodeCpu: '2',
    nodeMemory: '4Gi',
    home,
    postgres: 'ha',
    restart: true,
    timings: DEFAULT_TIMINGS,
    readyTimeoutMs: 120_000,
  });
  db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'test' });
}, 400_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
}, 120_000);

async function phases(): Promise<Record<string, string>> {
  const list = await cluster.askAnyReplica<List<Job>>('/api/v1/jobs?limit=1000');
  return Object.fromEntries(list.items.map((job) => [job.metadata.name, job.status?.phase ?? 'Pending']));
}

/** A primary other than `old`, once Patroni has promoted one and every member is up again. */
async function newPrimary(old: string): Promise<HaMember> {
  return eventually(
    async () => {
      const now = await cluster.postgresPrimary();
      return now && now.name !== old ? now : null;
    },
    { timeoutMs: FAILOVER_MS, what: `a primary other than ${old}` },
  );
}

/** A client of one member directly, not through HAProxy. */
async function direct(member: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: cluster.ha!.memberUrl(member) });
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function leaderEpoch(): Promise<number> {
  const leader = await eventually(() => cluster.leader().catch(() => null), {
    timeoutMs: FAILOVER_MS,
    what: 'a leader',
  });
  return leader.epoch;
}

async function allSucceed(names: string[]): Promise<void> {
  await eventually(
    async () => {
      const now = await phases().catch(() => ({}) as Record<string, string>);
      return names.every((name) => now[name] === 'Succeeded');
    },
    { timeoutMs: 180_000, what: `${names.length} jobs to succeed` },
  );
}

describe.skipIf(unavailable !== null)(`fencer on Patroni (${unavailable ?? 'etcd, Patroni, HAProxy'})`, () => {
  it('kill the primary while the leader places jobs: nothing acknowledged is lost, the checker is clean', async () => {
    const epochBefore = await leaderEpoch();
    const names = Array.from({ length: 16 }, (_, i) => `before-kill-${i}`);
    for (const name of names)
      expect(await submit(cluster.replicaUrls, jobYaml(name, { cpu: '1', memory: '1Gi', duration: '2s' }))).toBe(201);
    // Some placed, most still waiting: decisions in flight when the primary dies.
    await eventually(async () => Object.values(await phases()).some((p) => p !== 'Pending'), {
      what: 'a first placement',
    });
    const placedBefore = await db.query<{ id: string }>('SELECT id::text FROM assignments');
    const fault = await cluster.postgresFault('kill');
    // Submissions go on during the failover; each one answered 201 must exist afterwards.
    const during: string[] = [];
    for (let i = 0; i < 8; i++) {
      const name = `during-kill-${i}`;
      const status = await submit(
        cluster.replicaUrls,
        jobYaml(name, { cpu: '1', memory: '1Gi', duration: '1s' }),
      ).catch(() => 0);
      if (status === 201) during.push(name);
    }
    await newPrimary(fault.member);

    await allSucceed([...names, ...during]);
    // Every assignment the old primary acknowledged is on the new one (synchronous replication).
    const placedAfter = await db.query<{ id: string }>('SELECT id::text FROM assignments');
    const after = new Set(placedAfter.rows.map((r) => r.id));
    expect(placedBefore.rows.filter((r) => !after.has(r.id))).toEqual([]);
    expect(await leaderEpoch()).toBeGreaterThanOrEqual(epochBefore);
    expect(
      await runFindings(
        db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
  });

  it('after a failover every replica LISTENs on the new primary, and a freeze of the primary loses no job', async () => {
    const old = await eventually(() => cluster.postgresPrimary(), { timeoutMs: FAILOVER_MS, what: 'a primary' });
    await eventually(async () => (await cluster.ha!.syncStandbys()).length > 0, {
      timeoutMs: FAILOVER_MS,
      what: 'a synchronous standby',
    });
    const epochBefore = await leaderEpoch();
    const names = Array.from({ length: 8 }, (_, i) => `before-freeze-${i}`);
    for (const name of names)
      expect(await submit(cluster.replicaUrls, jobYaml(name, { cpu: '1', memory: '1Gi', duration: '1s' }))).toBe(201);
    const fault = await cluster.postgresFault('freeze');
    const promoted = await newPrimary(old.name);
    cluster.resumePostgres(fault.member, 'freeze');

    // The LISTEN connections died with the old primary's sessions; each replica opened a new one
    // on the new primary (and re-read what it may have missed: src/replica.ts, 'reconnected').
    const onNew = await direct(promoted.name);
    await eventually(
      async () => {
        const { rows } = await onNew.query<{ name: string }>(
          "SELECT application_name AS name FROM pg_stat_activity WHERE query LIKE '%LISTEN fencer_pending%'",
        );
        const listening = new Set(rows.map((r) => r.name));
        return cluster.replicaNames.every((r) => listening.has(`fencer:${r}`));
      },
      { timeoutMs: FAILOVER_MS, what: 'every replica to LISTEN on the new primary' },
    );
    // The lease is renewed by the new member's clock: a leader, at an epoch never below the last.
    const { rows } = await onNew.query<{ epoch: number; live: boolean }>(
      'SELECT epoch::int, expires_at > now() AS live FROM lease',
    );
    await onNew.end();
    expect(rows[0]!.epoch).toBeGreaterThanOrEqual(epochBefore);
    expect(await leaderEpoch()).toBeGreaterThanOrEqual(epochBefore);

    const after = [`after-freeze`];
    expect(await submit(cluster.replicaUrls, jobYaml(after[0]!, { cpu: '1', memory: '1Gi', duration: '1s' }))).toBe(
      201,
    );
    await allSucceed([...names, ...after]);
    expect(
      await runFindings(
        db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
  });

  it('a primary cut off from etcd loses its sessions through HAProxy, and comes back as a read-only standby', async () => {
    const old = await eventually(() => cluster.postgresPrimary(), { timeoutMs: FAILOVER_MS, what: 'a primary' });
    await eventually(async () => (await cluster.ha!.syncStandbys()).length > 0, {
      timeoutMs: FAILOVER_MS,
      what: 'a synchronous standby',
    });
    // A session as a leader's: through HAProxy, to the primary.
    const proxied = new pg.Client({ connectionString: cluster.databaseUrl });
    proxied.on('error', () => {});
    await proxied.connect();
    const proxiedEnded = new Promise<void>((resolve) => proxied.once('end', resolve));

    const fault = await cluster.postgresFault('partition');
    expect(fault.member).toBe(old.name);
    // HAProxy's check of the frozen Patroni fails: it closes the session it carried.
    await proxiedEnded;
    await newPrimary(old.name);
    cluster.resumePostgres(old.name, 'partition');

    // Woken, until Patroni demotes it: every new session through HAProxy reaches the new primary,
    // never the old member, whatever its Patroni answers meanwhile (HAProxy's rise, docs/ha.md 3).
    const oldMember = cluster.ha!.state().members.find((m) => m.name === old.name)!;
    const reached = new Map<number, number>();
    let oldSaidPrimary = 0;
    let standby: pg.Client | null = null;
    const demoted = await eventually(
      async () => {
        const said = await fetch(`${oldMember.restUrl}/primary`, { signal: AbortSignal.timeout(1000) }).then(
          (r) => r.status,
          () => 0,
        );
        if (said === 200) oldSaidPrimary++;
        const via = new pg.Client({ connectionString: cluster.databaseUrl, connectionTimeoutMillis: 2000 });
        via.on('error', () => {});
        const port = await via
          .connect()
          .then(() => via.query<{ port: number }>('SELECT inet_server_port() AS port'))
          .then((r) => r.rows[0]!.port)
          .catch(() => null)
          .finally(() => via.end().catch(() => {}));
        if (port !== null) reached.set(port, (reached.get(port) ?? 0) + 1);
        // Healed, Patroni demotes it: a session on it cannot write at all.
        if (!standby) {
          const client = await direct(old.name).catch(() => null);
          if (!client) return null;
          const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
          if (rows[0]!.standby) standby = client;
          else await client.end();
        }
        // Done once it is a standby and HAProxy routes sessions to the new primary (its rise passed).
        return standby && reached.size > 0 ? standby : null;
      },
      {
        timeoutMs: FAILOVER_MS,
        intervalMs: 100,
        what: `${old.name} to be a standby, and a session through HAProxy to reach the new primary`,
      },
    );
    console.log(
      `woken ${old.name}: said primary ${oldSaidPrimary} times; sessions through HAProxy by port ${JSON.stringify([...reached])} (old ${oldMember.pgPort})`,
    );
    expect(reached.get(oldMember.pgPort)).toBeUndefined();
    await expect(demoted.query('CREATE TABLE on_a_standby (id int)')).rejects.toMatchObject({ code: '25006' });
    await demoted.end();
  });
});
