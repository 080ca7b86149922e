// The HTTP API of a real replica: bad input is refused with a message naming the field (and
// the line), nothing of it is stored; submissions, registrations and heartbeats work while no
// replica leads; a job larger than every node is accepted and stays Pending, Unschedulable.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { eventually } from '../helpers/eventually.js';
import type { Replica } from '../../src/replica.js';
import { NODE_ROUTES } from '../../src/agent-protocol/routes.js';
import { adminFetch } from '../helpers/auth.js';
import { TestNodes } from '../helpers/nodes.js';

let t: TestDatabase;
let replica: Replica;
let ghost: pg.Client;
let nodes: TestNodes;

const GOOD = `apiVersion: fencer.dev/v1
kind: Job
metadata:
  name: ok
spec:
  resources:
    cpu: 500m
    memory: 256Mi
  duration: 1s
`;

async function post(path: string, body: string, contentType = 'application/yaml') {
  const res = await adminFetch(replica.url + path, { method: 'POST', body, headers: { 'content-type': contentType } });
  return { status: res.status, body: (await res.json()) as any };
}

async function jobCount(): Promise<number> {
  return (await t.db.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n;
}

beforeAll(async () => {
  t = await freshDatabase('api');
  // A live "ghost" leader: a lease that does not expire and whose liveness lock is held, so the
  // replica under test stays a standby until the ghost lets go.
  await t.db.query("UPDATE lease SET holder = 'ghost', epoch = 100, expires_at = now() + interval '1 hour'");
  ghost = new pg.Client({ connectionString: t.url });
  await ghost.connect();
  await ghost.query('SELECT pg_advisory_lock(7310002, 100)');
  replica = await startReplica(t.url);
  nodes = new TestNodes(() => replica.url, t.db);
});

afterAll(async () => {
  await replica.stop();
  await ghost.end().catch(() => {});
  await t.close();
});

describe('bad input', () => {
  const cases: Array<{
    what: string;
    body: string;
    contentType?: string;
    status: number;
    says: RegExp;
    line?: number;
  }> = [
    {
      what: 'malformed YAML',
      body: 'apiVersion: fencer.dev/v1\nkind: Job\nkind: Job\n',
      status: 400,
      says: /.+/,
      line: 3,
    },
    {
      what: 'malformed JSON',
      body: '{"apiVersion": "fencer.dev/v1",\n "kind": }',
      contentType: 'application/json',
      status: 400,
      says: /.+/,
      line: 2,
    },
    {
      what: 'an unknown kind',
      body: GOOD.replace('kind: Job', 'kind: Pod'),
      status: 400,
      says: /kind: "Pod" is not a known kind/,
    },
    {
      what: 'an unknown field',
      body: GOOD.replace('  duration: 1s', '  duration: 1s\n  colour: blue'),
      status: 400,
      says: /spec\.colour: unknown field/,
      line: 10,
    },
    {
      what: 'a bad CPU quantity',
      body: GOOD.replace('cpu: 500m', 'cpu: abc'),
      status: 400,
      says: /spec\.resources\.cpu: "abc" is not a CPU quantity/,
      line: 7,
    },
    {
      what: 'a bad memory quantity',
      body: GOOD.replace('memory: 256Mi', 'memory: 12Qi'),
      status: 400,
      says: /spec\.resources\.memory: "12Qi" is not a memory quantity/,
    },
    {
      what: 'zero CPU',
      body: GOOD.replace('cpu: 500m', 'cpu: "0"'),
      status: 400,
      says: /spec\.resources\.cpu: must be greater than zero/,
    },
    {
      what: 'negative memory',
      body: GOOD.replace('memory: 256Mi', 'memory: -1Gi'),
      status: 400,
      says: /spec\.resources\.memory/,
    },
    {
      what: 'a bad duration',
      body: GOOD.replace('duration: 1s', 'duration: forever'),
      status: 400,
      says: /spec\.duration: "forever" is not a duration/,
    },
    { what: 'a bad name', body: GOOD.replace('name: ok', 'name: Not_OK'), status: 400, says: /metadata\.name/ },
  ];

  it.each(cases)('refuses $what with $status naming the field, and stores nothing', async (c) => {
    const res = await post('/api/v1/jobs', c.body, c.contentType);
    expect(res.status).toBe(c.status);
    const text = [
      res.body.error.message,
      ...(res.body.error.details ?? []).map((d: any) => `${d.path}: ${d.message}`),
    ].join('\n');
    expect(text).toMatch(c.says);
    if (c.line) expect(res.body.error.details.map((d: any) => d.line)).toContain(c.line);
    expect(await jobCount()).toBe(0);
  });

  it('refuses an oversized body with 413', async () => {
    const res = await post('/api/v1/jobs', GOOD + `# ${'x'.repeat(17 * 1024 * 1024)}\n`);
    expect(res.status).toBe(413);
    expect(res.body.error.message).toMatch(/larger than/);
    expect(await jobCount()).toBe(0);
  });
});

describe('while no replica leads', () => {
  it('accepts submissions, registrations and heartbeats; decisions wait for a leader', async () => {
    expect((await post('/api/v1/jobs', GOOD)).status).toBe(201);
    expect((await post('/api/v1/jobs', GOOD)).status).toBe(200); // the same job again: unchanged
    expect((await post('/api/v1/jobs', GOOD.replace('duration: 1s', 'duration: 2s'))).status).toBe(409);
    const huge = GOOD.replace('name: ok', 'name: huge').replace('cpu: 500m', 'cpu: "64"');
    expect((await post('/api/v1/jobs', huge)).status).toBe(201);
    const reg = await nodes.register({
      name: 'n1',
      capacity: { cpu: '4', memory: '8Gi' },
      labels: { pool: 'default' },
    });
    expect(reg.status).toBe(200);
    expect((await nodes.heartbeat('n1')).status).toBe(200);
    // n1's credential speaks for n1 alone.
    expect((await nodes.fetch('n1', '/api/v1/nodes/nope/heartbeat', { method: 'POST', body: '{}' })).status).toBe(403);

    // The node opens its watch stream (so it can take work), reads snapshots and heartbeats, as a
    // node does (placement only uses nodes heard from lately).
    const beating = setInterval(() => void nodes.heartbeat('n1'), 500);
    onTestFinished(() => clearInterval(beating));
    const controller = new AbortController();
    const watch = await nodes.fetch('n1', '/api/v1/nodes/n1/watch', { signal: controller.signal });
    expect(watch.status).toBe(200);
    const lines: any[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of watch.body as any) {
        buffer += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          lines.push(JSON.parse(buffer.slice(0, i)));
          buffer = buffer.slice(i + 1);
        }
      }
    })().catch(() => {});

    // The ghost lets go: the replica leads, places the job that fits, and marks the other.
    await ghost.query('SELECT pg_advisory_unlock(7310002, 100)');
    const placed = await eventually(
      () => lines.find((l) => l.type === 'snapshot' && l.assignments.length === 1)?.assignments[0],
      { what: 'the assignment on the watch stream', timeoutMs: 10_000 },
    );
    expect(placed.job).toBe('default/ok');
    expect(placed.epoch).toBe(101);
    // Nothing was decided while nobody led: the job's only placement is the first leader's.
    const placements = (
      await t.db.query(
        "SELECT epoch::int AS epoch FROM history WHERE job = 'default/ok' AND entity = 'assignment' AND to_state = 'Assigned'",
      )
    ).rows;
    expect(placements).toEqual([{ epoch: 101 }]);
    const hugeJob = await eventually(async () => {
      const job = await (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/huge`)).json();
      return job.status.conditions.length > 0 && job;
    });
    expect(hugeJob.status.phase).toBe('Pending');
    expect(hugeJob.status.conditions[0]).toMatchObject({ reason: 'Unschedulable', status: 'False' });
    expect(hugeJob.status.conditions[0].message).toMatch(/larger than every node/);

    // A node's reports go in batches (the agent's one route). A report about an assignment that
    // is not the node's, or not active, is answered not-active, and the node stops that job.
    const batch = async (node: string, reports: unknown) => {
      const res = await nodes.fetch(node, NODE_ROUTES.reports.path(node), {
        method: 'POST',
        body: JSON.stringify({ reports }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const report = async (node: string, one: Record<string, unknown>) => (await batch(node, [one])).body.outcomes[0];
    // Another node (in a pool no job asks for), to report about n1's assignment with its own credential.
    expect(
      (await nodes.register({ name: 'other', capacity: { cpu: '1', memory: '1Gi' }, labels: { pool: 'other' } }))
        .status,
    ).toBe(200);
    expect(await report('other', { kind: 'started', id: placed.id })).toBe('not-active');
    expect(await report('n1', { kind: 'started', id: placed.id })).toBe('ok');
    expect(await report('n1', { kind: 'finished', id: placed.id, outcome: 'Succeeded' })).toBe('ok');
    expect(await report('n1', { kind: 'finished', id: placed.id, outcome: 'Succeeded' })).toBe('not-active');
    const done = await (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/ok`)).json();
    expect(done.status.phase).toBe('Succeeded');

    // The node gives a job up on its own (it fenced itself): the leader retries it, a disruption
    // that uses no attempt.
    expect((await post('/api/v1/jobs', GOOD.replace('name: ok', 'name: given-up'))).status).toBe(201);
    const first = await eventually(
      () =>
        lines
          .flatMap((l) => (l.type === 'snapshot' ? l.assignments : []))
          .find((a: any) => a.job === 'default/given-up'),
      { what: 'given-up on the stream' },
    );
    expect(await report('n1', { kind: 'started', id: first.id })).toBe('ok');
    expect(await report('n1', { kind: 'abandoned', id: first.id, reason: 'self-fence' })).toBe('ok');
    expect(await report('n1', { kind: 'abandoned', id: first.id, reason: 'self-fence' })).toBe('not-active');
    const retried = await eventually(
      () =>
        lines
          .flatMap((l) => (l.type === 'snapshot' ? l.assignments : []))
          .find((a: any) => a.job === 'default/given-up' && a.id !== first.id),
      { what: 'given-up placed again' },
    );
    expect(retried.attempt).toBe(1);
    const given = await (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up`)).json();
    expect(given.status).toMatchObject({ attempt: 1, disruptions: 1 });

    // Many reports in one request, answered one by one, in order: only the node's own active
    // assignment changes; a bad batch changes nothing and names the field.
    const fromOther = await batch('other', [{ kind: 'started', id: retried.id }]);
    expect(fromOther.body).toEqual({ outcomes: ['not-active'] });
    const refused = await batch('n1', [
      { kind: 'started', id: retried.id },
      { kind: 'begun', id: retried.id },
    ]);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('reports[1].kind');
    const answered = await batch('n1', [
      { kind: 'started', id: retried.id },
      { kind: 'finished', id: 'not-a-uuid', outcome: 'Succeeded' },
      { kind: 'started', id: retried.id },
    ]);
    expect(answered.body).toEqual({ outcomes: ['ok', 'not-active', 'ok'] }); // starting twice is harmless
    const running = await (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up`)).json();
    expect(running.status.phase).toBe('Running');

    // Cancel: the assignment leaves the node's snapshots (so the node stops it), resources go back.
    const cancelled = await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up/cancel`, {
      method: 'POST',
    });
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as any).status.phase).toBe('Cancelled');
    const seenAt = lines.length;
    await eventually(
      () =>
        lines
          .slice(seenAt)
          .find((l) => l.type === 'snapshot' && !l.assignments.some((a: any) => a.job === 'default/given-up')),
      {
        what: 'a snapshot without the cancelled job',
      },
    );
    expect(
      (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up/cancel`, { method: 'POST' })).status,
    ).toBe(409);
    expect(
      (await t.db.query("SELECT allocated_cpu_millis FROM nodes WHERE name = 'n1'")).rows[0].allocated_cpu_millis,
    ).toBe(0);

    // Delete: gone from reads, its history stays.
    expect(
      (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up`, { method: 'DELETE' })).status,
    ).toBe(200);
    expect((await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up`)).status).toBe(404);
    expect(
      (await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/given-up`, { method: 'DELETE' })).status,
    ).toBe(404);
    const list = (await (await adminFetch(`${replica.url}/api/v1/jobs`)).json()) as any;
    expect(list.kind).toBe('JobList');
    expect(list.items.map((j: any) => j.metadata.name).sort()).toEqual(['huge', 'ok']);
    const deleted = (
      await t.db.query(
        "SELECT to_state FROM history WHERE job = 'default/given-up' AND entity = 'job' ORDER BY id DESC LIMIT 1",
      )
    ).rows[0];
    expect(deleted.to_state).toBe('Deleted');
    controller.abort();
    await reading;
  });

  it('refuses a watch attempt older than the one recorded, or from another incarnation', async () => {
    const incarnation = '00000000-0000-4000-8000-000000000001';
    const reg = await nodes.register({ name: 'n2', capacity: { cpu: '1', memory: '1Gi' }, incarnation });
    expect(reg.status).toBe(200);
    const open = async (attempt: number, inc = incarnation) => {
      const controller = new AbortController();
      const res = await nodes.fetch('n2', `/api/v1/nodes/n2/watch?incarnation=${inc}&attempt=${attempt}`, {
        signal: controller.signal,
      });
      controller.abort();
      return res.status;
    };
    expect(await open(2)).toBe(200);
    // A late attempt (it waited somewhere while the node moved on) must not take over the session.
    expect(await open(1)).toBe(409);
    // Another incarnation than the credential's is not this credential's to open.
    expect(await open(3, '00000000-0000-4000-8000-000000000002')).toBe(400);
    expect(await open(3)).toBe(200);
  });

  it('takes a Kubernetes node name with dots (a DaemonSet agent is named after its node) and refuses one that is no DNS-1123 subdomain, naming the field', async () => {
    const name = 'ip-10-0-1-2.ec2.internal';
    expect((await nodes.register({ name, capacity: { cpu: '2', memory: '4Gi' } })).status).toBe(200);
    expect((await nodes.heartbeat(name)).status).toBe(200);
    const node = await adminFetch(`${replica.url}/apis/fencer.dev/v1/nodes/${name}`);
    expect(node.status).toBe(200);
    expect(((await node.json()) as any).metadata.name).toBe(name);
    for (const bad of ['Node_1', 'a..b', '.a', 'x'.repeat(254)]) {
      const answer = await nodes.register({ name: bad, capacity: { cpu: '2', memory: '4Gi' } });
      const res = { status: answer.status, body: (await answer.json()) as any };
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContainEqual(
        expect.objectContaining({
          path: 'name',
          message: expect.stringMatching(/is not a valid node name: .*DNS-1123 subdomain/),
        }),
      );
    }
  });

  it('serves status with the leader and its epoch', async () => {
    const status = await (await adminFetch(`${replica.url}/api/v1/status`)).json();
    expect(status.leader).toBe('replica-t');
    expect(status.epoch).toBe(101);
  });
});

describe('several jobs in one request', () => {
  const named = (name: string, duration = '1s') =>
    GOOD.replace('name: ok', `name: ${name}`).replace('duration: 1s', `duration: ${duration}`);

  it('refuses them all when one is bad, naming the document and field', async () => {
    const before = await jobCount();
    const res = await post('/api/v1/jobs', [named('b1'), named('b2').replace('cpu: 500m', 'cpu: abc')].join('---\n'));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual(
      expect.objectContaining({ path: '[1].spec.resources.cpu', message: '"abc" is not a CPU quantity' }),
    );
    expect(await jobCount()).toBe(before);
  });

  it('refuses a name written twice', async () => {
    const before = await jobCount();
    const res = await post('/api/v1/jobs', [named('twice'), named('twice')].join('---\n'));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/job default\/twice appears twice/);
    expect(await jobCount()).toBe(before);
  });

  it('accepts them all in one transaction, or none when one conflicts', async () => {
    const before = await jobCount();
    const first = await post(
      '/api/v1/jobs',
      JSON.stringify(
        [1, 2, 3].map((i) => ({
          apiVersion: 'fencer.dev/v1',
          kind: 'Job',
          metadata: { name: `batch-${i}` },
          spec: { resources: { cpu: '250m', memory: '64Mi' }, duration: '1s' },
        })),
      ),
      'application/json',
    );
    expect(first.status).toBe(201);
    expect(first.body.kind).toBe('JobList');
    expect(first.body.items.map((j: any) => j.metadata.name)).toEqual(['batch-1', 'batch-2', 'batch-3']);
    expect(await jobCount()).toBe(before + 3);
    // batch-4 is new, but batch-1 comes back with another duration: nothing is written.
    const clash = await post('/api/v1/jobs', [named('batch-4'), named('batch-1', '9s')].join('---\n'));
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toMatch(
      /job default\/batch-1 already exists with a different spec.*none of the 2 jobs was accepted/,
    );
    expect(await jobCount()).toBe(before + 3);
    // The same again (batch-1 unchanged, batch-5 new): accepted, nothing duplicated.
    const again = await post(
      '/api/v1/jobs',
      JSON.stringify(
        [1, 5].map((i) => ({
          apiVersion: 'fencer.dev/v1',
          kind: 'Job',
          metadata: { name: `batch-${i}` },
          spec: { resources: { cpu: '250m', memory: '64Mi' }, duration: '1s' },
        })),
      ),
      'application/json',
    );
    expect(again.status).toBe(201);
    expect(again.body.items.map((j: any) => j.metadata.name)).toEqual(['batch-1', 'batch-5']);
    expect(await jobCount()).toBe(before + 4);
  });

  // Bodies over 32 KiB are read on a worker thread (src/api/validation/off-loop.ts), so that
  // reading ten thousand documents never stalls the replica: the answers must be the same.
  it('reads a large body off the event loop with the same answers', async () => {
    const before = await jobCount();
    const docs = Array.from({ length: 400 }, (_, i) => named(`large-${i}`));
    expect(docs.join('---\n').length).toBeGreaterThan(32 * 1024);
    const bad = [...docs];
    bad[350] = bad[350]!.replace('cpu: 500m', 'cpu: abc');
    const refused = await post('/api/v1/jobs', bad.join('---\n'));
    expect(refused.status).toBe(400);
    // Document 350 starts after 350 documents of 9 lines, each with its `---`; cpu is its 7th line.
    expect(refused.body.error.details).toEqual([
      { path: '[350].spec.resources.cpu', message: '"abc" is not a CPU quantity', line: 350 * 10 + 7 },
    ]);
    expect(await jobCount()).toBe(before);

    const accepted = await post('/api/v1/jobs', docs.join('---\n'));
    expect(accepted.status).toBe(201);
    expect(accepted.body.items).toHaveLength(400);
    expect(accepted.body.items[399].metadata.name).toBe('large-399');
    expect(await jobCount()).toBe(before + 400);
  });
});
