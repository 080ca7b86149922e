// dryRun=All on every write verb of every kind, on fencer's routes and the Kubernetes ones: the
// answer is a real write's (same status, same object, same refusals) and nothing changes. What
// "nothing" means is read off PostgreSQL, not assumed: every table's whole content (history, the
// watch feed, idempotency keys and cluster events among them) before and after each request, and
// every notification on the channels the controllers listen on. Placement runs throughout against
// a node with room: a job a dry run created would be placed. At the end a real job is the
// barrier: its NOTIFY must be the first one heard (notifications arrive in commit order), and it
// must be the only job placed since.
// The broken variant (guard dry-run: writes ignore dryRun) runs here too, and the same checks fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { eventually } from '../helpers/eventually.js';
import { TestNodes } from '../helpers/nodes.js';
import type { Replica } from '../../src/replica.js';
import { CHANNELS } from '../../src/store/channels.js';
import { adminFetch } from '../helpers/auth.js';

const HOUR = 3_600_000;
/** The test's own channel: PostgreSQL delivers a listener's notifications in commit order, whatever the channel. */
const MARKS = 'dry_run_test';
let t: TestDatabase;
let replica: Replica;
let listener: pg.Client;
const heard: Array<{ channel: string; payload: string }> = [];
const nodeWatch = new AbortController();
let heartbeats: NodeJS.Timeout | undefined;

const job = (name: string, opts: { cpu?: string; namespace?: string } = {}) =>
  `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\n  namespace: ${opts.namespace ?? 'default'}\n  labels: { v: one }\nspec:\n  resources: { cpu: ${opts.cpu ?? '100m'}, memory: 64Mi }\n  duration: 1h\n`;
/** Larger than every node: stays Pending. */
const unplaceable = (name: string, namespace = 'default') => job(name, { cpu: '1000', namespace });
const workflow = (name: string, cpu = '100m') =>
  `apiVersion: fencer.dev/v1\nkind: Workflow\nmetadata:\n  name: ${name}\nspec:\n  jobs:\n    - name: a\n      template: { resources: { cpu: ${cpu}, memory: 64Mi }, duration: 1h }\n    - name: b\n      needs: [a]\n      template: { resources: { cpu: ${cpu}, memory: 64Mi }, duration: 1h }\n`;
const cronJob = (name: string, schedule: string) =>
  `apiVersion: fencer.dev/v1\nkind: CronJob\nmetadata:\n  name: ${name}\nspec:\n  schedule: "${schedule}"\n  suspend: true\n  jobTemplate:\n    spec: { resources: { cpu: 100m, memory: 64Mi }, duration: 1s }\n`;
const queue = (name: string, weight: number) =>
  `apiVersion: fencer.dev/v1\nkind: Queue\nmetadata:\n  name: ${name}\nspec:\n  weight: ${weight}\n`;
const quota = (namespace: string, pendingJobs: number) =>
  `apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata:\n  name: limits\n  namespace: ${namespace}\nspec:\n  hard: { pendingJobs: ${pendingJobs} }\n`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  body?: string,
  contentType = 'application/yaml',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await adminFetch(replica.url + path, {
    method,
    body,
    headers: { ...(body !== undefined ? { 'content-type': contentType } : {}), ...headers },
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: response.headers,
  };
}

const dry = (path: string) => `${path}${path.includes('?') ? '&' : '?'}dryRun=All`;

/**
 * Every table's content, as text. The lease, the replicas' and the heartbeats' rows move on their
 * own (renewals, a replica's seen_at, node-a's heartbeats): of those, the number of rows.
 */
async function everything(): Promise<Record<string, string>> {
  const tables = (
    await t.db.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    )
  ).rows;
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    if (name === 'schema_migrations') continue;
    const content = ['lease', 'replicas', 'node_heartbeats'].includes(name)
      ? `count(*)::text`
      : `coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')`;
    out[name] = (await t.db.query<{ v: string }>(`SELECT ${content} AS v FROM ${name} r`)).rows[0]!.v;
  }
  return out;
}

/** The request, then a check that it changed nothing. */
async function unchanged(request: () => Promise<Answer>): Promise<Answer> {
  const before = await everything();
  const answer = await request();
  expect(await everything()).toEqual(before);
  return answer;
}

