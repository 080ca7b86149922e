// fencer's events as Kubernetes Events, read by the real kubectl: kubectl get events (one
// namespace, -n, -A; a job's history and the cluster's NodeRegistered and LeaderElected),
// kubectl events --for, the Events section of kubectl describe, events.k8s.io's shape, field
// selectors (a node declared dead is a Warning), and watches (kubectl get events -w, and a raw ?watch=true from a list's version)
// that see an event written after they began. Skips, saying why, when no kubectl can be found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { KUBECTL, kubectlAgainst, serverArgs } from '../helpers/kubectl.js';
import { eventually } from '../helpers/eventually.js';
import type { Replica } from '../../src/replica.js';
import { adminFetch } from '../helpers/auth.js';
import { TestNodes } from '../helpers/nodes.js';

let t: TestDatabase;
let replica: Replica;
let home: string;

const job = (name: string, namespace = 'default') =>
  `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  resources: { cpu: 100m, memory: 64Mi }\n  duration: 1h\n`;

async function submit(name: string, namespace = 'default'): Promise<void> {
  const res = await adminFetch(`${replica.url}/api/v1/jobs`, {
    method: 'POST',
    body: job(name, namespace),
    headers: { 'content-type': 'application/yaml' },
  });
  expect(res.status).toBe(201);
}

