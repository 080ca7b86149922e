// Watch, as Kubernetes clients use it, on a cluster of real processes through a leader kill: real
// `kubectl get -w` against a standby replica shows jobs' phases change live (each event shows the
// object as it is when streamed, so a short phase may be skipped, never a later one); an
// @kubernetes/client-node informer (list, then watch, resuming from what it last saw) keeps a
// cache that converges to the database's truth with no event missed; a resourceVersion no
// longer kept is 410 Gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { projectRoot } from '../../src/paths.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { leaderAfter } from '../helpers/leader.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { unfinishedCount } from '../../src/store/jobs.js';
import { adminFetch } from '../helpers/auth.js';

const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
const { serverArgs } = await import('../helpers/kubectl.js');
let t: TestDatabase;
let cluster: Cluster;
let home: string;

beforeAll(async () => {
  t = await freshDatabase('kube_watch');
  home = mkdtempSync(join(tmpdir(), 'fencer-kube-watch-'));
  cluster = await Cluster.start({
    replicas: 3,
    nodes: 2,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    restart: true,
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/**
 * A replica that does not lead and answers: killing the leader leaves its watches open. (The
 * leader a test before killed is a standby too once restarted, and may still be starting.)
 */
async function standby(): Promise<string> {
  return eventually(
    async () => {
      const leader = await cluster.leader();
      for (const name of cluster.replicaNames.filter((n) => leader && n !== leader.name)) {
        const url = cluster.replicaUrl(name);
        const res = await cluster.fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
        if (res?.ok) return url;
      }
      return null;
    },
    { what: 'a standby that answers' },
  );
}

async function phases(): Promise<Map<string, string>> {
  const rows = (
    await t.db.query<{ name: string; phase: string }>("SELECT name, phase FROM jobs WHERE namespace = 'default'")
  ).rows;
  return new Map(rows.map((r) => [r.name, r.phase]));
}

describe('watch', () => {
  it('an informer of @kubernetes/client-node converges to the truth through a leader kill', async () => {
    const server = await standby();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // Over TLS, as a client library sends a token (the replica's port answers https too).
      clusters: [{ name: 'fencer', server: server.replace(/^http:/, 'https:'), skipTLSVerify: true }],
      users: [{ name: 'user', token: process.env.FENCER_TOKEN }],
      contexts: [{ name: 'fencer', cluster: 'fencer', user: 'user' }],
      currentContext: 'fencer',
    });
    const api = kc.makeApiClient(CustomObjectsApi);
    const path = '/apis/fencer.dev/v1/namespaces/default/jobs';
    const informer = makeInformer(
      kc,
      path,
      () =>
        api.listNamespacedCustomObject({
          group: 'fencer.dev',
          version: 'v1',
          namespace: 'default',
          plural: 'jobs',
        }) as never,
    );
    const seen: string[] = [];
    informer.on('add', (o: KubernetesObject) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o: KubernetesObject) => seen.push(`update ${o.metadata?.name}`));
    informer.on('error', () => setTimeout(() => void informer.start(), 500)); // a closed watch is restarted, as controllers do
    await informer.start();

    // Half through the library's CustomObjectsApi (a create on the Kubernetes path), half through fencer's own API.
    for (let i = 0; i < 6; i++) {
      const body = {
        apiVersion: 'fencer.dev/v1',
        kind: 'Job',
        metadata: { name: `inf-${i}` },
        spec: { resources: { cpu: '1', memory: '1Gi' }, duration: '1s' },
      };
      const created = (await api.createNamespacedCustomObject({
        group: 'fencer.dev',
        version: 'v1',
        namespace: 'default',
        plural: 'jobs',
        body,
      })) as KubernetesObject;
      expect(created.metadata?.name).toBe(`inf-${i}`);
    }
    const first = await eventually(() => cluster.leader(), { what: 'a leader' });
    await cluster.kill(first.name);
    await leaderAfter(cluster, first.epoch);
    for (let i = 6; i < 12; i++)
      expect(await submit(cluster.replicaUrls, jobYaml(`inf-${i}`, { duration: '1s' }))).toBe(201);
    await eventually(async () => (await unfinishedCount(t.db)) === 0, {
      timeoutMs: 60_000,
      what: 'every job to finish',
    });

    // The cache converges: every job, in the phase the database has.
    await eventually(
      async () => {
        const truth = await phases();
        const cached = new Map(
          informer.list().map((o) => [o.metadata!.name!, (o as { status?: { phase?: string } }).status?.phase ?? '']),
        );
        return [...truth].every(([name, phase]) => cached.get(name) === phase) && cached.size === truth.size;
      },
      { timeoutMs: 30_000, what: 'the informer cache to match the database' },
    );
    expect(seen.filter((s) => s.startsWith('add inf-'))).toHaveLength(12);
    await informer.stop();
  }, 120_000);

  it('a resourceVersion no longer kept is 410 Gone (ERROR event, reason Expired)', async () => {
    // The leader: alive, whichever replica the test before killed.
    const server = cluster.replicaUrl((await eventually(() => cluster.leader(), { what: 'a leader' })).name);
    const res = await adminFetch(`${server}/apis/fencer.dev/v1/namespaces/default/jobs?watch=1&resourceVersion=1`);
    await t.db.query('DELETE FROM watch_events WHERE id <= 1');
    const again = await adminFetch(`${server}/apis/fencer.dev/v1/namespaces/default/jobs?watch=1&resourceVersion=1`);
    void res.body?.cancel();
    const line = (await again.text()).trim().split('\n')[0]!;
    expect(JSON.parse(line)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it.skipIf(!KUBECTL)(
    'kubectl get -w against a standby shows phases change live through a leader kill',
    async () => {
      const server = await standby();
      const watcher = spawn(
        KUBECTL!,
        [...serverArgs(server), '--cache-dir', join(home, 'kcache'), 'get', 'fj', '-w', '--request-timeout', '0'],
        { env: { ...process.env, KUBECONFIG: join(home, 'none') } },
      );
      let out = '';
      let err = '';
      watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
      watcher.stderr.on('data', (d: Buffer) => (err += d.toString()));
      try {
        await eventually(
          () => {
            if (watcher.exitCode !== null) throw new Error(`kubectl exited ${watcher.exitCode}: ${err}`);
            return out.includes('NAME');
          },
          { what: 'the header' },
        );
        expect(await submit(cluster.replicaUrls, jobYaml('live-1', { duration: '2s' }))).toBe(201);
        await eventually(() => /^live-1\s+Running/m.test(out), {
          timeoutMs: 20_000,
          what: 'live-1 Running in the watch',
        });
        const leader = await eventually(() => cluster.leader(), { what: 'a leader' });
        await cluster.kill(leader.name);
        await leaderAfter(cluster, leader.epoch);
        expect(await submit(cluster.replicaUrls, jobYaml('live-2', { duration: '1s' }))).toBe(201);
        await eventually(() => /^live-1\s+Succeeded/m.test(out) && /^live-2\s+Succeeded/m.test(out), {
          timeoutMs: 30_000,
          what: 'both to succeed in the watch',
        });
      } finally {
        watcher.kill();
      }
    },
    90_000,
  );

  it('fencer get jobs -w goes on through the death of the replica it watched, from the last version it saw', async () => {
    const leader = await eventually(() => cluster.leader(), { what: 'a leader' });
    const servers = [
      cluster.replicaUrl(leader.name),
      ...cluster.replicaNames.filter((n) => n !== leader.name).map((n) => cluster.replicaUrl(n)),
    ];
    const watcher = spawn(process.execPath, [
      join(projectRoot(), 'dist', 'cli', 'main.js'),
      'get',
      'jobs',
      '-w',
      '--server',
      servers.join(','),
    ]);
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    watcher.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      // The list first (a loaded machine may take seconds to start the CLI): a job submitted before
      // it could end before the list, and never be seen Running.
      await eventually(() => out.length > 0, { timeoutMs: 30_000, what: 'the watch to print its list' });
      expect(await submit(cluster.replicaUrls, jobYaml('cli-live-1', { duration: '2s' }))).toBe(201);
      await eventually(() => /^NAME\s+PHASE/m.test(out) && /^cli-live-1\s+Running/m.test(out), {
        timeoutMs: 30_000,
        what: 'cli-live-1 Running in the watch',
      }).catch((err: Error) => {
        // What the watch printed by the deadline, not when the wait began.
        throw new Error(`${err.message} (it printed: ${JSON.stringify(out)}; exit code ${watcher.exitCode})`);
      });
      await cluster.kill(leader.name); // the replica this watch streams from
      await leaderAfter(cluster, leader.epoch);
      expect(await submit(cluster.replicaUrls, jobYaml('cli-live-2', { duration: '1s' }))).toBe(201);
      await eventually(() => /^cli-live-1\s+Succeeded/m.test(out) && /^cli-live-2\s+Succeeded/m.test(out), {
        timeoutMs: 30_000,
        what: 'both to succeed in the watch',
      });
      expect(out).not.toMatch(/error/i);
      expect(watcher.exitCode).toBeNull(); // still watching
    } finally {
      watcher.kill('SIGINT');
    }
  }, 90_000);
});
