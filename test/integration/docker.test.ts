// The docker runtime: replicas, agents and proxies as containers of fencer:latest on the host
// network, against this file's database. Chaos by the engine: `docker pause` freezes a leader,
// `docker kill` kills one. Skipped, saying why, where no engine answers or the image is missing
// (.ci/run starts an engine and builds the image when it can; locally: `make image`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { freePort } from '../../src/net/free-port.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_IMAGE, dockerUnavailable } from '../../src/simulator/docker-runtime.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, jobPhases, runFindings } from '../helpers/history.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { unfinishedCount } from '../../src/store/jobs.js';
import { leaderAfter as leaderAfterEpoch } from '../helpers/leader.js';
import { adminFetch, TEST_KEY } from '../helpers/auth.js';

// Set before testcontainers is first loaded (imported lazily below). Its reaper is an image of
// its own and nothing can be pulled here: the tests remove what they start. And it finds the
// host through the bridge network's gateway, which an engine without a bridge lacks.
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';

const unavailable = await dockerUnavailable();
if (unavailable) console.warn(`docker runtime tests skipped: ${unavailable}`);
const suite = unavailable ? describe.skip : describe;

const docker = new Docker();
let t: TestDatabase;

beforeAll(async () => {
  if (unavailable) return;
  t = await freshDatabase('docker');
});

afterAll(async () => {
  await t?.close();
});

suite('a replica in a container (testcontainers)', () => {
  it('serves /healthz and /readyz against the test database', async () => {
    const { GenericContainer, Wait } = await import('testcontainers');
    const port = await freePort();
    const replica = await new GenericContainer(DEFAULT_IMAGE)
      .withNetworkMode('host')
      .withCommand([
        'node',
        '/app/dist/cli/main.js',
        'replica',
        '--name',
        'tc-replica',
        '--port',
        String(port),
        '--database-url',
        t.url,
        '--jwks',
        '/tmp/jwks.json',
      ])
      // The run's public key, which the admin token of adminFetch is signed with.
      .withCopyContentToContainer([
        { content: JSON.stringify({ keys: [TEST_KEY.publicJwk] }), target: '/tmp/jwks.json' },
      ])
      .withEnvironment({ FENCER_LOG_LEVEL: 'info' })
      .withWaitStrategy(Wait.forLogMessage('replica serving'))
      .withStartupTimeout(60_000)
      .start();
    try {
      const health = await adminFetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const ready = await eventually(async () => (await adminFetch(`http://127.0.0.1:${port}/readyz`)).ok, {
        what: '/readyz',
      });
      expect(ready).toBe(true);
    } finally {
      await replica.stop({ timeout: 5_000 });
    }
  });
});

suite('a cluster of containers', () => {
  let cluster: Cluster;
  let home: string;

  async function unfinished(): Promise<number> {
    return unfinishedCount(t.db);
  }

  async function allFinished(): Promise<void> {
    await eventually(async () => (await unfinished()) === 0, { timeoutMs: 90_000, what: 'every job to finish' });
  }

  /** Submits `count` jobs, one every `everyMs`, while the caller disturbs the cluster. */
  async function flow(prefix: string, count: number, everyMs: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await eventually(
        async () =>
          (await submit(cluster.replicaUrls, jobYaml(`${prefix}-${i}`, { cpu: '500m', memory: '256Mi' }))) < 300,
        {
          what: `submission of ${prefix}-${i}`,
        },
      );
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  const leaderAfter = (epoch: number) => leaderAfterEpoch(cluster, epoch, 30_000);

  /** The container whose init process is this pid, as the engine sees it. */
  async function containerOf(pid: number): Promise<Docker.ContainerInspectInfo> {
    for (const c of await docker.listContainers({ all: true, filters: { label: ['dev.fencer.cluster'] } })) {
      const info = await docker.getContainer(c.Id).inspect();
      if (info.State.Pid === pid) return info;
    }
    throw new Error(`no container has init pid ${pid}`);
  }

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fencer-docker-'));
    const started = Date.now();
    cluster = await Cluster.start({
      runtime: 'docker',
      replicas: 3,
      nodes: 2,
      nodeCpu: '2',
      nodeMemory: '4Gi',
      databaseUrl: t.url,
      home,
      timings: DEFAULT_TIMINGS,
    });
    console.log(`docker cluster (3 replicas, 2 nodes, 2 proxies) up in ${Date.now() - started} ms`);
  });

  afterAll(async () => {
    await cluster?.stop();
    if (home && !process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
  });

  it('runs every process in a container, a node held to its CPU and memory', async () => {
    const node = await containerOf(cluster.pid('node-1')!);
    expect(node.Name).toMatch(/^\/fencer-[0-9a-f]+-node-1$/);
    expect(node.HostConfig.NetworkMode).toBe('host');
    expect(node.HostConfig.Memory).toBe(4 * 2 ** 30);
    expect(node.HostConfig.NanoCpus).toBeGreaterThan(0);
    const replica = await containerOf(cluster.pid('replica-1')!);
    expect(replica.HostConfig.NanoCpus ?? 0).toBe(0);
  });

  it('runs jobs to completion, each placed once, and the nodes log to the host', async () => {
    await flow('plain', 10, 20);
    await allFinished();
    expect(await jobPhases(t.db)).toEqual({ Succeeded: 10 });
    expect(
      await runFindings(
        t.db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    const starts = cluster.nodeNames
      .map((n) => cluster.nodeLogFile(n))
      .filter((file) => existsSync(file))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { event: string }),
      )
      .filter((l) => l.event === 'start');
    expect(starts.length).toBeGreaterThanOrEqual(10);
  });

  it('a paused leader (docker pause) is replaced at a higher epoch; nothing is placed twice', async () => {
    const jobs = flow('pause', 16, 50);
    await new Promise((r) => setTimeout(r, 300));
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    const startedAt = Date.now();
    await cluster.freeze(before.name);
    expect(cluster.isFrozen(before.name)).toBe(true);
    expect((await containerOf(cluster.pid(before.name)!)).State.Paused).toBe(true);
    const after = await leaderAfter(before.epoch);
    console.log(`docker pause: new leader ${after.name} at epoch ${after.epoch} after ${Date.now() - startedAt} ms`);
    expect(after.name).not.toBe(before.name);
    await cluster.resume(before.name);
    expect(cluster.isFrozen(before.name)).toBe(false);
    await jobs;
    await allFinished();
    expect(
      await runFindings(
        t.db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
  });

  it('a killed leader (docker kill) is replaced at a higher epoch; every job finishes, none placed twice', async () => {
    const jobs = flow('kill', 16, 50);
    await new Promise((r) => setTimeout(r, 300));
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    const startedAt = Date.now();
    await cluster.kill(before.name);
    const after = await leaderAfter(before.epoch);
    console.log(`docker kill: new leader ${after.name} at epoch ${after.epoch} after ${Date.now() - startedAt} ms`);
    expect(after.name).not.toBe(before.name);
    await eventually(() => !cluster.isRunning(before.name), { what: `${before.name} to be gone` });
    await jobs;
    await allFinished();
    expect(
      await runFindings(
        t.db,
        cluster.nodeNames.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    expect(await jobPhases(t.db)).toEqual({ Succeeded: 42 });
  });
});
