// A real Prometheus (Debian's, which .ci/run installs; skipped, saying why, without it) scrapes a
// cluster of real processes through deploy/prometheus/prometheus.yml's file discovery and rules.
// The leader is killed; Prometheus' query API must show the failover: one more leader change, a
// takeover time recorded, sum(fencer_leader) exactly 1 again; queue depth and lateness sane.
// The rules pass `promtool check rules` and their unit tests, and every expression of the
// Grafana dashboard is a query Prometheus answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';
import { freePort } from '../../src/net/free-port.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { adminFetch } from '../helpers/auth.js';

const PROMETHEUS = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => existsSync(p));
const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
const RULES_DIR = join(projectRoot(), 'deploy', 'prometheus');
const SKIP = PROMETHEUS && PROMTOOL ? '' : ' (skipped: no prometheus and promtool; apt-get install prometheus)';

let t: TestDatabase;
let cluster: Cluster;
let home: string;
let prometheus: ChildProcess | undefined;
let promUrl: string;

function run(file: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    execFile(file, args, { cwd }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

/** One instant query's result vector (throws on a query Prometheus refuses). */
async function query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await adminFetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data!.result;
}

/** The lease's epoch: how many times a replica was elected. */
async function epoch(): Promise<number> {
  return (await t.db.query<{ epoch: number }>('SELECT epoch::int AS epoch FROM lease')).rows[0]!.epoch;
}

async function scalar(expr: string): Promise<number | undefined> {
  const [first] = await query(expr);
  return first ? Number(first.value[1]) : undefined;
}

beforeAll(async () => {
  if (SKIP) return;
  t = await freshDatabase('prometheus');
  home = mkdtempSync(join(tmpdir(), 'fencer-prometheus-'));
  cluster = await Cluster.start({
    replicas: 3,
    nodes: 2,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    restart: false,
  });
  // The shipped config, with this cluster's targets file and a faster scrape.
  const config = readFileSync(join(RULES_DIR, 'prometheus.yml'), 'utf8')
    .replace('../../.fencer/prometheus-targets.json', join(home, 'prometheus-targets.json'))
    .replace('../../.fencer/auth/prometheus.token', join(home, 'auth', 'prometheus.token'))
    .replace('- fencer-rules.yml', `- ${join(RULES_DIR, 'fencer-rules.yml')}`)
    .replace(/scrape_interval: 5s/, 'scrape_interval: 1s')
    .replace(/evaluation_interval: 5s/, 'evaluation_interval: 1s')
    .replace(/refresh_interval: 5s/, 'refresh_interval: 1s');
  writeFileSync(join(home, 'prometheus.yml'), config);
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS!,
    [
      `--config.file=${join(home, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(home, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  await eventually(async () => (await adminFetch(`${promUrl}/-/ready`).catch(() => null))?.ok, {
    what: 'Prometheus ready',
  });
}, 90_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  await cluster?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe(`Prometheus${SKIP}`, () => {
  it.skipIf(!!SKIP)('checks and unit-tests the rules (promtool)', async () => {
    const checked = await run(PROMTOOL!, ['check', 'rules', 'fencer-rules.yml'], RULES_DIR);
    expect(checked.output).toMatch(/SUCCESS/);
    expect(checked.code).toBe(0);
    const tested = await run(PROMTOOL!, ['test', 'rules', 'fencer-rules.test.yml'], RULES_DIR);
    expect(tested.output).toMatch(/SUCCESS/);
    expect(tested.code).toBe(0);
  });

  it.skipIf(!!SKIP)(
    'sees a leader kill: one more leader change, a takeover time, exactly one leader again; queue depth and lateness sane',
    async () => {
      for (let i = 0; i < 6; i++)
        expect(await submit(cluster.replicaUrls, jobYaml(`before-${i}`, { duration: '300ms' }))).toBe(201);
      // Every replica and agent scraped, one leader, its first change counted.
      await eventually(
        async () => (await scalar('count(up{job="fencer"} == 1)')) === 5 && (await scalar('sum(fencer_leader)')) === 1,
        { what: 'every target up, one leader', timeoutMs: 30_000 },
      );
      // Every election is one leader change and one epoch. A loaded machine can move the lease on
      // its own (a replica stalled past it), so the counts are compared with the lease's epoch.
      const changes = 'sum(max_over_time(fencer_leader_changes_total[10m]))';
      const takeovers = 'sum(max_over_time(fencer_leader_takeover_seconds_count[10m]))';
      await eventually(async () => (await scalar(changes)) === (await epoch()), {
        what: 'the first leader change scraped',
      });
      await eventually(async () => (await scalar('sum(fencer_jobs{phase="Succeeded"})')) === 6, {
        what: 'the jobs done, as the leader exports them',
        timeoutMs: 30_000,
      });

      const before = await epoch();
      await cluster.kill('leader');
      for (let i = 0; i < 6; i++)
        expect(await submit(cluster.replicaUrls, jobYaml(`after-${i}`, { duration: '300ms' }))).toBe(201);
      // The killed replica's series go stale at its first failed scrape; its counter is still in the window.
      const now = await eventually(
        async () => {
          const e = await epoch();
          return e > before && (await scalar(changes)) === e && (await scalar(takeovers)) === e - 1 && e;
        },
        { what: 'a leader change and its takeover time', timeoutMs: 30_000 },
      );
      // Each takeover within a lease and a poll or so.
      const takeover = await scalar('sum(max_over_time(fencer_leader_takeover_seconds_sum[10m]))');
      expect(takeover).toBeGreaterThan(0);
      expect(takeover! / (now - 1)).toBeLessThan(DEFAULT_TIMINGS.leaseMs / 1000 + 2);
      await eventually(
        async () =>
          (await scalar('sum(fencer_leader)')) === 1 &&
          (await scalar('count(up{job="fencer"} == 0)')) === 1 &&
          (await scalar('max(fencer_lease_epoch)')) === (await epoch()),
        { what: 'exactly one leader at the lease epoch, the killed one down' },
      );

      await eventually(async () => (await scalar('sum(fencer_jobs{phase="Succeeded"})')) === 12, {
        what: 'every job done after the failover',
        timeoutMs: 30_000,
      });
      // One sample each may miss (a scrape slower than its 1 s timeout marks the series stale).
      await eventually(
        async () =>
          (await scalar('sum(fencer_jobs{phase="Pending"})')) === 0 &&
          (await scalar('max(fencer_pending_oldest_seconds)')) === 0 &&
          (await scalar('sum(fencer_nodes{state="Ready"})')) === 2,
        { what: 'nothing pending, both nodes Ready' },
      );
      // Lateness: every start counted once by the replica that applied it (the dead one's too, in the
      // window): 12, and one more for each job moved off a node that fenced itself under load.
      const starts = async () =>
        (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM assignments WHERE started_at IS NOT NULL'))
          .rows[0]!.n;
      await eventually(
        async () => (await scalar('sum(max_over_time(fencer_job_lateness_seconds_count[10m]))')) === (await starts()),
        { what: 'every start counted' },
      );
      expect(await starts()).toBeGreaterThanOrEqual(12);
      const p99 = await scalar(
        'histogram_quantile(0.99, sum by (le) (max_over_time(fencer_job_lateness_seconds_bucket[10m])))',
      );
      expect(p99).toBeGreaterThan(0);
      expect(p99).toBeLessThan(10); // a takeover's wait at most, on an idle cluster
    },
  );

  it.skipIf(!!SKIP)('answers every query of the Grafana dashboard', async () => {
    const dashboard = JSON.parse(readFileSync(join(projectRoot(), 'deploy', 'grafana', 'fencer.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((target) => ({ panel: p.title, expr: target.expr })));
    expect(exprs.length).toBeGreaterThan(10);
    for (const { panel, expr } of exprs) await expect(query(expr), panel).resolves.toBeDefined();
  });
});
