// Queues and ResourceQuotas on the API of a real replica: apply (201, then 200), get, list and
// delete; a queue with unfinished jobs is not deleted; a job naming a queue that does not exist is
// refused on spec.queue and nothing is stored; the pending-jobs cap answers 429 with Retry-After
// and stores nothing; one quota per namespace (409); on a node, a queue at its limit holds its job
// back with the reason QueueAtLimit, and the namespace shows its use and its oldest waiting job.
// Last, the CLI (dist/cli/main.js) against the same replica.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { eventually } from '../helpers/eventually.js';
import { projectRoot } from '../../src/paths.js';
import type { Replica } from '../../src/replica.js';
import { adminFetch } from '../helpers/auth.js';
import { TestNodes } from '../helpers/nodes.js';

let t: TestDatabase;
let replica: Replica;
// Node n1 (registered below) heartbeats and watches until the end: the CLI reads what it holds.
let beating: NodeJS.Timeout | undefined;
const watch = new AbortController();

beforeAll(async () => {
  t = await freshDatabase('queue_api');
  // Placements stay Assigned without the node claiming them: what a placed job holds stays put.
  replica = await startReplica(t.url, 'replica-q', { confirmTimeoutMs: 120_000 });
});

afterAll(async () => {
  clearInterval(beating);
  watch.abort();
  await replica?.stop();
  await t?.close();
});

