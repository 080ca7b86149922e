// The workflow API of a real replica: a bad workflow is refused with the field and the YAML line
// (a cycle named), nothing of it stored; a good one is stored with all its jobs or not at all;
// creating it again answers 200, a different one under the same name 409; a workflow without a
// name of its own retried with one Idempotency-Key is created once; deleting it deletes its jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import type { Replica } from '../../src/replica.js';
import { workflowYaml } from '../helpers/workflows.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let replica: Replica;
let previousLimit: string | undefined;

beforeAll(async () => {
  t = await freshDatabase('workflow_api');
  previousLimit = process.env.FENCER_WORKFLOW_MAX_JOBS;
  process.env.FENCER_WORKFLOW_MAX_JOBS = '4';
  replica = await startReplica(t.url);
});

afterAll(async () => {
  if (previousLimit === undefined) delete process.env.FENCER_WORKFLOW_MAX_JOBS;
  else process.env.FENCER_WORKFLOW_MAX_JOBS = previousLimit;
  await replica.stop();
  await t.close();
});

async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await adminFetch(replica.url + path, {
    method,
    body,
    headers: { ...(body ? { 'content-type': 'application/yaml' } : {}), ...headers },
  });
  return { status: res.status, body: (await res.json()) as any };
}

const stored = async () =>
  (
    await t.db.query(
      'SELECT (SELECT count(*) FROM workflows)::int AS workflows, (SELECT count(*) FROM jobs)::int AS jobs',
    )
  ).rows[0];

describe('a bad workflow', () => {
  it.each([
    {
      what: 'a cycle',
      body: workflowYaml('w', [
        { name: 'build', needs: ['test'] },
        { name: 'test', needs: ['build'] },
      ]),
      says: /spec\.jobs\[\d\]\.needs: cycle: (build → test → build|test → build → test)/,
    },
    {
      what: 'a need on a job not in it',
      body: workflowYaml('w', [{ name: 'a', needs: ['nope'] }]),
      says: /spec\.jobs\[0\]\.needs\[0\]: "nope" is not a job of this workflow/,
    },
    {
      what: 'a duplicate job name',
      body: workflowYaml('w', [{ name: 'a' }, { name: 'a' }]),
      says: /spec\.jobs\[1\]\.name/,
    },
    {
      what: 'too many jobs',
      body: workflowYaml(
        'w',
        ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name })),
      ),
      says: /spec\.jobs: 5 jobs, at most 4/,
    },
    {
      what: 'a template overriding the pool',
      body: workflowYaml('w', [{ name: 'a', template: { nodeSelector: { pool: 'other' } } }], { pool: 'ci' }),
      says: /spec\.jobs\[0\]\.template\.nodeSelector\.pool/,
    },
  ])('is refused for $what with the field and line, nothing stored', async ({ body, says }) => {
    const answer = await call('POST', '/api/v1/workflows', body);
    expect(answer.status).toBe(400);
    const details = answer.body.error.details as Array<{ path: string; message: string; line?: number }>;
    expect(details.map((d) => `${d.path}: ${d.message}`).join('\n')).toMatch(says);
    expect(details.every((d) => typeof d.line === 'number' && d.line > 0)).toBe(true);
    expect(await stored()).toEqual({ workflows: 0, jobs: 0 });
  });
});

describe('a good workflow', () => {
  it('is stored with all its jobs, idempotently, and deleted with them', async () => {
    const body = workflowYaml('etl', [{ name: 'extract' }, { name: 'load', needs: ['extract'] }]);
    const created = await call('POST', '/api/v1/workflows', body);
    expect(created.status).toBe(201);
    expect(created.body.status.jobs).toMatchObject([
      { name: 'extract', job: 'etl-extract', phase: 'Pending', stage: 0 },
      { name: 'load', job: 'etl-load', phase: 'Pending', stage: 1, reason: 'WaitingForNeeds' },
    ]);
    expect((await call('POST', '/api/v1/workflows', body)).status).toBe(200);
    const different = await call('POST', '/api/v1/workflows', workflowYaml('etl', [{ name: 'extract' }]));
    expect(different.status).toBe(409);
    expect(await stored()).toEqual({ workflows: 1, jobs: 2 });

    // A job name a workflow would take is taken: nothing of the workflow is stored.
    await call(
      'POST',
      '/api/v1/jobs',
      'apiVersion: fencer.dev/v1\nkind: Job\nmetadata: { name: clash-a }\nspec: { resources: { cpu: 1, memory: 1Gi }, duration: 1s }\n',
    );
    expect(
      (await call('POST', '/api/v1/workflows', workflowYaml('clash', [{ name: 'a' }, { name: 'b' }]))).status,
    ).toBe(409);
    expect(await stored()).toEqual({ workflows: 1, jobs: 3 });

    // Its jobs go with it, not alone (their dependents would wait on nothing).
    const alone = await call('DELETE', '/api/v1/namespaces/default/jobs/etl-extract');
    expect(alone.status).toBe(409);
    expect(alone.body.error.message).toMatch(/belongs to workflow etl/);
    expect((await call('DELETE', '/api/v1/namespaces/default/workflows/etl')).status).toBe(200);
    expect((await call('GET', '/api/v1/namespaces/default/workflows/etl')).status).toBe(404);
    expect(await stored()).toEqual({ workflows: 0, jobs: 1 });
  });

  it('named by generateName and retried with one Idempotency-Key is created once', async () => {
    const body = workflowYaml('x', [{ name: 'only' }]).replace('name: x', 'generateName: nightly-');
    const first = await call('POST', '/api/v1/workflows', body, { 'idempotency-key': 'k-1' });
    const again = await call('POST', '/api/v1/workflows', body, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.metadata.name).toBe(first.body.metadata.name);
    expect(first.body.metadata.name).toMatch(/^nightly-[a-z0-9]{5}$/);
    expect(first.body.status.jobs[0].job).toBe(`${first.body.metadata.name}-only`);
    const other = await call('POST', '/api/v1/workflows', body, { 'idempotency-key': 'k-2' });
    expect(other.status).toBe(201);
    expect(other.body.metadata.name).not.toBe(first.body.metadata.name);
  });
});