async function withBrokenGuard<T>(fn: () => Promise<T>): Promise<T> {
  process.env.FENCER_BREAK_GUARDS = 'dry-run';
  try {
    return await fn();
  } finally {
    delete process.env.FENCER_BREAK_GUARDS;
  }
}

beforeAll(async () => {
  t = await freshDatabase('dry_run');
  replica = await startReplica(t.url, 'replica-d', {
    confirmTimeoutMs: HOUR,
    deadAfterSilentMs: HOUR,
    deadAfterDisconnectMs: HOUR,
    disconnectedQuietMs: HOUR,
  });
  // A node with room for every placeable job: registered, its watch open, one heartbeat (good for an hour).
  const nodes = new TestNodes(() => replica.url, t.db);
  expect((await nodes.register({ name: 'node-a', capacity: { cpu: '64', memory: '256Gi' }, labels: {} })).status).toBe(
    200,
  );
  const watch = await nodes.fetch('node-a', '/api/v1/nodes/node-a/watch', { signal: nodeWatch.signal });
  void watch.body?.pipeTo(new WritableStream()).catch(() => {});
  const beat = async () => expect((await nodes.heartbeat('node-a')).status).toBe(200);
  await beat();
  heartbeats = setInterval(() => void beat(), 250);
  listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload ?? '' }));
  for (const channel of [...Object.values(CHANNELS), MARKS]) await listener.query(`LISTEN ${channel}`);

  const ok = async (answer: Promise<Answer>) => {
    const { status, body } = await answer;
    expect(status, JSON.stringify(body)).toBeLessThan(300);
  };
  await ok(call('POST', '/api/v1/jobs', job('existing')));
  await ok(call('POST', '/api/v1/jobs', unplaceable('dead-one')));
  await ok(call('POST', '/api/v1/jobs', unplaceable('waiting')));
  await ok(call('POST', '/api/v1/workflows', workflow('wf', '1000')));
  await ok(call('POST', '/api/v1/workflows', workflow('stopped', '1000')));
  await ok(call('POST', '/api/v1/namespaces/default/workflows/stopped/cancel'));
  await ok(call('POST', '/api/v1/cronjobs', cronJob('nightly', '0 3 * * *')));
  await ok(call('POST', '/api/v1/queues', queue('q1', 1)));
  await ok(call('POST', '/api/v1/resourcequotas', quota('capped', 1)));
  await ok(call('POST', '/api/v1/jobs', unplaceable('huge', 'capped')));
  await t.db.query("UPDATE jobs SET phase = 'Dead' WHERE name = 'dead-one'");
  // Settled: the placeable job is placed, the rest marked as waiting for room no node has.
  await eventually(async () =>
    expect((await call('GET', '/api/v1/namespaces/default/jobs/existing')).body.status).toMatchObject({
      phase: 'Assigned',
    }),
  );
  // Its first send to node-a recorded (the watch hub records sends on its next tick).
  await eventually(
    async () =>
      (await t.db.query("SELECT 1 FROM assignments WHERE state = 'Assigned' AND confirm_by IS NULL")).rows.length === 0,
    { what: 'the send of the placed job recorded' },
  );
  await eventually(async () => {
    const open = await t.db.query(
      "SELECT name FROM jobs WHERE phase = 'Pending' AND NOT waiting AND reason IS DISTINCT FROM 'Unschedulable'",
    );
    return open.rows.length === 0;
  });
  // Every notification of the setup heard, and forgotten.
  await t.db.query(`NOTIFY ${MARKS}, 'settled'`);
  await eventually(() => expect(heard.at(-1)).toEqual({ channel: MARKS, payload: 'settled' }));
  heard.length = 0;
});

afterAll(async () => {
  clearInterval(heartbeats);
  nodeWatch.abort();
  await listener?.end();
  await replica?.stop();
  await t?.close();
});

