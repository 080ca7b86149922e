// Workflows and the job lifecycle on a cluster of real processes: 3 replicas and 6 agents (linux,
// windows and darwin nodes in two pools; one holds the toolchain image). A CI matrix with needs,
// a failure skipping its dependents and a retry of the workflow, retries with backoff through the
// real agent, a dead letter replayed with the CLI, and cancels from any replica. The checker over
// the history and the nodes' run logs finds nothing placed twice, run twice, over capacity, early
// or placed before its needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, runFindings } from '../helpers/history.js';
import { anyReplica, jobYaml, submit } from '../helpers/jobs.js';
import { workflowYaml, type TestJob } from '../helpers/workflows.js';
import type { Job, List, Workflow } from '../../src/domain/resources.js';
import { adminFetch, tokenFor } from '../helpers/auth.js';
import { MASTERS_GROUP } from '../../src/auth/rbac/builtin.js';

const NODES = ['node-1', 'node-2', 'node-3', 'node-4', 'node-5', 'node-6'];
const OS = ['linux', 'windows', 'darwin'];

let t: TestDatabase;
let cluster: Cluster;
let home: string;

beforeAll(async () => {
  t = await freshDatabase('workflows');
  home = mkdtempSync(join(tmpdir(), 'fencer-workflows-'));
  cluster = await Cluster.start({
    replicas: 3,
    nodes: NODES.length,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    nodeLabels: (i) => ({ os: OS[i % 3]!, pool: i < 3 ? 'ci' : 'batch' }),
    nodeImages: (i) => (i === 0 ? ['toolchain:1'] : []),
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
  });
});

afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
});

const logs = () => NODES.map((n) => cluster.nodeLogFile(n));

