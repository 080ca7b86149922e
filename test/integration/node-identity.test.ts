// Issue 27's attacks on the node protocol, replayed against a real replica (docs/security.md,
// Node identity). Nodes join with a join token and then speak with the credential their
// registration answered, bound to their name, incarnation and generation. Each refusal is checked
// in the database: node-2's credential cannot report node-1's assignment; no user token (not even
// cluster-admin's) opens node-1's watch; a registration with a huge generation and no credential
// changes nothing and node-1 keeps its job; an expired or wrong join token is 401; a generation is
// clamped to the database's clock plus the skew; a replaced process's credential is refused. And
// the row check broken on purpose (FENCER_BREAK_GUARDS=node-credential-row): the replaced
// process's report then finishes the new process's job. An operator lists and deletes join
// tokens with the CLI (`fencer token list|delete --join`); a deleted one registers nothing; one
// bound to a node name (`--node`) registers that name alone, and with that check broken
// (join-token-node) it registers another.
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { adminFetch, ADMIN_HEADERS, bearerOf, tokenFor } from '../helpers/auth.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml } from '../helpers/jobs.js';
import { TestNodes } from '../helpers/nodes.js';
import type { Replica } from '../../src/replica.js';
import { NODE_ROUTES } from '../../src/agent-protocol/routes.js';
import {
  GENERATION_EXTRA,
  GENERATION_SKEW_MS,
  INCARNATION_EXTRA,
  NODE_CREDENTIAL_ISSUER,
} from '../../src/domain/node-identity.js';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { nodeCredentialKeys } from '../../src/store/node-credential-keys.js';
import { mintToken } from '../../src/auth/tokens/mint.js';
import { createJoinToken } from '../../src/agent-protocol/nodes-store.js';

const HOUR = 3_600_000;
const CAPACITY = { cpu: '4', memory: '8Gi' };

let t: TestDatabase;
let replica: Replica;
let nodes: TestNodes;
const streams: AbortController[] = [];
const beats: NodeJS.Timeout[] = [];

async function nodeRow(name: string) {
  const { rows } = await t.db.query(
    `SELECT n.incarnation, n.generation, n.state, n.watch_session, n.disconnected_at, n.labels, n.cpu_millis, h.at AS beat
     FROM nodes n LEFT JOIN node_heartbeats h USING (name) WHERE n.name = $1`,
    [name],
  );
  return rows[0] ?? null;
}

async function assignmentsOf(job: string) {
  const { rows } = await t.db.query(
    `SELECT a.id, a.node, a.state, j.phase FROM assignments a JOIN jobs j ON j.uid = a.job_uid
     WHERE j.name = $1 ORDER BY a.created_at`,
    [job],
  );
  return rows;
}

/** Node `name` as its agent runs: its watch open, heartbeats every 300 ms. */
async function live(name: string): Promise<void> {
  const stream = new AbortController();
  streams.push(stream);
  const watch = await nodes.fetch(name, NODE_ROUTES.watch.path(name), { signal: stream.signal });
  expect(watch.status).toBe(200);
  void watch.body?.pipeTo(new WritableStream()).catch(() => {});
  beats.push(setInterval(() => void nodes.heartbeat(name).catch(() => {}), 300));
}

async function placedOn(job: string, node: string) {
  expect(
    (
      await adminFetch(`${replica.url}/api/v1/jobs`, {
        method: 'POST',
        body: jobYaml(job, { namespace: 'a', duration: '1h' }),
        headers: { 'content-type': 'application/yaml' },
      })
    ).status,
  ).toBe(201);
  return eventually(async () => (await assignmentsOf(job)).find((a) => a.node === node && a.state === 'Assigned'), {
    what: `${job} placed on ${node}`,
  });
}

function report(as: string, path: string, reports: unknown[]) {
  return nodes.fetch(as, NODE_ROUTES.reports.path(path), { method: 'POST', body: JSON.stringify({ reports }) });
}