describe('dryRun=All on fencer’s own routes', () => {
  it('creates a job, a batch and a generated name with an Idempotency-Key: answered as created, nothing stored', async () => {
    const one = await unchanged(() => call('POST', dry('/api/v1/jobs'), job('fresh')));
    expect(one.status).toBe(201);
    expect(one.body).toMatchObject({
      kind: 'Job',
      metadata: { name: 'fresh', namespace: 'default', labels: { v: 'one' } },
      status: { phase: 'Pending' },
    });
    expect((one.body.metadata as { uid?: string }).uid).toMatch(/^[0-9a-f-]{36}$/);

    const batch = await unchanged(() =>
      call(
        'POST',
        dry('/api/v1/jobs'),
        JSON.stringify([JSON.parse(JSON.stringify(yamlJob('b1'))), yamlJob('b2')]),
        'application/json',
      ),
    );
    expect(batch.status).toBe(201);
    expect((batch.body.items as unknown[]).length).toBe(2);

    const generated = await unchanged(() =>
      call('POST', dry('/api/v1/jobs'), job('x').replace('name: x', 'generateName: gen-'), 'application/yaml', {
        'idempotency-key': 'k1',
      }),
    );
    expect(generated.status).toBe(201);
    expect((generated.body.metadata as { name: string }).name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('refuses as a real write would: a changed spec (409), a quota (429 with Retry-After), bad input (400), a bad dryRun value (400)', async () => {
    const taken = await unchanged(() =>
      call('POST', dry('/api/v1/jobs'), job('existing').replace('duration: 1h', 'duration: 2h')),
    );
    expect(taken.status).toBe(409);
    const over = await unchanged(() => call('POST', dry('/api/v1/jobs'), job('one-more', { namespace: 'capped' })));
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    const bad = await unchanged(() => call('POST', dry('/api/v1/jobs'), job('bad').replace('cpu: 100m', 'cpu: abc')));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('spec.resources.cpu');
    const value = await unchanged(() => call('POST', '/api/v1/jobs?dryRun=Yes', job('fresh')));
    expect(value.status).toBe(400);
    expect(JSON.stringify(value.body)).toContain('dryRun: Unsupported value: \\"Yes\\"');
    // A write that cannot rehearse refuses a dry run rather than making the change.
    const register = await unchanged(() =>
      call(
        'POST',
        dry('/api/v1/nodes/register'),
        JSON.stringify({ name: 'node-z', cpuMillis: 1000, memoryBytes: 1e9, incarnation: randomUUID() }),
        'application/json',
      ),
    );
    expect(register.status).toBe(400);
    expect(JSON.stringify(register.body)).toContain('dryRun is not supported');
  });

  it('cancels, deletes and replays jobs', async () => {
    const cancelled = await unchanged(() => call('POST', dry('/api/v1/namespaces/default/jobs/existing/cancel')));
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ metadata: { name: 'existing' }, status: { phase: 'Cancelled' } });
    const deleted = await unchanged(() => call('DELETE', dry('/api/v1/namespaces/default/jobs/existing')));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ metadata: { name: 'existing' } });
    const missing = await unchanged(() => call('DELETE', dry('/api/v1/namespaces/default/jobs/nothing')));
    expect(missing.status).toBe(404);
    const replayed = await unchanged(() => call('POST', dry('/api/v1/namespaces/default/jobs/dead-one/replay')));
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ status: { phase: 'Pending' } });
    const all = await unchanged(() => call('POST', dry('/api/v1/jobs/replay?namespace=default')));
    expect((all.body.items as Array<{ metadata: { name: string } }>).map((j) => j.metadata.name)).toEqual(['dead-one']);
  });

  it('creates, cancels, retries and deletes workflows', async () => {
    const created = await unchanged(() => call('POST', dry('/api/v1/workflows'), workflow('wf2')));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'Workflow', metadata: { name: 'wf2' } });
    // A cancelled workflow closes once its jobs have stopped: the answer, real or not, is still Running.
    const cancelled = await unchanged(() => call('POST', dry('/api/v1/namespaces/default/workflows/wf/cancel')));
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ kind: 'Workflow', metadata: { name: 'wf' } });
    const retried = await unchanged(() => call('POST', dry('/api/v1/namespaces/default/workflows/stopped/retry')));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: { phase: 'Running' } });
    const deleted = await unchanged(() => call('DELETE', dry('/api/v1/namespaces/default/workflows/wf')));
    expect(deleted.status).toBe(200);
  });

  it('applies and deletes cronjobs, queues and resourcequotas', async () => {
    expect((await unchanged(() => call('POST', dry('/api/v1/cronjobs'), cronJob('hourly', '0 * * * *')))).status).toBe(
      201,
    );
    const edited = await unchanged(() => call('POST', dry('/api/v1/cronjobs'), cronJob('nightly', '0 4 * * *')));
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ spec: { schedule: '0 4 * * *' } });
    expect((await unchanged(() => call('DELETE', dry('/api/v1/namespaces/default/cronjobs/nightly')))).status).toBe(
      200,
    );
    expect((await unchanged(() => call('POST', dry('/api/v1/queues'), queue('q2', 2)))).status).toBe(201);
    expect((await unchanged(() => call('POST', dry('/api/v1/queues'), queue('q1', 5)))).body).toMatchObject({
      spec: { weight: 5 },
    });
    expect((await unchanged(() => call('DELETE', dry('/api/v1/namespaces/default/queues/q1')))).status).toBe(200);
    expect((await unchanged(() => call('POST', dry('/api/v1/resourcequotas'), quota('capped', 9)))).body).toMatchObject(
      { spec: { hard: { pendingJobs: 9 } } },
    );
    expect((await unchanged(() => call('DELETE', dry('/api/v1/namespaces/capped/resourcequotas/limits')))).status).toBe(
      200,
    );
  });
});