async function call(method: string, path: string, body?: string, contentType = 'application/yaml') {
  const res = await adminFetch(replica.url + path, {
    method,
    body,
    headers: body ? { 'content-type': contentType } : {},
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

function queueYaml(name: string, namespace: string, spec = '{}'): string {
  return `apiVersion: fencer.dev/v1\nkind: Queue\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec: ${spec}\n`;
}

function quotaYaml(name: string, namespace: string, spec: string): string {
  return `apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec: ${spec}\n`;
}

function jobYaml(
  name: string,
  namespace: string,
  opts: { queue?: string; cpu?: string; memory?: string } = {},
): string {
  return `apiVersion: fencer.dev/v1
kind: Job
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  resources: { cpu: ${opts.cpu ?? '100m'}, memory: ${opts.memory ?? '64Mi'} }
  duration: 1h
${opts.queue ? `  queue: ${opts.queue}\n` : ''}`;
}

const count = async (table: 'jobs' | 'queues' | 'resource_quotas'): Promise<number> =>
  (await t.db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

const messages = (body: any): string =>
  [body.error.message, ...(body.error.details ?? []).map((d: any) => `${d.path}: ${d.message}`)].join('\n');

describe('queues', () => {
  it('are applied (201, then 200 unchanged or changed), read, listed and deleted', async () => {
    const created = await call(
      'POST',
      '/api/v1/queues',
      queueYaml('batch', 'team-a', '{ weight: 3, concurrencyLimit: 2 }'),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'fencer.dev/v1',
      kind: 'Queue',
      metadata: { name: 'batch', namespace: 'team-a', resourceVersion: expect.stringMatching(/^\d+$/) },
      spec: { weight: 3, concurrencyLimit: 2, lanes: 'weighted' },
      status: {
        running: 0,
        pending: 0,
        allocated: { cpu: '0', memory: '0' },
        conditions: [{ type: 'AtLimit', status: 'False', reason: 'WithinLimits' }],
      },
    });

    const again = await call(
      'POST',
      '/api/v1/queues',
      queueYaml('batch', 'team-a', '{ weight: 3, concurrencyLimit: 2 }'),
    );
    expect(again.status).toBe(200);
    // The same again changes nothing, so not its resourceVersion (its latest watch event).
    expect(again.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    const changed = await call(
      'POST',
      '/api/v1/queues',
      queueYaml('batch', 'team-a', '{ weight: 2, concurrencyLimit: 2, lanes: strict }'),
    );
    expect(changed.status).toBe(200);
    expect(Number(changed.body.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.body.metadata.resourceVersion),
    );

    const got = await call('GET', '/api/v1/namespaces/team-a/queues/batch');
    expect(got.status).toBe(200);
    expect(got.body.spec).toEqual({ weight: 2, concurrencyLimit: 2, lanes: 'strict' });
    for (const path of ['/api/v1/queues', '/api/v1/queues?namespace=team-a', '/api/v1/namespaces/team-a/queues']) {
      const list = await call('GET', path);
      expect(list.body.kind).toBe('QueueList');
      expect(list.body.items.map((q: any) => `${q.metadata.namespace}/${q.metadata.name}`)).toContain('team-a/batch');
    }
    expect((await call('GET', '/api/v1/queues?namespace=elsewhere')).body.items).toEqual([]);

    const deleted = await call('DELETE', '/api/v1/namespaces/team-a/queues/batch');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'batch', namespace: 'team-a' },
    });
    expect((await call('GET', '/api/v1/namespaces/team-a/queues/batch')).status).toBe(404);
    expect((await call('DELETE', '/api/v1/namespaces/team-a/queues/batch')).status).toBe(404);
  });

  it('refuses a bad queue with the field and line, storing nothing', async () => {
    const before = await count('queues');
    const refused = await call('POST', '/api/v1/queues', queueYaml('bad', 'team-a', '\n  weight: 0\n  lanes: fifo'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { path: 'spec.weight', message: 'must be greater than 0', line: 7 },
      { path: 'spec.lanes', message: '"fifo" is not one of weighted, strict', line: 8 },
    ]);
    expect(await count('queues')).toBe(before);
  });

  it('is not deleted while one of its jobs is unfinished; the default queue never is', async () => {
    expect((await call('POST', '/api/v1/queues', queueYaml('busy', 'team-b'))).status).toBe(201);
    expect((await call('POST', '/api/v1/jobs', jobYaml('in-busy', 'team-b', { queue: 'busy' }))).status).toBe(201);
    const refused = await call('DELETE', '/api/v1/namespaces/team-b/queues/busy');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/queue team-b\/busy cannot be deleted: 1 of its jobs have not finished/);
    expect((await call('GET', '/api/v1/namespaces/team-b/queues/busy')).status).toBe(200);

    expect((await call('DELETE', '/api/v1/namespaces/team-b/jobs/in-busy')).status).toBe(200);
    expect((await call('DELETE', '/api/v1/namespaces/team-b/queues/busy')).status).toBe(200);

    const always = await call('DELETE', '/api/v1/namespaces/team-b/queues/default');
    expect(always.status).toBe(409);
    expect(always.body.error.message).toMatch(/"default" always exists/);
  });

  it('must exist for a job to name it: 400 on spec.queue, nothing stored (alone or in a batch)', async () => {
    const before = await count('jobs');
    const alone = await call('POST', '/api/v1/jobs', jobYaml('lost', 'team-a', { queue: 'nope' }));
    expect(alone.status).toBe(400);
    expect(alone.body.error.details).toEqual([
      { path: 'spec.queue', message: 'queue "nope" does not exist in namespace "team-a" (create it with kind: Queue)' },
    ]);
    const batch = await call(
      'POST',
      '/api/v1/jobs',
      `${jobYaml('fine', 'team-a')}---\n${jobYaml('lost', 'team-a', { queue: 'nope' })}`,
    );
    expect(batch.status).toBe(400);
    expect(messages(batch.body)).toMatch(/spec\.queue: queue "nope" does not exist/);
    expect(await count('jobs')).toBe(before);
  });
});

