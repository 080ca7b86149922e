// Who the record names and whose Idempotency-Key is whose (issue 27 part 6), against a real
// replica: the history's actor is the token's subject whatever X-Remote-User says, unless the
// caller is a listed front proxy; Idempotency-Keys are the caller's own (two callers, one key:
// two jobs), remember the body (the same key with another body: 422 Status, no row), and expire
// (an expired key is taken over; the prune pass deletes it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { bearerOf, tokenFor } from '../helpers/auth.js';
import { workflowYaml } from '../helpers/workflows.js';
import type { Replica } from '../../src/replica.js';
import { DEFAULT_EDGE } from '../../src/api/edge/options.js';
import { MASTERS_GROUP } from '../../src/auth/rbac/builtin.js';
import { transaction } from '../../src/store/db.js';
import { pruneIdempotencyKeys } from '../../src/store/jobs.js';

const HOUR = 3_600_000;
const PROXIES = 'fencer:front-proxies';

let t: TestDatabase;
let replica: Replica;
let alice: Record<string, string>;
let bob: Record<string, string>;
let proxy: Record<string, string>;

function reportYaml(duration = '1s'): string {
  return `apiVersion: fencer.dev/v1
kind: Job
metadata:
  generateName: report-
spec:
  resources:
    cpu: "1"
    memory: 1Gi
  duration: ${duration}
`;
}

async function post(headers: Record<string, string>, path: string, body?: string) {
  const res = await fetch(replica.url + path, {
    method: 'POST',
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/yaml' }) },
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function reports(): Promise<number> {
  return (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE name LIKE 'report-%'")).rows[0].n;
}

async function cancelledBy(job: string): Promise<string | null> {
  const { rows } = await t.db.query(
    "SELECT actor FROM history WHERE job = $1 AND to_state = 'Cancelled' ORDER BY id DESC LIMIT 1",
    [job],
  );
  return rows[0]?.actor ?? null;
}

beforeAll(async () => {
  t = await freshDatabase('edge_identity');
  replica = await startReplica(
    t.url,
    'replica-i',
    { deadAfterSilentMs: HOUR, confirmTimeoutMs: HOUR },
    { edge: { ...DEFAULT_EDGE, frontProxies: [PROXIES] } },
  );
  alice = bearerOf(await tokenFor('alice', [MASTERS_GROUP]));
  bob = bearerOf(await tokenFor('bob', [MASTERS_GROUP]));
  proxy = bearerOf(await tokenFor('gateway', [MASTERS_GROUP, PROXIES]));
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
});

describe("the history's actor", () => {
  it("is the token's subject; X-Remote-User from anyone else is ignored", async () => {
    expect((await post(alice, '/api/v1/workflows', workflowYaml('w-one', [{ name: 'a' }]))).status).toBe(201);
    const cancel = await post(
      { ...alice, 'x-remote-user': 'mallory' },
      '/api/v1/namespaces/default/workflows/w-one/cancel',
    );
    expect(cancel.status).toBe(200);
    expect(await cancelledBy('default/w-one-a')).toBe('alice');
  });

  it("is X-Remote-User when a listed front proxy sends it, and the proxy's own name without it", async () => {
    for (const name of ['w-two', 'w-three'])
      expect((await post(alice, '/api/v1/workflows', workflowYaml(name, [{ name: 'a' }]))).status).toBe(201);
    await post({ ...proxy, 'x-remote-user': 'erin' }, '/api/v1/namespaces/default/workflows/w-two/cancel');
    expect(await cancelledBy('default/w-two-a')).toBe('erin');
    await post(proxy, '/api/v1/namespaces/default/workflows/w-three/cancel');
    expect(await cancelledBy('default/w-three-a')).toBe('gateway');
  });
});

describe('an Idempotency-Key', () => {
  it("is the caller's own: two callers with one key make two jobs, and each retry finds its own", async () => {
    const first = await post({ ...alice, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml());
    const second = await post({ ...bob, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml());
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.metadata.name).not.toBe(first.body.metadata.name);
    const again = await post({ ...bob, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml());
    expect(again.status).toBe(200);
    expect(again.body.metadata.name).toBe(second.body.metadata.name);
    expect((await post({ ...alice, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml())).body.metadata.name).toBe(
      first.body.metadata.name,
    );
    expect(await reports()).toBe(2);
  });

  it('sent again by the same caller with another body is refused 422 (a Status), and nothing is stored', async () => {
    const before = await reports();
    const other = await post({ ...alice, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml('2s'));
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(other.body.message).toContain('Idempotency-Key "k-1" was used with another body');
    expect(await reports()).toBe(before);
    const kube = await fetch(`${replica.url}/apis/fencer.dev/v1/namespaces/default/jobs`, {
      method: 'POST',
      headers: { ...alice, 'idempotency-key': 'k-1', 'content-type': 'application/yaml' },
      body: reportYaml('3s'),
    });
    expect(kube.status).toBe(422);
    expect(await reports()).toBe(before);
  });

  it('expires: past its lifetime the same key with another body makes a new job, and the prune pass forgets it', async () => {
    await t.db.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE subject = 'alice' AND key = 'k-1'",
    );
    const before = await reports();
    const fresh = await post({ ...alice, 'idempotency-key': 'k-1' }, '/api/v1/jobs', reportYaml('2s'));
    expect(fresh.status).toBe(201);
    expect(await reports()).toBe(before + 1);
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE subject = 'bob'");
    // The leader's own prune pass may forget bob's key first: one of the two passes does.
    expect(await transaction(t.db, (tx) => pruneIdempotencyKeys(tx, 24 * HOUR, 100))).toBeLessThanOrEqual(1);
    const left = (await t.db.query('SELECT subject, key FROM idempotency_keys ORDER BY subject')).rows;
    expect(left).toEqual([{ subject: 'alice', key: 'k-1' }]);
  });
});