function runLog(node: string): Array<Record<string, any>> {
  const file = cluster.nodeLogFile(node);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const allRunLines = () => NODES.flatMap((n) => runLog(n));

async function api<T>(method: string, path: string, body?: string, url?: string): Promise<{ status: number; body: T }> {
  const call = async (base: string) => {
    const res = await adminFetch(`${base}${path}`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/yaml' } : {},
      signal: AbortSignal.timeout(5000),
    });
    if (res.status >= 500) throw new Error(`${res.status}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  return url ? call(url) : anyReplica(cluster.replicaUrls, call);
}

async function createWorkflow(name: string, jobs: TestJob[], opts: { pool?: string } = {}): Promise<void> {
  expect((await api('POST', '/api/v1/workflows', workflowYaml(name, jobs, opts))).status).toBe(201);
}

async function workflow(name: string): Promise<Workflow> {
  return (await api<Workflow>('GET', `/api/v1/namespaces/default/workflows/${name}`)).body;
}

async function closed(name: string, timeoutMs = 60_000): Promise<Workflow> {
  return eventually(
    async () => {
      const w = await workflow(name);
      return w.status?.phase !== 'Running' ? w : null;
    },
    { timeoutMs, what: `workflow ${name} to close` },
  );
}

async function job(name: string): Promise<Job> {
  return (await api<Job>('GET', `/api/v1/namespaces/default/jobs/${name}`)).body;
}

const phases = (w: Workflow) => Object.fromEntries((w.status?.jobs ?? []).map((j) => [j.name, j.phase]));

describe('workflows on real nodes', () => {
  it('runs a CI matrix across linux, windows and darwin nodes in its pool, each stage after its needs', async () => {
    await createWorkflow(
      'ci',
      [
        { name: 'build', template: { image: 'toolchain:1', nodeSelector: { os: 'linux' }, duration: '2s' } },
        ...OS.map((os) => ({
          name: `test-${os}`,
          needs: ['build'],
          template: { nodeSelector: { os }, duration: '2s' },
        })),
        { name: 'release', needs: OS.map((os) => `test-${os}`), template: { nodeSelector: { os: 'linux' } } },
      ],
      { pool: 'ci' },
    );
    const done = await closed('ci');
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.jobs.map((j) => [j.name, j.stage])).toEqual([
      ['build', 0],
      ['test-linux', 1],
      ['test-windows', 1],
      ['test-darwin', 1],
      ['release', 2],
    ]);
    // Pool ci is node-1..3; only node-1 holds the image; each os on its own node.
    const nodes = Object.fromEntries(
      await Promise.all(
        ['build', ...OS.map((os) => `test-${os}`), 'release'].map(async (n) => [
          n,
          (await job(`ci-${n}`)).status?.node,
        ]),
      ),
    );
    expect(nodes).toEqual({
      build: 'node-1',
      'test-linux': 'node-1',
      'test-windows': 'node-2',
      'test-darwin': 'node-3',
      release: 'node-1',
    });
    // Its jobs are ordinary jobs, found by the workflow's label.
    const listed = await api<List<Job>>('GET', '/api/v1/jobs?namespace=default&labelSelector=fencer.dev/workflow%3Dci');
    expect(listed.body.items.map((j) => j.metadata.name).sort()).toEqual([
      'ci-build',
      'ci-release',
      'ci-test-darwin',
      'ci-test-linux',
      'ci-test-windows',
    ]);
    // From the nodes' own logs: every test started after build stopped, release after every test.
    const lines = allRunLines();
    const at = (jobName: string, event: string) =>
      lines.find((l) => l.job === `default/${jobName}` && l.event === event)!.wallMs as number;
    for (const os of OS) expect(at(`ci-test-${os}`, 'start')).toBeGreaterThanOrEqual(at('ci-build', 'stop'));
    for (const os of OS) expect(at('ci-release', 'start')).toBeGreaterThanOrEqual(at(`ci-test-${os}`, 'stop'));
    expect(await runFindings(t.db, logs())).toEqual(CLEAN);
  });

  it('skips what a failure blocks, names the need, runs the independent part, then retries from the failed job', async () => {
    await createWorkflow(
      'flow',
      [
        { name: 'extract', template: { retryPolicy: 'Never', simulate: { failAttempts: 1, exitCode: 4 } } },
        { name: 'transform', needs: ['extract'] },
        { name: 'load', needs: ['transform'] },
        { name: 'audit' },
      ],
      { pool: 'batch' },
    );
    const failed = await closed('flow');
    expect(failed.status?.phase).toBe('Failed');
    expect(phases(failed)).toEqual({ extract: 'Failed', transform: 'Skipped', load: 'Skipped', audit: 'Succeeded' });
    const transform = await job('flow-transform');
    expect(transform.status?.conditions[0]).toMatchObject({
      reason: 'NeedFailed',
      message: 'need flow-extract ended Failed',
    });
    expect((await job('flow-extract')).status?.conditions[0]).toMatchObject({
      reason: 'Error',
      message: 'exit code 4',
    });

    expect((await api('POST', '/api/v1/namespaces/default/workflows/flow/retry')).status).toBe(200);
    const retried = await closed('flow');
    expect(retried.status?.phase).toBe('Succeeded');
    // audit had succeeded: it was not run again.
    expect(allRunLines().filter((l) => l.job === 'default/flow-audit' && l.event === 'start')).toHaveLength(1);
    expect(allRunLines().filter((l) => l.job === 'default/flow-extract' && l.event === 'start')).toHaveLength(2);
    expect(await runFindings(t.db, logs())).toEqual(CLEAN);
  });

  it('retries a failing job after a backoff, never early, on the real agent', async () => {
    const yaml = jobYaml('flaky', { duration: '1s' }).replace(
      'duration: 1s',
      'duration: 1s\n  maxAttempts: 3\n  backoff: { base: 500ms, cap: 2s }\n  simulate: { failAttempts: 2, exitCode: 9, failAfter: 300ms }',
    );
    expect(await submit(cluster.replicaUrls, yaml)).toBe(201);
    const done = await eventually(
      async () => ((await job('flaky')).status?.phase === 'Succeeded' ? job('flaky') : null),
      { what: 'flaky to succeed' },
    );
    expect(done.status?.attempt).toBe(3);
    const stops = allRunLines()
      .filter((l) => l.job === 'default/flaky' && l.event === 'stop')
      .map((l) => l.reason);
    expect(stops).toEqual(['failed', 'failed', 'completed']);
    expect(await runFindings(t.db, logs())).toEqual(CLEAN);
  });

  it('parks a job out of attempts as a dead letter, and `fencer replay` brings it back, naming who', async () => {
    const yaml = jobYaml('hopeless', { duration: '1s' }).replace(
      'duration: 1s',
      'duration: 1s\n  maxAttempts: 1\n  simulate: { failAttempts: 1 }',
    );
    expect(await submit(cluster.replicaUrls, yaml)).toBe(201);
    await eventually(async () => (await job('hopeless')).status?.phase === 'Dead', { what: 'hopeless to be Dead' });
    const dead = await api<List<Job>>('GET', '/api/v1/jobs?namespace=default&fieldSelector=status.phase%3DDead');
    expect(dead.body.items.map((j) => j.metadata.name)).toContain('hopeless');
    const cli = join(projectRoot(), 'dist', 'cli', 'main.js');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'replay', 'job', 'hopeless', '--server', cluster.replicaUrls.join(',')],
      {
        // The history names the token's subject.
        env: { ...process.env, FENCER_TOKEN: await tokenFor('carol', [MASTERS_GROUP]) },
      },
    );
    expect(stdout).toContain('job.fencer.dev "hopeless" replayed');
    await eventually(async () => (await job('hopeless')).status?.phase === 'Succeeded', {
      what: 'the replayed job to succeed',
    });
    const replay = (
      await t.db.query("SELECT actor, reason FROM history WHERE job = 'default/hopeless' AND from_state = 'Dead'")
    ).rows;
    expect(replay).toEqual([{ actor: 'carol', reason: 'Replayed' }]);
  });

  it("cancels a workflow from a replica other than its nodes', and a job from its node's replica: pending at once, running stopped on the node", async () => {
    await createWorkflow(
      'long',
      [
        ...['a', 'b', 'c', 'd'].map((name) => ({ name, template: { duration: '60s' } })),
        { name: 'after', needs: ['a'] },
      ],
      { pool: 'batch' },
    );
    const running = await eventually(
      async () => {
        const w = await workflow('long');
        return w.status?.jobs.filter((j) => j.phase === 'Running').length === 4 ? w : null;
      },
      { what: 'four jobs running' },
    );
    expect(phases(running).after).toBe('Pending');
    const watchReplicas = new Set(
      (
        await t.db.query<{ watch_replica: string }>(
          "SELECT watch_replica FROM nodes WHERE name IN ('node-4', 'node-5', 'node-6')",
        )
      ).rows.map((r) => r.watch_replica),
    );
    const replicas = await api<{ replicas: Array<{ name: string; url: string }> }>('GET', '/api/v1/status');
    const elsewhere = replicas.body.replicas.find((r) => !watchReplicas.has(r.name)) ?? replicas.body.replicas[0]!;
    const cancelledAt = Date.now();
    const answer = await api<Workflow>(
      'POST',
      '/api/v1/namespaces/default/workflows/long/cancel',
      undefined,
      elsewhere.url,
    );
    expect(answer.status).toBe(200);
    expect(phases(answer.body)).toEqual({
      a: 'Cancelled',
      b: 'Cancelled',
      c: 'Cancelled',
      d: 'Cancelled',
      after: 'Cancelled',
    });
    const stops = await eventually(
      () => {
        const lines = allRunLines().filter((l) => l.event === 'stop' && /^default\/long-[a-d]$/.test(l.job));
        return lines.length === 4 ? lines : null;
      },
      { what: 'the four runs stopped on their nodes' },
    );
    expect(stops.map((l) => l.reason)).toEqual(['withdrawn', 'withdrawn', 'withdrawn', 'withdrawn']);
    const latencies = stops.map((l) => l.wallMs - cancelledAt).sort((x, y) => x - y);
    console.log(`cancel to stop on the node, ms: ${latencies.join(', ')}`);
    expect((await closed('long')).status?.phase).toBe('Cancelled');

    // A single job, from the replica that holds its node's watch stream.
    expect(await submit(cluster.replicaUrls, jobYaml('solo', { duration: '60s' }))).toBe(201);
    const solo = await eventually(async () => ((await job('solo')).status?.phase === 'Running' ? job('solo') : null), {
      what: 'solo running',
    });
    const holder = (
      await t.db.query<{ watch_replica: string }>('SELECT watch_replica FROM nodes WHERE name = $1', [
        solo.status!.node,
      ])
    ).rows[0]!.watch_replica;
    const url = replicas.body.replicas.find((r) => r.name === holder)!.url;
    expect((await api('POST', '/api/v1/namespaces/default/jobs/solo/cancel', undefined, url)).status).toBe(200);
    await eventually(
      () =>
        runLog(solo.status!.node!).some(
          (l) => l.job === 'default/solo' && l.event === 'stop' && l.reason === 'withdrawn',
        ),
      { what: 'solo stopped on its node' },
    );
    expect(await runFindings(t.db, logs())).toEqual(CLEAN);
  });
});