describe('resource quotas', () => {
  it('cap the jobs waiting to be placed: 429 with Retry-After past it, nothing stored', async () => {
    const applied = await call(
      'POST',
      '/api/v1/resourcequotas',
      quotaYaml('limits', 'capped', '{ hard: { pendingJobs: 2 }, placementRate: { perSecond: 0.5 } }'),
    );
    expect(applied.status).toBe(201);
    expect(applied.body).toMatchObject({
      kind: 'ResourceQuota',
      metadata: { name: 'limits', namespace: 'capped' },
      spec: { hard: { pendingJobs: 2 }, placementRate: { perSecond: 0.5, burst: 1 } },
      status: { used: { pendingJobs: 0 } },
    });
    expect((await call('POST', '/api/v1/jobs', jobYaml('one', 'capped'))).status).toBe(201);
    expect((await call('POST', '/api/v1/jobs', jobYaml('two', 'capped'))).status).toBe(201);

    const before = await count('jobs');
    const third = await call('POST', '/api/v1/jobs', jobYaml('three', 'capped'));
    expect(third.status).toBe(429);
    // One job too many, placed at 0.5 a second: come back in 2 s.
    expect(third.headers.get('retry-after')).toBe('2');
    expect(third.body.error.message).toMatch(
      /ResourceQuota limits allows 2 jobs waiting to be placed; 2 wait and this adds 1\. Nothing was stored/,
    );
    const batch = await call('POST', '/api/v1/jobs', `${jobYaml('four', 'capped')}---\n${jobYaml('five', 'capped')}`);
    expect(batch.status).toBe(429);
    expect(batch.headers.get('retry-after')).toBe('4');
    expect(await count('jobs')).toBe(before);
    // A job sent again, already stored, adds nothing to wait: the same answer as without a cap.
    expect((await call('POST', '/api/v1/jobs', jobYaml('two', 'capped'))).status).toBe(200);
    // Other namespaces are not capped by it.
    expect((await call('POST', '/api/v1/jobs', jobYaml('free', 'uncapped'))).status).toBe(201);

    const quota = await call('GET', '/api/v1/namespaces/capped/resourcequotas/limits');
    expect(quota.body.status.used.pendingJobs).toBe(2);
    expect(quota.body.status.conditions[0]).toMatchObject({ type: 'AtLimit', status: 'True', reason: 'PendingJobs' });
  });

  it('are one per namespace: a second is 409 and changes nothing; deleting the quota lifts the cap', async () => {
    const second = await call(
      'POST',
      '/api/v1/resourcequotas',
      quotaYaml('other', 'capped', '{ hard: { pendingJobs: 100 } }'),
    );
    expect(second.status).toBe(409);
    expect(second.body.error.message).toMatch(/^namespace capped already has ResourceQuota limits/);
    const list = await call('GET', '/api/v1/resourcequotas?namespace=capped');
    expect(list.body.kind).toBe('ResourceQuotaList');
    expect(list.body.items.map((q: any) => [q.metadata.name, q.spec.hard.pendingJobs])).toEqual([['limits', 2]]);
    expect((await call('GET', '/api/v1/namespaces/capped/resourcequotas/other')).status).toBe(404);

    const changed = await call(
      'POST',
      '/api/v1/resourcequotas',
      quotaYaml('limits', 'capped', '{ hard: { pendingJobs: 3 } }'),
    );
    expect(changed.status).toBe(200);
    expect(changed.body.spec).toEqual({ hard: { pendingJobs: 3 } });
    expect((await call('POST', '/api/v1/jobs', jobYaml('three', 'capped'))).status).toBe(201);
    expect((await call('POST', '/api/v1/jobs', jobYaml('four', 'capped'))).status).toBe(429);

    expect((await call('DELETE', '/api/v1/namespaces/capped/resourcequotas/limits')).status).toBe(200);
    expect((await call('DELETE', '/api/v1/namespaces/capped/resourcequotas/limits')).status).toBe(404);
    expect((await call('POST', '/api/v1/jobs', jobYaml('four', 'capped'))).status).toBe(201);
    expect(await count('resource_quotas')).toBe(0);
  });

  it('refuses a quota that limits nothing, naming spec and the line', async () => {
    const refused = await call('POST', '/api/v1/resourcequotas', quotaYaml('empty', 'capped', '{}'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { path: 'spec', message: 'Required value: hard or placementRate (a quota that limits nothing)', line: 6 },
    ]);
    expect(await count('resource_quotas')).toBe(0);
  });
});

