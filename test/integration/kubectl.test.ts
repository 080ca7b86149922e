// Real kubectl against a replica: discovery (api-resources), explain from the OpenAPI the CRDs
// generate, get as a Table with fencer's printer columns, -o json, label and field selectors, and
// errors as Status objects. Skips, saying why, when no kubectl can be found.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import type { Replica } from '../../src/replica.js';
import { KUBECTL, kubectlAgainst, run } from '../helpers/kubectl.js';
import { eventually } from '../helpers/eventually.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let replica: Replica;
let home: string;

beforeAll(async () => {
  if (!KUBECTL) return;
  t = await freshDatabase('kubectl');
  replica = await startReplica(t.url, 'replica-k', { confirmTimeoutMs: 120_000 });
  home = mkdtempSync(join(tmpdir(), 'fencer-kubectl-'));
  const submit = (path: string, body: string) =>
    adminFetch(replica.url + path, { method: 'POST', body, headers: { 'content-type': 'application/yaml' } });
  const job = (name: string, labels: string) =>
    `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\n  labels: ${labels}\nspec:\n  resources: { cpu: 100m, memory: 64Mi }\n  duration: 1h\n`;
  expect((await submit('/api/v1/jobs', job('train', '{ team: ml }'))).status).toBe(201);
  expect((await submit('/api/v1/jobs', job('report', '{ team: finance }'))).status).toBe(201);
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

describe.skipIf(!KUBECTL)(`kubectl (${KUBECTL ?? 'not found: skipped'})`, () => {
  it('lists fencer’s resources with their short names (api-resources)', async () => {
    const { stdout, code, stderr } = await kubectl('api-resources');
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^jobs\s+fj\s+fencer\.dev\/v1\s+true\s+Job$/m);
    expect(stdout).toMatch(/^cronjobs\s+fcj\s+fencer\.dev\/v1\s+true\s+CronJob$/m);
    expect(stdout).toMatch(/^nodes\s+fno\s+fencer\.dev\/v1\s+false\s+Node$/m);
  });

  it('explains a field from the CRD schema', async () => {
    const { stdout, code, stderr } = await kubectl('explain', 'jobs.spec.resources');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('What the job holds on its node while it runs.');
    expect(stdout).toMatch(/cpu\s+<Object> -required-/);
  });

  it('gets jobs as a table with the printer columns, by label and by field', async () => {
    const all = await kubectl('get', 'jobs.fencer.dev');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+NODE\s+AGE$/);
    expect(all.stdout).toMatch(/^train\s+Pending\s+/m);
    const ml = await kubectl('get', 'fj', '-l', 'team=ml', '-o', 'name');
    expect(ml.stdout.trim()).toBe('job.fencer.dev/train');
    const pending = await kubectl(
      'get',
      'fj',
      '--field-selector',
      'status.phase=Pending,metadata.name!=train',
      '-o',
      'name',
    );
    expect(pending.stdout.trim()).toBe('job.fencer.dev/report');
  });

  it('gets one job as JSON, and a missing one as NotFound', async () => {
    const one = await kubectl('get', 'fj', 'train', '-o', 'json');
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({
      apiVersion: 'fencer.dev/v1',
      kind: 'Job',
      metadata: { name: 'train', labels: { team: 'ml' } },
    });
    const missing = await kubectl('get', 'fj', 'nope');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NotFound|not found/);
  });

  it('creates from a file (apply and create), refuses a second create as AlreadyExists and bad input with its field, deletes', async () => {
    const file = join(home, 'cron.yaml');
    writeFileSync(
      file,
      'apiVersion: fencer.dev/v1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n  schedule: "30 2 * * *"\n  timeZone: Europe/Berlin\n' +
        '  jobTemplate:\n    spec:\n      resources: { cpu: 100m, memory: 64Mi }\n      duration: 1m\n',
    );
    const created = await kubectl('create', '-f', file);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('cronjob.fencer.dev/nightly created');
    const again = await kubectl('create', '-f', file);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/AlreadyExists|already exists/);
    const table = await kubectl('get', 'fcj');
    expect(table.stdout.split('\n')[0]).toMatch(
      /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT\s+AGE$/,
    );
    expect(table.stdout).toMatch(/^nightly\s+30 2 \* \* \*\s+Europe\/Berlin\s+false/m);

    const bad = join(home, 'bad.yaml');
    writeFileSync(
      bad,
      'apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: bad\nspec:\n  resources: { cpu: lots, memory: 64Mi }\n  duration: 1m\n',
    );
    const refused = await kubectl('create', '-f', bad);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/spec\.resources\.cpu/);

    const deleted = await kubectl('delete', 'fcj', 'nightly');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('"nightly" deleted');
    expect((await kubectl('get', 'fcj', 'nightly')).code).not.toBe(0);
  });

  it('applies (client-side and --server-side), patches, and refuses an update at a stale resourceVersion (Conflict)', async () => {
    const file = join(home, 'queue.yaml');
    const queue = (weight: number) =>
      `apiVersion: fencer.dev/v1\nkind: Queue\nmetadata:\n  name: batch\n  namespace: team-a\nspec:\n  weight: ${weight}\n  concurrencyLimit: 2\n`;
    writeFileSync(file, queue(1));
    const first = await kubectl('apply', '-f', file);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('queue.fencer.dev/batch created');
    writeFileSync(file, queue(3));
    const second = await kubectl('apply', '-f', file);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('queue.fencer.dev/batch configured');
    const weight = async () =>
      JSON.parse((await kubectl('get', 'fq', 'batch', '-n', 'team-a', '-o', 'json')).stdout).spec.weight;
    expect(await weight()).toBe(3);
    // Its last-applied configuration is kept (an annotation), so a field removed from the file is
    // removed from the object.
    const applied = JSON.parse((await kubectl('get', 'fq', 'batch', '-n', 'team-a', '-o', 'json')).stdout);
    expect(applied.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"weight":3');
    writeFileSync(file, queue(3).replace('  concurrencyLimit: 2\n', ''));
    expect((await kubectl('apply', '-f', file)).code).toBe(0);
    expect(
      JSON.parse((await kubectl('get', 'fq', 'batch', '-n', 'team-a', '-o', 'json')).stdout).spec.concurrencyLimit,
    ).toBeUndefined();
    writeFileSync(file, queue(3));
    expect((await kubectl('apply', '-f', file)).code).toBe(0);

    writeFileSync(file, queue(5));
    const ssa = await kubectl('apply', '--server-side', '-f', file);
    expect(ssa.code, ssa.stderr).toBe(0);
    expect(await weight()).toBe(5);

    const patched = await kubectl('patch', 'fq', 'batch', '-n', 'team-a', '-p', '{"spec":{"concurrencyLimit":4}}'); // kubectl's default: strategic
    expect(patched.code, patched.stderr).toBe(0);
    const now = JSON.parse((await kubectl('get', 'fq', 'batch', '-n', 'team-a', '-o', 'json')).stdout);
    expect(now.spec).toMatchObject({ weight: 5, concurrencyLimit: 4 });

    // An update that names an older resourceVersion than the stored one is refused.
    const stale = {
      ...now,
      metadata: { ...now.metadata, resourceVersion: String(Number(now.metadata.resourceVersion) - 1) },
      spec: { ...now.spec, weight: 9 },
    };
    const staleFile = join(home, 'stale.json');
    writeFileSync(staleFile, JSON.stringify(stale));
    const replaced = await kubectl('replace', '-f', staleFile);
    expect(replaced.code).not.toBe(0);
    expect(replaced.stderr).toMatch(/Conflict|the object has been modified/);
    expect(await weight()).toBe(5);
    writeFileSync(staleFile, JSON.stringify({ ...stale, metadata: now.metadata }));
    const fresh = await kubectl('replace', '-f', staleFile);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await weight()).toBe(9);

    // A Job does not change.
    const job = await kubectl('patch', 'fj', 'train', '--type', 'merge', '-p', '{"spec":{"duration":"2h"}}');
    expect(job.code).not.toBe(0);
    expect(job.stderr).toMatch(/immutable/);
  });

  it('labels and annotates a Job (its spec stays fixed): selectors see the new label, a stale resourceVersion is a Conflict, a bad key is refused by field', async () => {
    const labelled = await kubectl('label', 'fj', 'report', 'tier=nightly');
    expect(labelled.code, labelled.stderr).toBe(0);
    expect(labelled.stdout).toContain('job.fencer.dev/report labeled');
    expect((await kubectl('get', 'fj', '-l', 'tier=nightly', '-o', 'name')).stdout.trim()).toBe(
      'job.fencer.dev/report',
    );
    const annotated = await kubectl('annotate', 'fj', 'report', 'owner=finance-oncall');
    expect(annotated.code, annotated.stderr).toBe(0);
    const job = JSON.parse((await kubectl('get', 'fj', 'report', '-o', 'json')).stdout);
    expect(job.metadata.labels).toEqual({ team: 'finance', tier: 'nightly' });
    expect(job.metadata.annotations).toEqual({ owner: 'finance-oncall' });
    expect(job.spec.duration).toBe('1h');
    // Through the watch feed as well: the label change is the object's latest event.
    const removed = await kubectl('label', 'fj', 'report', 'tier-');
    expect(removed.code, removed.stderr).toBe(0);
    const after = JSON.parse((await kubectl('get', 'fj', 'report', '-o', 'json')).stdout);
    expect(after.metadata.labels).toEqual({ team: 'finance' });
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(job.metadata.resourceVersion));

    const stale = await kubectl(
      'label',
      'fj',
      'report',
      'tier=weekly',
      '--resource-version',
      job.metadata.resourceVersion,
    );
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/Conflict|the object has been modified/);
    const bad = await kubectl('label', 'fj', 'report', 'bad key!=x');
    expect(bad.code).not.toBe(0);
    const badKey = await kubectl(
      'patch',
      'fj',
      'report',
      '--type',
      'merge',
      '-p',
      '{"metadata":{"annotations":{"Bad.Example/x":"y"}}}',
    );
    expect(badKey.code).not.toBe(0);
    expect(badKey.stderr).toMatch(/metadata\.annotations/);
    expect(JSON.parse((await kubectl('get', 'fj', 'report', '-o', 'json')).stdout).metadata.labels).toEqual({
      team: 'finance',
    });
  });

  it('deletes a CronJob with --cascade=orphan, leaving its Jobs; by default its Jobs go with it', async () => {
    const cron = (name: string) =>
      `apiVersion: fencer.dev/v1\nkind: CronJob\nmetadata:\n  name: ${name}\nspec:\n  schedule: "* * * * * *"\n` +
      '  jobTemplate:\n    spec:\n      resources: { cpu: 100m, memory: 64Mi }\n      duration: 1h\n';
    for (const name of ['keepers', 'goners']) {
      writeFileSync(join(home, `${name}.yaml`), cron(name));
      expect((await kubectl('create', '-f', join(home, `${name}.yaml`))).code).toBe(0);
    }
    const jobsOf = async (name: string) =>
      (await kubectl('get', 'fj', '-l', `fencer.dev/cronjob=${name}`, '-o', 'name')).stdout
        .trim()
        .split('\n')
        .filter(Boolean);
    await eventually(async () => (await jobsOf('keepers')).length > 0 && (await jobsOf('goners')).length > 0, {
      what: 'both to fire',
    });
    expect((await kubectl('delete', 'fcj', 'keepers', '--cascade=orphan')).code).toBe(0);
    expect((await kubectl('delete', 'fcj', 'goners')).code).toBe(0);
    expect((await jobsOf('keepers')).length).toBeGreaterThan(0);
    expect(await jobsOf('goners')).toEqual([]);
  });

  it('fencer kubeconfig writes a kubeconfig (through @kubernetes/client-node) that kubectl and the fencer CLI use with no --server', async () => {
    const file = join(home, 'kubeconfig');
    const fencer = async (...args: string[]) =>
      (
        await promisify(execFile)(process.execPath, [join(projectRoot(), 'dist/cli/main.js'), ...args], {
          env: { ...process.env, KUBECONFIG: file, FENCER_SERVER: '' },
        })
      ).stdout;
    expect(
      await fencer('kubeconfig', '--server', replica.url, '--certificate-authority', inject('caCert'), '-o', file),
    ).toContain('context fencer');
    const { stdout } = await promisify(execFile)(
      KUBECTL!,
      ['--cache-dir', join(home, 'cache2'), 'get', 'fj', '-o', 'name'],
      { env: { ...process.env, KUBECONFIG: file } },
    );
    expect(stdout).toContain('job.fencer.dev/train');
    expect(await fencer('get', 'jobs')).toMatch(/^train\s/m);
  });

  it('previews without changing anything: apply, create and delete with --dry-run=server, and diff of a new and of a changed object', async () => {
    const file = join(home, 'preview.yaml');
    const preview = (v: string) =>
      `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: preview\n  labels: { v: ${v} }\nspec:\n  resources: { cpu: 100m, memory: 64Mi }\n  duration: 1h\n`;
    const gone = async () => expect((await kubectl('get', 'fj', 'preview')).stderr).toMatch(/NotFound|not found/);
    writeFileSync(file, preview('one'));

    const applied = await kubectl('apply', '--dry-run=server', '-f', file);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('job.fencer.dev/preview created (server dry run)');
    await gone();
    const created = await kubectl('create', '--dry-run=server', '-f', file, '-o', 'json');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      kind: 'Job',
      metadata: { name: 'preview', labels: { v: 'one' } },
      status: { phase: 'Pending' },
    });
    await gone();
    // kubectl diff exits 1 when it found a difference.
    const fresh = await kubectl('diff', '-f', file);
    expect(fresh.code, fresh.stderr).toBe(1);
    expect(fresh.stdout).toMatch(/^\+\s+name: preview$/m);
    await gone();

    expect((await kubectl('apply', '-f', file)).code).toBe(0);
    writeFileSync(file, preview('two'));
    const changed = await kubectl('diff', '-f', file);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toMatch(/^-\s+v: one$/m);
    expect(changed.stdout).toMatch(/^\+\s+v: two$/m);
    const serverSide = await kubectl('apply', '--server-side', '--dry-run=server', '-f', file);
    expect(serverSide.code, serverSide.stderr).toBe(0);
    const label = async () => (await kubectl('get', 'fj', 'preview', '-o', 'jsonpath={.metadata.labels.v}')).stdout;
    expect(await label()).toBe('one');

    const deleted = await kubectl('delete', 'fj', 'preview', '--dry-run=server');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('job.fencer.dev "preview" deleted (server dry run)');
    expect(await label()).toBe('one');
  });

  it('fencer apply, delete and cancel with --dry-run=server and --dry-run=client change nothing', async () => {
    const fencer = (...args: string[]) =>
      run(process.execPath, [join(projectRoot(), 'dist/cli/main.js'), ...args, '--server', replica.url]);
    const file = join(home, 'rehearsed.yaml');
    writeFileSync(
      file,
      'apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: rehearsed\nspec:\n  resources: { cpu: 100m, memory: 64Mi }\n  duration: 1h\n',
    );
    const server = await fencer('apply', '-f', file, '--dry-run=server');
    expect(server.stdout.trim()).toBe('job.fencer.dev/rehearsed created (server dry run)');
    const client = await fencer('apply', '-f', file, '--dry-run=client');
    expect(client.stdout.trim()).toBe('job.fencer.dev/rehearsed created (dry run)');
    expect((await fencer('get', 'job', 'rehearsed')).code).not.toBe(0);
    writeFileSync(
      file,
      'apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: rehearsed\nspec:\n  resources: { cpu: lots, memory: 64Mi }\n  duration: 1h\n',
    );
    const bad = await fencer('apply', '-f', file, '--dry-run=client');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/spec\.resources\.cpu: .*\(line 6\)/);

    const phase = async () => JSON.parse((await fencer('get', 'job', 'train', '-o', 'json')).stdout).status.phase;
    const before = await phase();
    expect((await fencer('cancel', 'job', 'train', '--dry-run=server')).stdout.trim()).toBe(
      'job.fencer.dev "train" cancelled (server dry run)',
    );
    expect((await fencer('delete', 'job', 'train', '--dry-run=server')).stdout.trim()).toBe(
      'job.fencer.dev "train" deleted (server dry run)',
    );
    expect((await fencer('delete', 'job', 'train', '--dry-run=client')).stdout.trim()).toBe(
      'job.fencer.dev "train" deleted (dry run)',
    );
    expect((await fencer('delete', 'job', 'nothing', '--dry-run=client')).code).not.toBe(0);
    expect(await phase()).toBe(before);
    expect((await fencer('delete', 'job', 'train', '--dry-run=maybe')).stderr).toContain(
      '--dry-run must be "none", "server" or "client"',
    );
  });

  it('lists namespaces (core v1) with what each holds', async () => {
    const { stdout, code, stderr } = await kubectl('get', 'namespaces');
    expect(code, stderr).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^NAME\s+PENDING\s+RUNNING/);
    expect(stdout).toMatch(/^default\s+\d+\s+\d+/m);
    const one = JSON.parse((await kubectl('get', 'ns', 'default', '-o', 'json')).stdout);
    expect(one).toMatchObject({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
      status: { phase: 'Active' },
    });
  });
});