describe('dryRun=All on the Kubernetes routes', () => {
  const jobs = '/apis/fencer.dev/v1/namespaces/default/jobs';

  it('creates (POST and server-side apply), updates (PUT), patches and deletes', async () => {
    const created = await unchanged(() => call('POST', dry(jobs), job('kube-new'), 'application/yaml'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ metadata: { name: 'kube-new' } });
    const exists = await unchanged(() => call('POST', dry(jobs), job('existing'), 'application/yaml'));
    expect(exists.status).toBe(409);
    expect(exists.body).toMatchObject({ kind: 'Status', reason: 'AlreadyExists' });

    const applied = await unchanged(() =>
      call('PATCH', dry(`${jobs}/applied`), job('applied'), 'application/apply-patch+yaml'),
    );
    expect(applied.status).toBe(201);

    const current = (await call('GET', `${jobs}/existing`)).body;
    const relabelled = { ...current, metadata: { ...(current.metadata as object), labels: { v: 'two' } } };
    const put = await unchanged(() =>
      call('PUT', dry(`${jobs}/existing`), JSON.stringify(relabelled), 'application/json'),
    );
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ metadata: { labels: { v: 'two' } } });

    const patched = await unchanged(() =>
      call(
        'PATCH',
        dry(`${jobs}/existing`),
        JSON.stringify({ metadata: { labels: { v: 'three' } } }),
        'application/merge-patch+json',
      ),
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ metadata: { labels: { v: 'three' } } });
    const immutable = await unchanged(() =>
      call(
        'PATCH',
        dry(`${jobs}/existing`),
        JSON.stringify({ spec: { duration: '2h' } }),
        'application/merge-patch+json',
      ),
    );
    expect(immutable.status).toBe(422);

    const queues = '/apis/fencer.dev/v1/namespaces/default/queues';
    const weighted = await unchanged(() =>
      call('PATCH', dry(`${queues}/q1`), JSON.stringify({ spec: { weight: 7 } }), 'application/merge-patch+json'),
    );
    expect(weighted.body).toMatchObject({ spec: { weight: 7 } });
    const cron = '/apis/fencer.dev/v1/namespaces/default/cronjobs/nightly';
    const suspended = await unchanged(() =>
      call('PATCH', dry(cron), JSON.stringify({ spec: { schedule: '5 5 * * *' } }), 'application/merge-patch+json'),
    );
    expect(suspended.body).toMatchObject({ spec: { schedule: '5 5 * * *' } });

    const deleted = await unchanged(() => call('DELETE', dry(`${jobs}/existing`)));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success' });
    // kubectl puts a delete's dryRun in its DeleteOptions body.
    const options = JSON.stringify({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      dryRun: ['All'],
      propagationPolicy: 'Background',
    });
    const inBody = await unchanged(() => call('DELETE', `${jobs}/existing`, options, 'application/json'));
    expect(inBody.status).toBe(200);
    // DeleteOptions as YAML is DeleteOptions too; a body that is none is refused, never taken for no options (a real delete).
    const yaml = await unchanged(() =>
      call(
        'DELETE',
        '/api/v1/namespaces/default/jobs/existing',
        'kind: DeleteOptions\napiVersion: v1\ndryRun: [All]\n',
        'application/yaml',
      ),
    );
    expect(yaml.status).toBe(200);
    for (const body of ['{"dryRun":["All"]', '[{"dryRun":["All"]}]']) {
      const refused = await unchanged(() =>
        call('DELETE', `${jobs}/existing?propagationPolicy=Background`, body, 'application/json'),
      );
      expect(refused.status, body).toBe(400);
    }
    for (const body of ['\uFEFF{"dryRun":["All"]}', '{"dryRun":["All"],}']) {
      expect(
        (
          await unchanged(() =>
            call('DELETE', `${jobs}/existing?propagationPolicy=Background`, body, 'application/json'),
          )
        ).status,
        body,
      ).toBe(200);
    }
    const orphaned = await unchanged(() => call('DELETE', dry(`${cron}?propagationPolicy=Orphan`)));
    expect(orphaned.status).toBe(200);
    const bad = await unchanged(() => call('DELETE', `${jobs}/existing?dryRun=all`));
    expect(bad.status).toBe(400);
  });

  it('a create of a Queue that exists is AlreadyExists and changes nothing, dry run or not', async () => {
    const queues = '/apis/fencer.dev/v1/namespaces/default/queues';
    for (const path of [dry(queues), queues]) {
      const again = await unchanged(() => call('POST', path, queue('q1', 9)));
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ kind: 'Status', reason: 'AlreadyExists' });
    }
  });

  it('counts dry runs apart in fencer_http_requests_total (dry_run="true")', async () => {
    const metrics = await (await adminFetch(`${replica.url}/metrics`)).text();
    expect(metrics).toMatch(
      /^fencer_http_requests_total\{method="POST",route="\/api\/v1\/jobs",code="201",dry_run="true"\} [1-9]/m,
    );
  });
});