describe('a namespace on a node', () => {
  it('places within limits, holds a queue at its limit back (QueueAtLimit), and shows its use and oldest waiting job', async () => {
    const nodes = new TestNodes(() => replica.url, t.db);
    expect((await nodes.register({ name: 'n1', capacity: { cpu: '4', memory: '8Gi' }, labels: {} })).status).toBe(200);
    beating = setInterval(() => void nodes.heartbeat('n1').catch(() => {}), 300);
    const stream = await nodes.fetch('n1', '/api/v1/nodes/n1/watch', { signal: watch.signal });
    expect(stream.status).toBe(200);
    void (async () => {
      for await (const _ of stream.body as any); // read (and drop) the snapshots, as a node does
    })().catch(() => {});

    expect(
      (
        await call(
          'POST',
          '/api/v1/resourcequotas',
          quotaYaml('team-quota', 'team-c', '{ hard: { pendingJobs: 10, cpu: 4, memory: 8Gi } }'),
        )
      ).status,
    ).toBe(201);
    expect((await call('POST', '/api/v1/queues', queueYaml('fast', 'team-c', '{ weight: 3 }'))).status).toBe(201);
    expect((await call('POST', '/api/v1/queues', queueYaml('held', 'team-c', '{ concurrencyLimit: 0 }'))).status).toBe(
      201,
    );
    expect((await call('POST', '/api/v1/jobs', jobYaml('waits', 'team-c', { queue: 'held' }))).status).toBe(201);
    expect(
      (await call('POST', '/api/v1/jobs', jobYaml('runs', 'team-c', { queue: 'fast', cpu: '1', memory: '1Gi' })))
        .status,
    ).toBe(201);

    await eventually(
      async () => (await call('GET', '/api/v1/namespaces/team-c/jobs/runs')).body.status.phase === 'Assigned',
      { what: 'runs to be placed' },
    );
    const waiting = await eventually(
      async () => {
        const job = (await call('GET', '/api/v1/namespaces/team-c/jobs/waits')).body;
        return job.status.conditions.some((c: any) => c.reason === 'QueueAtLimit') && job;
      },
      { what: 'waits to be marked QueueAtLimit' },
    );
    expect(waiting.status.phase).toBe('Pending');
    expect(waiting.status.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Scheduled',
        status: 'False',
        reason: 'QueueAtLimit',
        message: expect.stringMatching(/team-c\/held/),
      }),
    );

    const held = (await call('GET', '/api/v1/namespaces/team-c/queues/held')).body;
    expect(held.status).toMatchObject({
      running: 0,
      pending: 1,
      conditions: [{ type: 'AtLimit', status: 'True', reason: 'ConcurrencyLimit' }],
    });
    expect(Date.parse(held.status.oldestPendingTime)).toBeGreaterThan(0);

    const namespace = await call('GET', '/api/v1/namespaces/team-c');
    expect(namespace.status).toBe(200);
    expect(namespace.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-c' },
      status: {
        pendingJobs: 1,
        runningJobs: 1,
        allocated: { cpu: '1', memory: '1Gi' },
        oldestPending: { name: 'waits' },
        quota: {
          name: 'team-quota',
          hard: { pendingJobs: 10, cpu: '4', memory: '8Gi' },
          used: { pendingJobs: 1, cpu: '1', memory: '1Gi' },
        },
      },
    });
    expect(namespace.body.status.oldestPending.since).toBe(held.status.oldestPendingTime);
    expect(namespace.body.status.queues).toEqual([
      { name: 'default', weight: 1, running: 0, allocated: { cpu: '0', memory: '0' }, pending: 0 },
      { name: 'fast', weight: 3, running: 1, allocated: { cpu: '1', memory: '1Gi' }, pending: 0 },
      {
        name: 'held',
        weight: 1,
        running: 0,
        concurrencyLimit: 0,
        allocated: { cpu: '0', memory: '0' },
        pending: 1,
        oldestPendingTime: held.status.oldestPendingTime,
      },
    ]);

    expect((await call('GET', '/api/v1/namespaces/nowhere')).status).toBe(404);
    const empty = await call('GET', '/api/v1/namespaces/default');
    expect(empty.status).toBe(200);
    expect(empty.body.status).toMatchObject({ pendingJobs: 0, runningJobs: 0 });
  });
});

