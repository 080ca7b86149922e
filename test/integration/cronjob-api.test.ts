// CronJobs on the API of a real replica that leads (its cron controller fires; no node is needed:
// a fired Job waits Pending, which is what Forbid and Replace look at). Apply (201, 200), edit,
// refusals with their paths and nothing stored, firing every second under each overlap policy,
// suspend, and a two-hour outage per catch-up policy (the cursor set two hours back before the
// leader starts, as if no leader had run meanwhile). Last, the CLI against the same replica.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { eventually } from '../helpers/eventually.js';
import { projectRoot } from '../../src/paths.js';
import type { Replica } from '../../src/replica.js';
import { applyCronJob } from '../../src/cron/store.js';
import { validateCronJob } from '../../src/api/validation/cronjob.js';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { nextOccurrence, occurrencesBetween, parseSchedule, ON_TIME_SECONDS } from '../../src/cron/schedule.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let replica: Replica;

beforeAll(async () => {
  t = await freshDatabase('cronjob_api');
  replica = await startReplica(t.url, 'replica-c', { confirmTimeoutMs: 120_000 });
  await eventually(async () => (await call('GET', '/api/v1/status')).body.leader === 'replica-c', {
    what: 'the replica to lead',
  });
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
});

async function call(method: string, path: string, body?: string, contentType = 'application/yaml', url = replica.url) {
  const res = await adminFetch(url + path, { method, body, headers: body ? { 'content-type': contentType } : {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

function cronYaml(
  name: string,
  spec: string,
  template = 'resources: { cpu: 100m, memory: 64Mi }\n      duration: 1h',
): string {
  return `apiVersion: fencer.dev/v1
kind: CronJob
metadata:
  name: ${name}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
  jobTemplate:
    spec:
      ${template}
`;
}

async function occurrences(
  name: string,
): Promise<Array<{ scheduledTime: string; outcome: string; reason?: string; job?: string }>> {
  return (await call('GET', `/api/v1/namespaces/default/cronjobs/${name}/occurrences`)).body.items;
}

describe('apply, get, edit', () => {
  it('creates (201), answers the same again 200, and an edit moves the version but not an unchanged cursor', async () => {
    const yaml = cronYaml('nightly', 'schedule: "30 2 * * *"\ntimeZone: Europe/Berlin');
    const created = await call('POST', '/api/v1/cronjobs', yaml);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'CronJob',
      metadata: { name: 'nightly', namespace: 'default' },
      spec: {
        schedule: '30 2 * * *',
        timeZone: 'Europe/Berlin',
        concurrencyPolicy: 'Allow',
        catchUp: 'latest',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
      },
      status: { activeCount: 0, active: [] },
    });
    const next = created.body.status.nextScheduleTime as string;
    expect(new Date(next).toISOString()).toBe(
      nextOccurrence(parseSchedule('30 2 * * *', 'Europe/Berlin'), new Date(Date.parse(next) - 1))!.toISOString(),
    );
    expect((await call('POST', '/api/v1/cronjobs', yaml)).status).toBe(200);
    const edited = await call(
      'POST',
      '/api/v1/cronjobs',
      cronYaml('nightly', 'schedule: "30 2 * * *"\ntimeZone: Europe/Berlin\nsuspend: true'),
    );
    expect(edited.status).toBe(200);
    expect(edited.body.spec.suspend).toBe(true);
    expect(edited.body.status.nextScheduleTime).toBe(next);
    expect(Number(edited.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.body.metadata.resourceVersion));
    const list = await call('GET', '/api/v1/namespaces/default/cronjobs');
    expect(list.body.kind).toBe('CronJobList');
    expect(list.body.items.map((c: any) => c.metadata.name)).toContain('nightly');
  });

  it.each([
    ['an unknown time zone', 'schedule: "0 9 * * *"\ntimeZone: Mars/Olympus', 'spec.timeZone', /Mars\/Olympus/],
    ['a schedule that never fires', 'schedule: "0 0 30 2 *"', 'spec.schedule', /never fires/],
    ['seven fields', 'schedule: "* * * * * * *"', 'spec.schedule', /7 fields/],
    ['a bad field', 'schedule: "61 * * * *"', 'spec.schedule', /minute/],
    ['an unknown policy', 'schedule: "@daily"\nconcurrencyPolicy: Sometimes', 'spec.concurrencyPolicy', /Allow/],
  ])('refuses %s on %s, storing nothing', async (_what, spec, path, message) => {
    const res = await call('POST', '/api/v1/cronjobs', cronYaml('refused', spec));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path, message: expect.stringMatching(message) })]),
    );
    expect((await call('GET', '/api/v1/namespaces/default/cronjobs/refused')).status).toBe(404);
  });

  it('refuses a name its Jobs could not carry and a template with its own start time', async () => {
    const long = await call('POST', '/api/v1/cronjobs', cronYaml('a'.repeat(53), 'schedule: "@daily"'));
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual([
      expect.objectContaining({ path: 'metadata.name', message: expect.stringMatching(/52 characters/) }),
    ]);
    const startAt = await call(
      'POST',
      '/api/v1/cronjobs',
      cronYaml(
        'starts',
        'schedule: "@daily"',
        'resources: { cpu: 100m, memory: 64Mi }\n      duration: 1s\n      startAfter: 5s',
      ),
    );
    expect(startAt.status).toBe(400);
    expect(startAt.body.error.details).toEqual([expect.objectContaining({ path: 'spec.jobTemplate.spec.startAfter' })]);
  });
});

