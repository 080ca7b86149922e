// /metrics on a cluster of real processes (docs/metrics.md): the leader exports the cluster's
// state and a standby none of it; the latency histograms and counters move when a job runs; an
// agent serves its own; promtool check metrics passes on both (skipped, saying why, where
// Debian's prometheus is not installed: .ci/run installs it); and docs/metrics.md names every
// metric either serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { adminFetch } from '../helpers/auth.js';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
let t: TestDatabase;
let cluster: Cluster;
let home: string;

beforeAll(async () => {
  t = await freshDatabase('metrics');
  home = mkdtempSync(join(tmpdir(), 'fencer-metrics-'));
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 1,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    restart: false,
    env: { FENCER_LOG_LEVEL: 'debug' },
  });
  expect(await submit(cluster.replicaUrls, jobYaml('measured', { duration: '200ms' }))).toBe(201);
  await eventually(
    async () => (await t.db.query("SELECT 1 FROM jobs WHERE name = 'measured' AND phase = 'Succeeded'")).rowCount,
    { what: 'the job done' },
  );
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function scrape(url: string): Promise<string> {
  const res = await adminFetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one series (`name{labels}` as exposed, labels in the registry's order), or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function families(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('# TYPE '))
    .map((l) => l.split(' ')[2]!);
}

async function replicaTexts(): Promise<{ leader: string; standby: string }> {
  const leader = (await eventually(() => cluster.leader(), { what: 'a leader' })).name;
  const standby = cluster.replicaNames.find((n) => n !== leader)!;
  return {
    leader: await scrape(`${cluster.replicaUrl(leader)}/metrics`),
    standby: await scrape(`${cluster.replicaUrl(standby)}/metrics`),
  };
}

describe('/metrics', () => {
  it('the leader exports the cluster state, a standby none of it; the job moved the histograms and counters', async () => {
    const { leader, standby } = await eventually(
      async () => {
        const texts = await replicaTexts();
        // The finished run's report reached a replica and the job's last phase the leader's read.
        return value(texts.leader, 'fencer_jobs{namespace="default",queue="default",phase="Succeeded"}') === 1
          ? texts
          : undefined;
      },
      { what: 'the leader to export the job' },
    );
    expect(value(leader, 'fencer_jobs{namespace="default",queue="default",phase="Pending"}')).toBe(0);
    expect(value(leader, 'fencer_nodes{state="Ready"}')).toBe(1);
    expect(value(leader, 'fencer_nodes{state="Dead"}')).toBe(0);
    expect(value(leader, 'fencer_node_cpu_capacity_cores{node="node-1"}')).toBe(4);
    expect(value(leader, 'fencer_node_cpu_allocated_cores{node="node-1"}')).toBe(0);
    expect(value(leader, 'fencer_pending_oldest_seconds{namespace="default",queue="default"}')).toBe(0);
    expect(value(leader, 'fencer_leader')).toBe(1);
    expect(value(leader, 'fencer_leader_changes_total')).toBe(1);
    expect(value(leader, 'fencer_lease_renewals_total{result="renewed"}')).toBeGreaterThan(0);
    expect(value(leader, 'fencer_job_placement_wait_seconds_count')).toBe(1);
    expect(value(leader, 'fencer_placement_round_seconds_count')).toBeGreaterThan(0);
    expect(value(leader, 'fencer_fenced_commit_seconds_count')).toBeGreaterThan(0);
    expect(
      value(leader, 'fencer_watch_streams{kind="node"}')! + value(standby, 'fencer_watch_streams{kind="node"}')!,
    ).toBe(1);
    for (const text of [leader, standby]) {
      for (const pool of ['api', 'liveness', 'decisions'])
        for (const state of ['idle', 'busy', 'waiting'])
          expect(value(text, `fencer_db_pool_connections{pool="${pool}",state="${state}"}`)).toBeGreaterThanOrEqual(0);
    }
    // The start report was applied by whichever replica the node reached: one of the two saw it.
    const starts = (text: string) => value(text, 'fencer_job_start_seconds_count') ?? 0;
    expect(starts(leader) + starts(standby)).toBe(1);
    const lateness = (text: string) => value(text, 'fencer_job_lateness_seconds_count') ?? 0;
    expect(lateness(leader) + lateness(standby)).toBe(1);
    const submits = (text: string) =>
      value(text, 'fencer_http_requests_total{method="POST",route="/api/v1/jobs",code="201",dry_run="false"}') ?? 0;
    expect(submits(leader) + submits(standby)).toBe(1);

    expect(value(standby, 'fencer_leader')).toBe(0);
    for (const family of [
      'fencer_jobs',
      'fencer_nodes',
      'fencer_node_cpu_capacity_cores',
      'fencer_pending_oldest_seconds',
    ]) {
      expect(
        standby.split('\n').filter((l) => l.startsWith(`${family}{`)),
        family,
      ).toEqual([]);
    }
  });

  it('an agent serves its own: the run it completed, nothing running, each self-fence its log shows', async () => {
    const [url] = cluster.agentMetricsUrls;
    const text = await scrape(url!);
    expect(value(text, 'fencer_agent_jobs_running{node="node-1"}')).toBe(0);
    expect(value(text, 'fencer_agent_runs_total{node="node-1",reason="completed"}')).toBe(1);
    // None on a quiet machine; a loaded one (files side by side) can stall the replicas past the
    // node's fence margin, and then the count is the log's.
    const fenced = readFileSync(cluster.processLogFile('node-1'), 'utf8').split('fencing this node').length - 1;
    expect(value(text, 'fencer_agent_self_fences_total{node="node-1"}') ?? 0).toBe(fenced);
    expect((await adminFetch(url!.replace('/metrics', '/healthz'))).status).toBe(200);
  });

  it("the CLI shows a job's events from the history, what nodes hold (top), the cluster's events and a process's log", async () => {
    const fencer = (...args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) =>
        execFile(
          process.execPath,
          [join(projectRoot(), 'dist', 'cli', 'main.js'), ...args],
          { env: { ...process.env, FENCER_HOME: home } },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr }),
        ),
      );
    const server = cluster.replicaUrls.join(',');
    const described = await fencer('describe', 'job', 'measured', '--server', server);
    expect(described.code, described.out).toBe(0);
    const events = described.out.slice(described.out.indexOf('Events:'));
    for (const change of [
      'job Pending',
      'job Pending → Assigned (node node-1, epoch 1)',
      'Assigned → Running (node node-1',
      'Running → Succeeded (node node-1',
    ])
      expect(events).toContain(change);
    const top = await fencer('top', 'nodes', '--server', server);
    expect(top.out).toMatch(
      /^NAME\s+CPU\(cores\)\s+CPU%\s+MEMORY\(bytes\)\s+MEMORY%\s+STATUS\nnode-1\s+0\/4\s+0%\s+0\/8Gi\s+0%\s+Ready\n$/,
    );
    // The current leader's election (the first, unless a loaded machine moved the lease since).
    const { name: leader, epoch } = await eventually(() => cluster.leader(), { what: 'a leader' });
    const clusterEvents = await fencer('get', 'events', '--server', server);
    expect(clusterEvents.code, clusterEvents.out).toBe(0);
    expect(clusterEvents.out).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+EPOCH\s+MESSAGE\n/);
    expect(clusterEvents.out).toMatch(
      new RegExp(
        `\\d+s\\s+Normal\\s+LeaderElected\\s+replica/${leader}\\s+${epoch}\\s+${leader} leads at epoch ${epoch}\\n`,
      ),
    );
    expect(clusterEvents.out).toMatch(
      /Normal\s+NodeRegistered\s+node\/node-1\s+<none>\s+node node-1 registered: 4 CPU, 8 GiB of memory\n/,
    );
    const asJson = JSON.parse((await fencer('get', 'events', '-o', 'json', '--server', server)).out);
    expect(asJson).toMatchObject({ apiVersion: 'fencer.dev/v1', kind: 'EventList' });
    expect(asJson.items.map((e: { reason: string }) => e.reason)).toEqual(
      expect.arrayContaining(['LeaderElected', 'NodeRegistered']),
    );
    expect((await fencer('get', 'events', 'x', '--server', server)).out).toContain('events are listed, not named');
    const log = await fencer('logs', leader, '--tail', '200');
    expect(log.code, log.out).toBe(0);
    expect(log.out).toContain('elected leader');
    // At debug level: each placement with its job and assignment, and an access log with request ids.
    const placedLine = log.out.split('\n').find((l) => l.includes('"msg":"placed job"'));
    expect(JSON.parse(placedLine!)).toMatchObject({
      job: expect.any(String),
      assignment: expect.any(String),
      node: 'node-1',
      waitedSeconds: expect.any(Number),
    });
    const all = await fencer('logs', leader);
    expect(
      all.out
        .split('\n')
        .some((l) => l.includes('"msg":"request"') && /"reqId":"req-\w+"/.test(l) && l.includes('"status":')),
    ).toBe(true);
    const missing = await fencer('logs', 'replica-9');
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/no log for "replica-9".*there are .*replica-1, replica-2/);
  });

  it.skipIf(!PROMTOOL)(
    `passes promtool check metrics on a replica and an agent${PROMTOOL ? '' : ' (skipped: no promtool; apt-get install prometheus)'}`,
    async () => {
      const { leader } = await replicaTexts();
      for (const text of [leader, await scrape(cluster.agentMetricsUrls[0]!)]) {
        const checked = await new Promise<{ code: number; output: string }>((resolve) => {
          const child = execFile(PROMTOOL!, ['check', 'metrics'], (error, stdout, stderr) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
          );
          child.stdin!.end(text);
        });
        expect(checked.output).toBe('');
        expect(checked.code).toBe(0);
      }
    },
  );

  it('docs/metrics.md names every metric a replica or an agent serves', async () => {
    const doc = readFileSync(join(projectRoot(), 'docs', 'metrics.md'), 'utf8');
    const { leader } = await replicaTexts();
    const served = [...families(leader), ...families(await scrape(cluster.agentMetricsUrls[0]!))];
    const missing = served.filter((name) => !/_process_/.test(name) && !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