describe('the CLI', () => {
  const root = projectRoot();
  const cli = join(root, 'dist', 'cli', 'main.js');
  let dir: string;

  beforeAll(() => {
    // The CLI runs from the built binary; build it when it is older than the sources it shows.
    const newest = Math.max(
      ...readdirSync(join(root, 'src', 'cli')).map((f) => statSync(join(root, 'src', 'cli', f)).mtimeMs),
    );
    if (
      !existsSync(cli) ||
      statSync(cli).mtimeMs < newest ||
      !existsSync(join(root, 'dist', 'cli', 'queue-output.js'))
    ) {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    }
    dir = mkdtempSync(join(tmpdir(), 'fencer-queue-cli-'));
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const fencer = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args, '--server', replica.url]);
    return stdout;
  };

  it('applies queues and quotas, lists, describes and deletes them', async () => {
    const file = join(dir, 'queues.yaml');
    writeFileSync(
      file,
      `${queueYaml('cli-q', 'team-d', '{ weight: 2, concurrencyLimit: 5 }')}---\n${quotaYaml('cli-quota', 'team-d', '{ hard: { pendingJobs: 7, cpu: 2 } }')}`,
    );
    expect(await fencer('apply', '-f', file)).toBe(
      'queue.fencer.dev/cli-q created\nresourcequota.fencer.dev/cli-quota created\n',
    );
    expect(await fencer('apply', '-f', file)).toBe(
      'queue.fencer.dev/cli-q configured\nresourcequota.fencer.dev/cli-quota configured\n',
    );

    const table = (await fencer('get', 'queues', '-n', 'team-d')).split('\n');
    expect(table[0]).toMatch(/^NAME\s+WEIGHT\s+LIMIT\s+RUNNING\s+PENDING\s+AGE$/);
    expect(table[1]).toMatch(/^cli-q\s+2\s+5\s+0\s+0\s+\S+$/);
    const all = await fencer('get', 'fq', '-A');
    expect(all).toMatch(/^NAMESPACE\s+NAME/);
    expect(all).toMatch(/team-c\s+held\s+1\s+0\s+0\s+1/);
    const quotas = JSON.parse(await fencer('get', 'resourcequotas', '-n', 'team-d', '-o', 'json'));
    expect(quotas).toMatchObject({
      kind: 'ResourceQuotaList',
      items: [{ metadata: { name: 'cli-quota' }, spec: { hard: { pendingJobs: 7, cpu: 2 } } }],
    });
    expect(await fencer('get', 'resourcequotas', '-n', 'team-d')).toMatch(/cli-quota\s+0\/7\s+0\/2\s+0\s+<none>/);

    const queue = await fencer('describe', 'queue', 'held', '-n', 'team-c');
    expect(queue).toMatch(/Running:\s+0 of 0/);
    expect(queue).toMatch(/Oldest Pending:\s+waiting \S+ \(since /);
    expect(queue).toMatch(/AtLimit\s+True\s+ConcurrencyLimit/);

    const namespace = await fencer('describe', 'namespace', 'team-c');
    expect(namespace).toMatch(/ResourceQuota:\s+team-quota/);
    expect(namespace).toMatch(/Pending Jobs:\s+1 of 10 \(10 %\)/);
    expect(namespace).toMatch(/CPU:\s+1 of 4 \(25 %\)/);
    expect(namespace).toMatch(/Memory:\s+1Gi of 8Gi \(13 %\)/);
    expect(namespace).toMatch(/Oldest Pending:\s+waits, waiting \S+ \(since /);
    expect(namespace).toMatch(/ {2}fast\s+3\s+1\s+1\s+1Gi\s+0\s+<none>/);
    expect(namespace).toMatch(/ {2}held\s+1\s+0\/0\s+0\s+0\s+1\s+\S+/);

    const job = await fencer('describe', 'job', 'waits', '-n', 'team-c');
    expect(job).toMatch(/Queue:\s+held/);
    expect(job).toMatch(/Scheduled\s+False\s+QueueAtLimit\s+queue team-c\/held/);

    expect(await fencer('delete', 'queue', 'cli-q', '-n', 'team-d')).toBe('queue.fencer.dev "cli-q" deleted\n');
    expect(await fencer('delete', 'resourcequota', 'cli-quota', '-n', 'team-d')).toBe(
      'resourcequota.fencer.dev "cli-quota" deleted\n',
    );
    await expect(fencer('delete', 'queue', 'held', '-n', 'team-c')).rejects.toThrow(/1 of its jobs have not finished/);
  });

  it('applies examples/queues.yaml: the queues and quota before the jobs that name them', async () => {
    const out = await fencer('apply', '-f', join(root, 'examples', 'queues.yaml'));
    expect(out.trim().split('\n')).toEqual([
      'queue.fencer.dev/interactive created',
      'queue.fencer.dev/batch created',
      'resourcequota.fencer.dev/analytics-quota created',
      ...['dashboard-refresh', 'ad-hoc-query', 'nightly-rollup', 'reindex', 'archive-logs'].map(
        (job) => `job.fencer.dev/${job} created`,
      ),
    ]);
    const queues = JSON.parse(await fencer('get', 'queues', '-n', 'analytics', '-o', 'json'));
    expect(queues.items.map((q: any) => [q.metadata.name, q.spec.weight, q.spec.concurrencyLimit])).toEqual([
      ['batch', 1, 2],
      ['default', 1, undefined],
      ['interactive', 3, undefined],
    ]);
  });
});