describe('firing', () => {
  it('Allow: every second a Job named from the scheduled time, labelled, due at that time; status follows', async () => {
    expect((await call('POST', '/api/v1/cronjobs', cronYaml('tick', 'schedule: "* * * * * *"'))).status).toBe(201);
    const fired = await eventually(
      async () => {
        const o = (await occurrences('tick')).filter((x) => x.outcome === 'Fired');
        return o.length >= 3 ? o : undefined;
      },
      { what: 'three occurrences of tick' },
    );
    for (const o of fired) {
      expect(o.job).toBe(`tick-${Date.parse(o.scheduledTime) / 1000}`);
      const job = (await call('GET', `/api/v1/namespaces/default/jobs/${o.job}`)).body;
      expect(job.metadata.labels['fencer.dev/cronjob']).toBe('tick');
      expect(job.status.dueTime ?? job.status.startTime).toBeDefined();
    }
    const cron = (await call('GET', '/api/v1/namespaces/default/cronjobs/tick')).body;
    expect(Date.parse(cron.status.lastScheduleTime)).toBeGreaterThanOrEqual(Date.parse(fired[0]!.scheduledTime));
    expect(Date.parse(cron.status.nextScheduleTime)).toBeGreaterThan(Date.parse(cron.status.lastScheduleTime));
    await call('DELETE', '/api/v1/namespaces/default/cronjobs/tick');
    // Each Job was due at its occurrence, by the history (the Jobs went with their CronJob).
    // How late each fire was, on /metrics as a histogram.
    const metrics = await (await adminFetch(`${replica.url}/metrics`)).text();
    expect(Number(/^fencer_cron_lateness_seconds_count (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    const history = await t.db.query<{ job: string; due_at: Date }>(
      "SELECT job, due_at FROM history WHERE entity = 'job' AND from_state IS NULL AND job LIKE 'default/tick-%'",
    );
    expect(history.rows.length).toBeGreaterThanOrEqual(3);
    for (const row of history.rows) expect(row.job).toBe(`default/tick-${row.due_at.getTime() / 1000}`);
  });

  it('Forbid: while its Job is unfinished, the next occurrences are Skipped (StillRunning)', async () => {
    await call('POST', '/api/v1/cronjobs', cronYaml('single', 'schedule: "* * * * * *"\nconcurrencyPolicy: Forbid'));
    const seen = await eventually(
      async () => {
        const o = await occurrences('single');
        return o.filter((x) => x.reason === 'StillRunning').length >= 2 ? o : undefined;
      },
      { what: 'two StillRunning skips' },
    );
    expect(seen.filter((x) => x.outcome === 'Fired')).toHaveLength(1);
    const cron = (await call('GET', '/api/v1/namespaces/default/cronjobs/single')).body;
    expect(cron.status.activeCount).toBe(1);
    await call('DELETE', '/api/v1/namespaces/default/cronjobs/single');
  });

  it('Replace: each new occurrence cancels the unfinished Job before (reason Replaced)', async () => {
    await call('POST', '/api/v1/cronjobs', cronYaml('swap', 'schedule: "* * * * * *"\nconcurrencyPolicy: Replace'));
    await eventually(async () => (await occurrences('swap')).filter((x) => x.outcome === 'Fired').length >= 3, {
      what: 'three fires of swap',
    });
    const jobs = (await call('GET', '/api/v1/jobs?namespace=default&labelSelector=fencer.dev/cronjob=swap')).body.items;
    const unfinished = jobs.filter((j: any) => ['Pending', 'Assigned', 'Running'].includes(j.status.phase));
    expect(unfinished.length).toBeLessThanOrEqual(1);
    expect(
      jobs.filter(
        (j: any) => j.status.phase === 'Cancelled' && j.status.conditions.some((c: any) => c.reason === 'Replaced'),
      ).length,
    ).toBeGreaterThanOrEqual(1);
    await call('DELETE', '/api/v1/namespaces/default/cronjobs/swap');
  });

  it('suspend: occurrences are recorded Skipped (Suspended), and no Job is made', async () => {
    await call('POST', '/api/v1/cronjobs', cronYaml('paused', 'schedule: "* * * * * *"\nsuspend: true'));
    const seen = await eventually(
      async () => {
        const o = await occurrences('paused');
        return o.length >= 2 ? o : undefined;
      },
      { what: 'two occurrences of paused' },
    );
    expect(seen.every((o) => o.outcome === 'Skipped' && o.reason === 'Suspended')).toBe(true);
    await call('DELETE', '/api/v1/namespaces/default/cronjobs/paused');
  });
});

describe('a workflowTemplate', () => {
  it('fires a Workflow per occurrence (its jobs named from it and due then); Forbid counts its unfinished jobs', async () => {
    const yaml = `apiVersion: fencer.dev/v1
kind: CronJob
metadata:
  name: etl
spec:
  schedule: "* * * * * *"
  concurrencyPolicy: Forbid
  workflowTemplate:
    spec:
      jobs:
        - name: extract
          template: { resources: { cpu: 100m, memory: 64Mi }, duration: 1h }
        - name: load
          needs: [extract]
          template: { resources: { cpu: 100m, memory: 64Mi }, duration: 1h }
`;
    expect((await call('POST', '/api/v1/cronjobs', yaml)).status).toBe(201);
    const seen = await eventually(
      async () => {
        const o = await occurrences('etl');
        return o.some((x) => x.reason === 'StillRunning') ? o : undefined;
      },
      { what: 'a fire and a StillRunning skip' },
    );
    const fired = seen.filter((o) => o.outcome === 'Fired');
    expect(fired).toHaveLength(1);
    const name = `etl-${Date.parse(fired[0]!.scheduledTime) / 1000}`;
    expect(fired[0]!.job).toBe(name);
    const workflow = (await call('GET', `/api/v1/namespaces/default/workflows/${name}`)).body;
    expect(workflow.metadata.labels['fencer.dev/cronjob']).toBe('etl');
    const jobs = (await call('GET', `/api/v1/jobs?namespace=default&labelSelector=fencer.dev/workflow=${name}`)).body
      .items;
    expect(jobs.map((j: any) => j.metadata.name).sort()).toEqual([`${name}-extract`, `${name}-load`]);
    expect((await call('DELETE', '/api/v1/namespaces/default/cronjobs/etl')).status).toBe(200);
    expect((await call('GET', `/api/v1/namespaces/default/workflows/${name}`)).status).toBe(404); // went with its CronJob
  });
});

describe('a namespace over its pending quota', () => {
  it('keeps the occurrence due and says QuotaExceeded until there is room; nothing is half-made', async () => {
    const quota =
      'apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata: { name: limits, namespace: capped }\nspec: { hard: { pendingJobs: 1 } }\n';
    expect((await call('POST', '/api/v1/resourcequotas', quota)).status).toBe(201);
    const yaml = cronYaml('full', 'schedule: "* * * * * *"').replace(
      '  name: full\n',
      '  name: full\n  namespace: capped\n',
    );
    expect((await call('POST', '/api/v1/cronjobs', yaml)).status).toBe(201);
    const blocked = await eventually(
      async () => {
        const c = (await call('GET', '/api/v1/namespaces/capped/cronjobs/full')).body;
        return c.status.conditions.some(
          (x: any) => x.type === 'Firing' && x.status === 'False' && x.reason === 'QuotaExceeded',
        )
          ? c
          : undefined;
      },
      { what: 'the CronJob to say QuotaExceeded' },
    );
    expect(Date.parse(blocked.status.nextScheduleTime)).toBeLessThanOrEqual(Date.now());
    const made = (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE namespace = 'capped'")).rows[0].n;
    expect(made).toBe(1);
    const records = (await t.db.query("SELECT count(*)::int AS n FROM cron_occurrences WHERE cronjob = 'capped/full'"))
      .rows[0].n;
    expect(records).toBe(1); // the blocked fire wrote nothing: no record, no cursor move
    await call('DELETE', '/api/v1/namespaces/capped/resourcequotas/limits');
    await eventually(async () => (await t.db.query("SELECT 1 FROM jobs WHERE namespace = 'capped'")).rowCount! >= 2, {
      what: 'firing again once there is room',
    });
    const after = (await call('GET', '/api/v1/namespaces/capped/cronjobs/full')).body;
    expect(after.status.conditions[0].reason).toBe('OnSchedule');
    await call('DELETE', '/api/v1/namespaces/capped/cronjobs/full');
  });
});

describe('edge cases a review found', () => {
  it('an occurrence whose Job name another Job took is recorded Skipped (NameTaken), not lost', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (let s = now + 2; s <= now + 4; s++) {
      const job = `apiVersion: fencer.dev/v1\nkind: Job\nmetadata: { name: squat-${s} }\nspec: { resources: { cpu: 100m, memory: 64Mi }, duration: 1h }\n`;
      expect((await call('POST', '/api/v1/jobs', job)).status).toBe(201);
    }
    await call('POST', '/api/v1/cronjobs', cronYaml('squat', 'schedule: "* * * * * *"'));
    const seen = await eventually(
      async () => {
        const o = await occurrences('squat');
        return o.some((x) => Date.parse(x.scheduledTime) / 1000 > now + 5) ? o : undefined;
      },
      { what: 'occurrences past the taken names' },
    );
    await call('DELETE', '/api/v1/namespaces/default/cronjobs/squat');
    for (const x of seen.filter((o) => {
      const s = Date.parse(o.scheduledTime) / 1000;
      return s >= now + 2 && s <= now + 4;
    })) {
      expect([x.outcome, x.reason]).toEqual(['Skipped', 'NameTaken']);
    }
  });

  it('catchUp all under a pending quota smaller than the backlog fires one at a time instead of never', async () => {
    const quota =
      'apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata: { name: limits, namespace: backlog }\nspec: { hard: { pendingJobs: 3 } }\n';
    expect((await call('POST', '/api/v1/resourcequotas', quota)).status).toBe(201);
    const yaml = cronYaml('behind', 'schedule: "*/10 * * * *"\ncatchUp: all').replace(
      '  name: behind\n',
      '  name: behind\n  namespace: backlog\n',
    );
    expect((await call('POST', '/api/v1/cronjobs', yaml)).status).toBe(201);
    // An outage of an hour: six occurrences due at once, more than the quota takes.
    await t.db.query(
      "UPDATE cronjobs SET next_fire_at = date_trunc('hour', now()) - interval '1 hour' WHERE name = 'behind'",
    );
    await eventually(async () => (await t.db.query("SELECT 1 FROM jobs WHERE namespace = 'backlog'")).rowCount === 3, {
      what: 'three jobs, as the quota allows',
    });
    await call('DELETE', '/api/v1/namespaces/backlog/cronjobs/behind');
    await call('DELETE', '/api/v1/namespaces/backlog/resourcequotas/limits');
  });
});

describe('after a two-hour outage', () => {
  let o: TestDatabase;
  let leader: Replica | undefined;

  afterAll(async () => {
    await leader?.stop();
    await o?.close();
  });

  it('each catch-up policy does what it promises, and deadlines skip whatever it says', async () => {
    o = await freshDatabase('cronjob_outage');
    const make = (name: string, spec: string) =>
      applyCronJob(o.db, validateCronJob(parseManifests(cronYaml(name, spec))[0]!));
    for (const policy of ['latest', 'all', 'none'])
      await make(`every10-${policy}`, `schedule: "*/10 * * * *"\ncatchUp: ${policy}`);
    await make('deadline', 'schedule: "*/10 * * * *"\ncatchUp: all\nstartingDeadlineSeconds: 1800');
    const schedule = parseSchedule('*/10 * * * *', 'UTC');
    const dbNow = (await o.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    const cursor = nextOccurrence(schedule, new Date(dbNow.getTime() - 2 * 3600_000))!;
    await o.db.query('UPDATE cronjobs SET next_fire_at = $1', [cursor]);

    leader = await startReplica(o.url, 'replica-o');
    const records = async (name: string) =>
      (
        await o.db.query<{ scheduled_at: Date; outcome: string; reason: string | null; at: Date }>(
          "SELECT scheduled_at, outcome, reason, at FROM cron_occurrences WHERE cronjob = 'default/' || $1 ORDER BY scheduled_at",
          [name],
        )
      ).rows;
    await eventually(
      async () => (await o.db.query('SELECT 1 FROM cronjobs WHERE next_fire_at <= now()')).rowCount === 0,
      { what: 'every missed occurrence handled' },
    );
    const firstFire = (await records('every10-all'))[0]!.at;
    const missed = occurrencesBetween(schedule, new Date(cursor.getTime() - 1), firstFire, 100);
    expect(missed.length).toBeGreaterThanOrEqual(12);
    const last = missed.at(-1)!;

    const latest = await records('every10-latest');
    expect(latest.map((r) => r.scheduled_at.getTime())).toEqual(missed.map((d) => d.getTime()));
    expect(latest.filter((r) => r.outcome === 'Fired').map((r) => r.scheduled_at)).toEqual([last]);
    expect(latest.filter((r) => r.outcome === 'Skipped').every((r) => r.reason === 'MissedSchedule')).toBe(true);

    const all = await records('every10-all');
    expect(all.map((r) => [r.scheduled_at.getTime(), r.outcome])).toEqual(missed.map((d) => [d.getTime(), 'Fired']));

    const none = await records('every10-none');
    const lastOnTime = firstFire.getTime() - last.getTime() <= ON_TIME_SECONDS * 1000;
    expect(none.filter((r) => r.outcome === 'Fired').map((r) => r.scheduled_at)).toEqual(lastOnTime ? [last] : []);

    const deadline = await records('deadline');
    for (const r of deadline) {
      const late = firstFire.getTime() - r.scheduled_at.getTime() > 1800_000;
      expect([r.outcome, r.reason]).toEqual(late ? ['Skipped', 'MissedDeadline'] : ['Fired', null]);
    }
    // The jobs of catchUp all are each due at their own occurrence.
    const due = (
      await o.db.query<{ due_at: Date }>(
        "SELECT due_at FROM jobs j JOIN cronjobs c ON c.uid = j.cronjob_uid WHERE c.name = 'every10-all' ORDER BY due_at",
      )
    ).rows;
    expect(due.map((r) => r.due_at.getTime())).toEqual(missed.map((d) => d.getTime()));
  });
});

describe('the CLI', () => {
  // Not execFileSync: the replica answering it runs in this process.
  const cli = async (...args: string[]) =>
    (
      await promisify(execFile)(process.execPath, [
        join(projectRoot(), 'dist/cli/main.js'),
        ...args,
        '--server',
        replica.url,
      ])
    ).stdout;

  it('lists cronjobs with their schedule, zone, activity and next time, and describes one with its occurrences', async () => {
    await call('POST', '/api/v1/cronjobs', cronYaml('shown', 'schedule: "*/2 * * * * *"\ntimeZone: America/New_York'));
    await eventually(async () => (await occurrences('shown')).length >= 2, { what: 'occurrences of shown' });
    const table = await cli('get', 'cronjobs');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT\s+AGE/);
    expect(table).toMatch(/shown\s+\*\/2 \* \* \* \* \*\s+America\/New_York\s+false\s+\d+/);
    const described = await cli('describe', 'cronjob', 'shown');
    expect(described).toMatch(/Schedule:\s+\*\/2 \* \* \* \* \*/);
    expect(described).toMatch(/Recent Occurrences \(newest first\):/);
    expect(described).toMatch(/Fired\s+shown-\d+\s+\d+\.\d{3}s/);
    expect(await cli('delete', 'cronjob', 'shown')).toContain('cronjob.fencer.dev "shown" deleted');
  });

  it('applies examples/cronjobs.yaml (one per policy, four zones), and the ones with a seconds field fire', async () => {
    const applied = await cli('apply', '-f', join(projectRoot(), 'examples/cronjobs.yaml'));
    for (const name of ['heartbeat', 'report-sync', 'cache-refresh', 'invoices', 'nightly-backup', 'hourly-metrics'])
      expect(applied).toContain(`cronjob.fencer.dev/${name} created`);
    await eventually(
      async () => {
        for (const name of ['heartbeat', 'report-sync', 'cache-refresh'])
          if (!(await occurrences(name)).some((o) => o.outcome === 'Fired')) return false;
        return true;
      },
      { timeoutMs: 20_000, what: 'the examples with a seconds field to fire' },
    );
    const table = await cli('get', 'cronjobs');
    expect(table).toMatch(/^invoices\s+0 9 \* \* MON-FRI\s+America\/New_York\s+false\s+0\s+<none>\s+in /m);
    for (const name of ['heartbeat', 'report-sync', 'cache-refresh', 'invoices', 'nightly-backup', 'hourly-metrics'])
      await cli('delete', 'cronjob', name);
  });
});