describe('after every dry run', () => {
  it('no notification was sent and no job placed: a real job after them is the first one heard and the only one placed', async () => {
    const placedBefore = await placedJobs();
    expect(heard).toEqual([]);
    const barrier = await call('POST', '/api/v1/jobs', job('barrier'));
    expect(barrier.status).toBe(201);
    const uid = (barrier.body.metadata as { uid: string }).uid;
    await eventually(() => expect(heard.length).toBeGreaterThan(0));
    expect(heard[0]).toEqual({ channel: CHANNELS.pending, payload: uid });
    await eventually(async () =>
      expect((await call('GET', '/api/v1/namespaces/default/jobs/barrier')).body.status).toMatchObject({
        phase: 'Assigned',
      }),
    );
    expect(await placedJobs()).toEqual([...placedBefore, 'barrier'].sort());
  });
});

describe('the broken variant: writes that ignore dryRun', () => {
  it('is caught by the same checks (a create and a patch each change the database)', async () => {
    await withBrokenGuard(async () => {
      const before = await everything();
      expect((await call('POST', dry('/api/v1/jobs'), unplaceable('leaked'))).status).toBe(201);
      expect(await everything()).not.toEqual(before);
      const patched = await everything();
      await call(
        'PATCH',
        dry('/apis/fencer.dev/v1/namespaces/default/jobs/waiting'),
        JSON.stringify({ metadata: { labels: { v: 'leaked' } } }),
        'application/merge-patch+json',
      );
      expect(await everything()).not.toEqual(patched);
    });
  });
});

async function placedJobs(): Promise<string[]> {
  return (
    await t.db.query<{ name: string }>(
      'SELECT DISTINCT j.name FROM assignments a JOIN jobs j ON j.uid = a.job_uid ORDER BY 1',
    )
  ).rows.map((r) => r.name);
}

function yamlJob(name: string): Record<string, unknown> {
  return {
    apiVersion: 'fencer.dev/v1',
    kind: 'Job',
    metadata: { name },
    spec: { resources: { cpu: '100m', memory: '64Mi' }, duration: '1h' },
  };
}