beforeAll(async () => {
  if (!KUBECTL) return;
  t = await freshDatabase('kube-events');
  // Placed jobs stay Assigned: no agent confirms them, and none is declared lost meanwhile.
  replica = await startReplica(t.url, 'replica-e', { confirmTimeoutMs: 120_000 });
  home = mkdtempSync(join(tmpdir(), 'fencer-kube-events-'));
  const registered = await new TestNodes(() => replica.url, t.db).register({
    name: 'node-1',
    capacity: { cpu: '4', memory: '8Gi' },
  });
  expect(registered.status).toBe(200);
  await submit('train');
  await submit('etl', 'team-a');
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const kubectl = kubectlAgainst(
  () => replica.url,
  () => home,
);

const rows = (stdout: string) => stdout.trim().split('\n').slice(1);

describe.skipIf(!KUBECTL)(`kubectl and fencer's events (${KUBECTL ?? 'kubectl not found: skipped'})`, () => {
  it("kubectl get events: a job's history and the cluster's events of the namespace, as kube-apiserver's columns", async () => {
    const { stdout, stderr, code } = await eventually(
      async () => {
        const answer = await kubectl('get', 'events');
        return /job\/train/.test(answer.stdout) && answer;
      },
      { what: "train's events" },
    );
    expect(code, stderr).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(stdout).toMatch(/^\S+\s+Normal\s+Pending\s+job\/train\s+job Pending$/m);
    expect(stdout).toMatch(
      /^\S+\s+Normal\s+NodeRegistered\s+node\/node-1\s+node node-1 registered: 4 CPU, 8 GiB of memory$/m,
    );
    expect(stdout).toMatch(/^\S+\s+Normal\s+LeaderElected\s+replica\/replica-e\s+replica-e leads at epoch 1$/m);
    expect(stdout).not.toContain('job/etl');
  });

  it('kubectl get events -n NS and -A', async () => {
    const teamA = await kubectl('get', 'events', '-n', 'team-a');
    expect(teamA.code, teamA.stderr).toBe(0);
    expect(teamA.stdout).toMatch(/Pending\s+job\/etl/);
    expect(teamA.stdout).not.toMatch(/job\/train|NodeRegistered|LeaderElected/);
    const all = await kubectl('get', 'ev', '-A', '-o', 'wide');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.split('\n')[0]).toMatch(
      /^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME$/,
    );
    expect(all.stdout).toMatch(
      /^team-a\s+.*job\/etl\s+fencer, replica-e\s+job Pending\s+\S+\s+1\s+etl\.0[0-9a-f]{15}$/m,
    );
    expect(all.stdout).toMatch(/^default\s+.*NodeRegistered\s+node\/node-1\s+fencer\s+.*node-1\.1[0-9a-f]{15}$/m);
  });

  it("kubectl events --for fj/NAME: that job's events only", async () => {
    const { stdout, stderr, code } = await kubectl('events', '--for', 'fj/train');
    expect(code, stderr).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(rows(stdout).length).toBeGreaterThan(0);
    for (const row of rows(stdout)) expect(row).toMatch(/\sJob\/train\s/);
    expect(stdout).toMatch(/Normal\s+Pending\s+Job\/train\s+job Pending/);
  });

  it("kubectl describe fj NAME ends with the job's Events", async () => {
    const { stdout, stderr, code } = await kubectl('describe', 'fj', 'train');
    expect(code, stderr).toBe(0);
    const events = stdout.slice(stdout.indexOf('\nEvents:'));
    expect(events).toMatch(/^\nEvents:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----/);
    expect(events).toMatch(/^\s+Normal\s+Pending\s+\S+\s+fencer\s+job Pending$/m);
    expect(events).not.toMatch(/NodeRegistered|LeaderElected|etl/);
    const etl = await kubectl('describe', 'fj', 'etl', '-n', 'team-a');
    expect(etl.stdout).toMatch(/^\s+Normal\s+Pending\s+\S+\s+fencer\s+job Pending$/m);
  });

  it("kubectl describe fno NAME shows the node's events", async () => {
    const { stdout, stderr, code } = await kubectl('describe', 'fno', 'node-1');
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/Events:\n.*\n.*\n\s+Normal\s+NodeRegistered\s+\S+\s+fencer\s+node node-1 registered/);
  });

  it('events.k8s.io/v1: regarding points at the job, note is the message', async () => {
    const uid = (await kubectl('get', 'fj', 'train', '-o', 'jsonpath={.metadata.uid}')).stdout;
    const { stdout, stderr, code } = await kubectl('get', 'events.v1.events.k8s.io', '-o', 'json');
    expect(code, stderr).toBe(0);
    const list = JSON.parse(stdout) as { items: Array<Record<string, unknown>> };
    const train = list.items.filter((e) => (e.regarding as { name?: string }).name === 'train');
    expect(train.length).toBeGreaterThan(0);
    expect(train[0]).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'default', name: expect.stringMatching(/^train\.0[0-9a-f]{15}$/) },
      regarding: { apiVersion: 'fencer.dev/v1', kind: 'Job', namespace: 'default', name: 'train', uid },
      reason: 'Pending',
      note: 'job Pending',
      type: 'Normal',
      reportingController: 'fencer',
      reportingInstance: 'replica-e',
    });
  });

  it('one event by name; field selectors on type and reason', async () => {
    const named = await kubectl('get', 'events', '--field-selector', 'reason=NodeRegistered', '-o', 'name');
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout.trim()).toMatch(/^event\/node-1\.1[0-9a-f]{15}$/);
    const name = named.stdout.trim().slice('event/'.length);
    const one = await kubectl('get', 'event', name, '-o', 'json');
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'Node', name: 'node-1' },
      count: 1,
      source: { component: 'fencer' },
    });
    const missing = await kubectl('get', 'event', 'node-1.1000000000fffff0');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NotFound|not found/);
  });

  it('a node declared dead is a Warning (no agent heartbeats for node-1)', async () => {
    const warnings = await eventually(
      async () => {
        const answer = await kubectl('get', 'events', '-A', '--field-selector', 'type=Warning');
        return /NodeDied/.test(answer.stdout) && answer;
      },
      { what: 'node-1 declared dead' },
    );
    expect(warnings.stdout).toMatch(/^default\s+\S+\s+Warning\s+NodeDied\s+node\/node-1\s+node node-1 declared dead/m);
    for (const row of rows(warnings.stdout)) expect(row).toMatch(/\sWarning\s/);
  });

  it("pages with limit and continue, every page at the first one's resourceVersion", async () => {
    type List = {
      metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
      items: Array<{ metadata: { namespace: string; name: string } }>;
    };
    const read = async (query: string) =>
      (await (await adminFetch(`${replica.url}/api/v1/events?${query}`)).json()) as List;
    const namesOf = (list: List) => list.items.map((e) => `${e.metadata.namespace}/${e.metadata.name}`);
    const before = namesOf(await read(''));
    expect(before.length).toBeGreaterThan(3);
    const names: string[] = [];
    let page = await read('limit=2');
    const rv = page.metadata.resourceVersion;
    expect(page.metadata.remainingItemCount).toBeGreaterThan(0);
    for (;;) {
      names.push(...namesOf(page));
      expect(page.metadata.resourceVersion).toBe(rv);
      if (!page.metadata.continue) break;
      page = await read(`limit=2&continue=${page.metadata.continue}`);
    }
    const after = namesOf(await read(''));
    // One list in pages: each event once, by namespace and name, at a cut between the two whole reads.
    expect(names).toEqual([...new Set(names)].sort());
    expect(before.filter((n) => !names.includes(n))).toEqual([]);
    expect(names.filter((n) => !after.includes(n))).toEqual([]);
    const bad = await adminFetch(`${replica.url}/api/v1/events?continue=nope`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });

  it('kubectl get events -w shows an event written after it began', async () => {
    const watcher = spawn(
      KUBECTL!,
      [...serverArgs(replica.url), '--cache-dir', join(home, 'cache'), 'get', 'events', '-w', '--request-timeout', '0'],
      { env: { ...process.env, KUBECONFIG: join(home, 'none') } },
    );
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => /job\/train/.test(out), { what: 'the list first' });
      await submit('late');
      await eventually(() => /Normal\s+Pending\s+job\/late\s+job Pending/.test(out), {
        timeoutMs: 20_000,
        what: "late's event in the watch",
      });
      expect(out.match(/Pending\s+job\/late/g)).toHaveLength(1); // the list and the watch meet without a repeat
    } finally {
      watcher.kill();
    }
  });

  it("a raw watch from a list's resourceVersion streams only what came after, ADDED", async () => {
    const list = (await (await adminFetch(`${replica.url}/api/v1/namespaces/default/events`)).json()) as {
      metadata: { resourceVersion: string };
      items: unknown[];
    };
    expect(list.metadata.resourceVersion).toMatch(/^\d+\.\d+$/);
    const aborted = new AbortController();
    const res = await adminFetch(
      `${replica.url}/api/v1/namespaces/default/events?watch=true&resourceVersion=${list.metadata.resourceVersion}&fieldSelector=involvedObject.name=later`,
      { signal: aborted.signal },
    );
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const seen: Array<{ type: string; object: { involvedObject: { name: string }; reason: string } }> = [];
    try {
      await submit('later');
      let text = '';
      const deadline = setTimeout(() => aborted.abort(), 20_000);
      // Each read waits for the server to write: no sampling.
      while (!seen.some((e) => e.object.reason === 'Pending')) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += Buffer.from(chunk.value).toString();
        const lines = text.split('\n');
        text = lines.pop()!;
        seen.push(...lines.filter(Boolean).map((line) => JSON.parse(line) as (typeof seen)[number]));
      }
      clearTimeout(deadline);
    } finally {
      aborted.abort();
    }
    expect(seen[0]).toMatchObject({
      type: 'ADDED',
      object: { kind: 'Event', involvedObject: { kind: 'Job', name: 'later' }, reason: 'Pending' },
    });
    expect(seen.every((e) => e.type === 'ADDED' && e.object.involvedObject.name === 'later')).toBe(true);
  });

  it("fencer's own cluster event list moved to /api/v1/clusterevents", async () => {
    const body = (await (await adminFetch(`${replica.url}/api/v1/clusterevents`)).json()) as {
      apiVersion: string;
      kind: string;
      items: Array<{ reason: string; object: string }>;
    };
    expect(body).toMatchObject({ apiVersion: 'fencer.dev/v1', kind: 'EventList' });
    expect(body.items).toContainEqual(expect.objectContaining({ reason: 'NodeRegistered', object: 'node/node-1' }));
  });
});