beforeAll(async () => {
  t = await freshDatabase('node_identity');
  replica = await startReplica(t.url, 'replica-n', {
    deadAfterSilentMs: HOUR,
    deadAfterDisconnectMs: HOUR,
    disconnectedQuietMs: HOUR,
    confirmTimeoutMs: HOUR,
  });
  nodes = new TestNodes(() => replica.url, t.db);
  expect((await nodes.register({ name: 'node-1', capacity: CAPACITY, labels: { pool: 'default' } })).status).toBe(200);
  // node-2 takes no job (a pool none asks for): it is only the other node's credential.
  expect((await nodes.register({ name: 'node-2', capacity: CAPACITY, labels: { pool: 'elsewhere' } })).status).toBe(
    200,
  );
  await live('node-1');
});

afterAll(async () => {
  for (const beat of beats) clearInterval(beat);
  for (const stream of streams) stream.abort();
  await replica?.stop();
  await t?.close();
});

describe("the node protocol's attacks", () => {
  it("node-2's credential cannot report node-1's assignment", async () => {
    const placed = await placedOn('first', 'node-1');
    const before = await assignmentsOf('first');
    const forged = { kind: 'finished', id: placed.id, outcome: 'Succeeded' };
    // On node-1's path: the node restriction, 403.
    const onPath = await report('node-2', 'node-1', [forged]);
    expect(onPath.status).toBe(403);
    expect(((await onPath.json()) as { message: string }).message).toContain(
      'node "node-2" may act only for itself, not for node "node-1"',
    );
    // On its own path: the assignment is not node-2's, so nothing changes (the store's row condition).
    const onOwn = await report('node-2', 'node-2', [forged, { kind: 'started', id: placed.id }]);
    expect(onOwn.status).toBe(200);
    expect(((await onOwn.json()) as { outcomes: string[] }).outcomes).toEqual(['not-active', 'not-active']);
    expect(await assignmentsOf('first')).toEqual(before);
    expect(before[0]).toMatchObject({ state: 'Assigned', phase: 'Assigned' });
  });

  it("no user's token opens node-1's watch, cluster-admin's included, and the node's stream stays", async () => {
    const before = await nodeRow('node-1');
    const vera = bearerOf(await tokenFor('vera', ['team-a']));
    for (const headers of [vera, ADMIN_HEADERS]) {
      const res = await fetch(replica.url + NODE_ROUTES.watch.path('node-1'), { headers });
      expect(res.status).toBe(403);
      await res.body?.cancel();
      const heartbeat = await fetch(replica.url + NODE_ROUTES.heartbeat.path('node-1'), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(heartbeat.status).toBe(403);
    }
    const after = await nodeRow('node-1');
    expect(after.watch_session).toBe(before.watch_session);
    expect(after.disconnected_at).toBeNull();
  });

  it('a registration with a huge generation and no credential changes nothing; node-1 keeps its job', async () => {
    const before = await nodeRow('node-1');
    const jobs = await assignmentsOf('first');
    const body = JSON.stringify({
      name: 'node-1',
      capacity: { cpu: '64', memory: '1Ti' },
      incarnation: randomUUID(),
      generation: Number.MAX_SAFE_INTEGER,
    });
    const send = (headers: Record<string, string>) =>
      fetch(replica.url + NODE_ROUTES.register.path(), {
        method: 'POST',
        body,
        headers: { ...headers, 'content-type': 'application/json' },
      });
    expect((await send({})).status).toBe(401);
    expect((await send(ADMIN_HEADERS)).status).toBe(403); // a user is no node, cluster-admin included
    expect((await send(bearerOf(nodes.credentials.get('node-2')!))).status).toBe(403);
    const { beat: _before, ...rest } = before;
    const { beat: _after, ...now } = await nodeRow('node-1');
    expect(now).toEqual(rest);
    expect(await assignmentsOf('first')).toEqual(jobs);
    expect((await nodes.heartbeat('node-1')).status).toBe(200);
  });

  it('an expired or wrong join token is 401 and registers nothing', async () => {
    const expired = await createJoinToken(t.db, 1, 'expires at once');
    await eventually(
      async () => (await t.db.query('SELECT now() > $1::timestamptz AS past', [expired.expiresAt])).rows[0].past,
    );
    const wrong = `${expired.id}.${'0'.repeat(16)}`;
    for (const token of [expired.token, wrong, 'abcdef.0123456789abcdef']) {
      const res = await fetch(replica.url + NODE_ROUTES.register.path(), {
        method: 'POST',
        body: JSON.stringify({ name: 'node-9', capacity: CAPACITY, incarnation: randomUUID() }),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(await nodeRow('node-9')).toBeNull();
    // A join token opens nothing but registration.
    const elsewhere = await fetch(`${replica.url}/api/v1/namespaces/a/jobs`, {
      headers: { authorization: `Bearer ${(await createJoinToken(t.db, HOUR)).token}` },
    });
    expect(elsewhere.status).toBe(401);
  });

  it("clamps a joining node's generation to the database's clock plus the skew", async () => {
    const res = await nodes.register({
      name: 'node-3',
      capacity: CAPACITY,
      labels: { pool: 'elsewhere' },
      generation: Number.MAX_SAFE_INTEGER,
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { generation: number };
    const { rows } = await t.db.query(
      "SELECT generation, floor(extract(epoch FROM now()) * 1000)::bigint AS now_ms FROM nodes WHERE name = 'node-3'",
    );
    expect(answer.generation).toBe(rows[0].generation);
    expect(rows[0].generation).toBeLessThanOrEqual(rows[0].now_ms + GENERATION_SKEW_MS);
    expect(rows[0].generation).toBeGreaterThan(rows[0].now_ms);
  });
});

describe('a replaced process', () => {
  let old: string;
  let second: { id: string };

  beforeAll(async () => {
    old = nodes.credentials.get('node-1')!;
    // node-1's agent restarts: a new process (incarnation) joins and takes work.
    const again = await nodes.register({
      name: 'node-1',
      capacity: CAPACITY,
      labels: { pool: 'default' },
      incarnation: randomUUID(),
    });
    expect(again.status).toBe(200);
    expect(nodes.credentials.get('node-1')).not.toBe(old);
    await live('node-1');
    second = await placedOn('second', 'node-1');
  });

  it('loses access: its heartbeats, watch and reports are 403 and change nothing', async () => {
    const before = await nodeRow('node-1');
    const jobs = await assignmentsOf('second');
    const as = (path: string, init: RequestInit = {}) =>
      fetch(replica.url + path, {
        ...init,
        headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json' },
      });
    expect((await as(NODE_ROUTES.heartbeat.path('node-1'), { method: 'POST', body: '{}' })).status).toBe(403);
    const watch = await as(NODE_ROUTES.watch.path('node-1'));
    expect(watch.status).toBe(403);
    const reports = await as(NODE_ROUTES.reports.path('node-1'), {
      method: 'POST',
      body: JSON.stringify({ reports: [{ kind: 'finished', id: second.id, outcome: 'Succeeded' }] }),
    });
    expect(reports.status).toBe(403);
    // Nor may it register again in the new process's place.
    const register = await as(NODE_ROUTES.register.path(), {
      method: 'POST',
      body: JSON.stringify({ name: 'node-1', capacity: CAPACITY, incarnation: randomUUID() }),
    });
    expect(register.status).toBe(403);
    const { beat: _b, ...was } = before;
    const { beat: _a, ...is } = await nodeRow('node-1');
    expect(is).toEqual(was);
    expect(await assignmentsOf('second')).toEqual(jobs);
    expect(jobs[0]).toMatchObject({ state: 'Assigned', phase: 'Assigned' });
  });

  it('the current credential is renewed by a heartbeat once half its life is gone', async () => {
    const fresh = (await (await nodes.heartbeat('node-1')).json()) as { credential?: string };
    expect(fresh.credential).toBeUndefined(); // just minted: nothing to renew yet
    // The same process's credential with two minutes left (of ten), signed with the cluster's key.
    const [row] = await nodeCredentialKeys(t.db);
    const key = {
      kid: row!.kid,
      alg: 'EdDSA' as const,
      privateKey: (await importJWK(row!.private_jwk as JWK, 'EdDSA')) as CryptoKey,
      publicJwk: row!.public_jwk as JWK,
    };
    const { rows } = await t.db.query("SELECT incarnation, generation FROM nodes WHERE name = 'node-1'");
    const short = await mintToken(key, {
      issuer: NODE_CREDENTIAL_ISSUER,
      user: 'system:node:node-1',
      groups: ['system:nodes'],
      extra: { [INCARNATION_EXTRA]: [rows[0].incarnation], [GENERATION_EXTRA]: [String(rows[0].generation)] },
      ttlMs: 120_000,
    });
    const res = await fetch(replica.url + NODE_ROUTES.heartbeat.path('node-1'), {
      method: 'POST',
      body: '{}',
      headers: { authorization: `Bearer ${short.token}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const renewed = (await res.json()) as { credential?: string; credentialExpiresAt?: string };
    expect(renewed.credential).toMatch(/^ey/);
    expect(Date.parse(renewed.credentialExpiresAt!)).toBeGreaterThan(short.expiresAt.getTime());
    const beat = await fetch(replica.url + NODE_ROUTES.heartbeat.path('node-1'), {
      method: 'POST',
      body: '{}',
      headers: { authorization: `Bearer ${renewed.credential}`, 'content-type': 'application/json' },
    });
    expect(beat.status).toBe(200);
  });

  it('with the row check broken, the replaced process finishes the new process’s job', async () => {
    process.env.FENCER_BREAK_GUARDS = 'node-credential-row';
    try {
      const res = await fetch(replica.url + NODE_ROUTES.reports.path('node-1'), {
        method: 'POST',
        body: JSON.stringify({ reports: [{ kind: 'finished', id: second.id, outcome: 'Succeeded' }] }),
        headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
      expect(await assignmentsOf('second')).toEqual([
        expect.objectContaining({ state: 'Succeeded', phase: 'Succeeded' }),
      ]);
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});

/** A watch of node `name` with its current credential, and what it has carried so far. */
async function watching(name: string) {
  const stream = new AbortController();
  streams.push(stream);
  const res = await nodes.fetch(name, NODE_ROUTES.watch.path(name), { signal: stream.signal });
  expect(res.status).toBe(200);
  let text = '';
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) text += decoder.decode(chunk as Uint8Array);
    ended = true;
  })().catch(() => {});
  return { text: () => text, ended: () => ended };
}

describe('a watch stream superseded by another of its node', () => {
  it("ends, and is never sent the node's new assignments", async () => {
    const first = await watching('node-1');
    const current = await watching('node-1');
    const job = await placedOn('third', 'node-1');
    await eventually(() => current.text().includes(job.id), { what: 'the current stream carries third' });
    await eventually(() => first.ended(), { what: 'the superseded stream ends' });
    expect(first.text()).not.toContain(job.id);
  });

  it('with the session check broken, the superseded stream is sent them', async () => {
    const first = await watching('node-1');
    const current = await watching('node-1');
    process.env.FENCER_BREAK_GUARDS = 'watch-session-check';
    try {
      const job = await placedOn('fourth', 'node-1');
      await eventually(() => current.text().includes(job.id), { what: 'the current stream carries fourth' });
      await eventually(() => first.text().includes(job.id), { what: 'the superseded stream carries fourth' });
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});

describe('join tokens, as an operator keeps them', () => {
  const fencer = async (...args: string[]) =>
    (
      await promisify(execFile)(process.execPath, [
        join(projectRoot(), 'dist/cli/main.js'),
        'token',
        ...args,
        '--database-url',
        t.url,
      ])
    ).stdout;
  const register = (token: string) =>
    fetch(replica.url + NODE_ROUTES.register.path(), {
      method: 'POST',
      body: JSON.stringify({ name: 'node-j', capacity: CAPACITY, incarnation: randomUUID() }),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });

  it('lists them without their secrets, and a deleted one registers nothing', async () => {
    const made = JSON.parse(
      await fencer('create', '--join', '--ttl', '2h', '--description', 'rack 7', '-o', 'json'),
    ) as { token: string; id: string };
    const secret = made.token.split('.')[1]!;
    const table = await fencer('list', '--join');
    expect(table.split('\n')[0]).toMatch(/^ID\s+NODE\s+TTL\s+EXPIRES\s+DESCRIPTION$/);
    expect(table).toMatch(new RegExp(`^${made.id}\\s+<any>\\s+\\S+\\s+\\S+\\s+rack 7$`, 'm'));
    expect(table).not.toContain(secret);
    const listed = JSON.parse(await fencer('list', '--join', '-o', 'json')) as { items: Array<{ id: string }> };
    expect(listed.items.map((i) => i.id)).toContain(made.id);
    expect(JSON.stringify(listed)).not.toContain(secret);

    expect(await fencer('delete', '--join', made.token)).toBe(`join token "${made.id}" deleted\n`);
    expect((await t.db.query('SELECT 1 FROM join_tokens WHERE id = $1', [made.id])).rowCount).toBe(0);
    expect((await register(made.token)).status).toBe(401);
    expect(await nodeRow('node-j')).toBeNull();
    await expect(fencer('delete', '--join', made.id)).rejects.toMatchObject({
      stderr: expect.stringContaining(`join token "${made.id}" not found`),
    });
  });

  const registerAs = (name: string, token: string) =>
    fetch(replica.url + NODE_ROUTES.register.path(), {
      method: 'POST',
      body: JSON.stringify({ name, capacity: CAPACITY, incarnation: randomUUID() }),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });

  it('one bound to a node (--node) registers that node alone: another name is 403 and nothing changes', async () => {
    const made = JSON.parse(await fencer('create', '--join', '--node', 'node-k', '-o', 'json')) as {
      token: string;
      id: string;
      node: string;
    };
    expect(made.node).toBe('node-k');
    expect(await fencer('list', '--join')).toMatch(new RegExp(`^${made.id}\\s+node-k\\s`, 'm'));
    const before = (await t.db.query('SELECT count(*)::int AS n FROM nodes')).rows[0].n as number;
    const refused = await registerAs('node-1', made.token);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { reason: string; message: string }).message).toContain(
      `join token ${made.id} registers node "node-k" only`,
    );
    expect(await registerAs('node-l', made.token).then((r) => r.status)).toBe(403);
    expect(await nodeRow('node-l')).toBeNull();
    expect((await t.db.query('SELECT count(*)::int AS n FROM nodes')).rows[0].n).toBe(before);
    expect((await nodes.heartbeat('node-1')).status).toBe(200); // node-1's process is still the current one
    expect((await registerAs('node-k', made.token)).status).toBe(200);
    expect(await nodeRow('node-k')).not.toBeNull();
    // Stored again from a file, it keeps its node: asked for another binding, the CLI refuses.
    const dir = mkdtempSync(join(tmpdir(), 'fencer-join-'));
    const file = join(dir, 'token');
    writeFileSync(file, `${made.token}\n`);
    try {
      await expect(fencer('create', '--join', '--token-file', file)).rejects.toMatchObject({
        stderr: expect.stringContaining(`join token ${made.id} is already stored for node "node-k"`),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(fencer('create', '--join', '--node', 'Not_A_Name')).rejects.toMatchObject({
      stderr: expect.stringContaining('--node: "Not_A_Name" is not a node name'),
    });
  });

  // Broken variant (src/testing/broken-guards.ts, join-token-node): the bound token registers any name.
  it('with the binding check broken, a token bound to one node registers another (check broken: true)', async () => {
    const made = await createJoinToken(t.db, HOUR, 'bound', undefined, 'node-n');
    process.env.FENCER_BREAK_GUARDS = 'join-token-node';
    try {
      expect((await registerAs('node-m', made.token)).status).toBe(200);
      expect(await nodeRow('node-m')).not.toBeNull();
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});
