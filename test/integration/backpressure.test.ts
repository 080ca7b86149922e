// Backpressure instead of acceptance-then-loss: past FENCER_MAX_PENDING jobs waiting to be placed,
// a submission (one job, a batch, a workflow, through fencer's routes or Kubernetes', a dry run
// too) gets 429 with Retry-After and nothing of it is stored; the CLI waits as asked and sends the
// same request again (with its Idempotency-Key), so it lands once room is made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { eventually } from '../helpers/eventually.js';
import { projectRoot } from '../../src/paths.js';
import type { Replica } from '../../src/replica.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let replica: Replica;
let home: string;

/** No node runs them: they wait. */
const job = (name: string) => ({
  apiVersion: 'fencer.dev/v1',
  kind: 'Job',
  metadata: { name },
  spec: { resources: { cpu: '100m', memory: '64Mi' }, duration: '1h' },
});
const post = (path: string, body: unknown) =>
  adminFetch(replica.url + path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
const stored = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;

beforeAll(async () => {
  t = await freshDatabase('backpressure');
  process.env.FENCER_MAX_PENDING = '5';
  try {
    replica = await startReplica(t.url, 'replica-b');
  } finally {
    delete process.env.FENCER_MAX_PENDING;
  }
  home = mkdtempSync(join(tmpdir(), 'fencer-backpressure-'));
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a backlog at its bound', () => {
  it('refuses what would pass it with 429 and Retry-After, storing nothing of it', async () => {
    expect((await post('/api/v1/jobs', [job('a1'), job('a2'), job('a3'), job('a4')])).status).toBe(201);
    const batch = await post('/api/v1/jobs', [job('b1'), job('b2')]);
    expect(batch.status).toBe(429);
    expect(batch.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(((await batch.json()) as { error: { message: string } }).error.message).toMatch(
      /4 jobs wait to be placed and this adds 2; the cluster takes at most 5 \(FENCER_MAX_PENDING\)/,
    );
    expect(await stored()).toBe(4);
    expect((await post('/api/v1/jobs', job('c1'))).status).toBe(201); // exactly at the bound
    expect((await post('/api/v1/jobs', job('c2'))).status).toBe(429);
    expect((await post('/api/v1/jobs?dryRun=All', job('c3'))).status).toBe(429);
    const kube = await post('/apis/fencer.dev/v1/namespaces/default/jobs', job('c4'));
    expect(kube.status).toBe(429);
    expect(await kube.json()).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    expect(await stored()).toBe(5);
  });

  it('the CLI waits as asked and sends the same apply again: it lands once there is room', async () => {
    const file = join(home, 'job.yaml');
    writeFileSync(
      file,
      'apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  generateName: later-\nspec:\n  resources: { cpu: 100m, memory: 64Mi }\n  duration: 1h\n',
    );
    let stderr = '';
    const applied = new Promise<string>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [join(projectRoot(), 'dist/cli/main.js'), 'apply', '-f', file, '--server', replica.url],
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      );
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    });
    await eventually(() => stderr.includes('FENCER_MAX_PENDING') && stderr.includes('as the server asked'), {
      what: 'the CLI to be told to wait',
    });
    expect((await adminFetch(`${replica.url}/api/v1/namespaces/default/jobs/a1`, { method: 'DELETE' })).status).toBe(
      200,
    );
    expect((await applied).trim()).toMatch(/^job\.fencer\.dev\/later-[a-z0-9]{5} created$/);
    expect((await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE name LIKE 'later-%'")).rows[0].n).toBe(1);
  });
});
