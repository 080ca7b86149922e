// The chaos checker against a real history: a job placed, run and finished through the store's
// own functions (the triggers write the history) and a run log written by the agent's RunLog is
// clean; with the unique index dropped and a second active assignment inserted, it reports the
// job placed twice. Also the program itself (chaos/check): exit 0 clean, 1 violation, 2 bad usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { fenced } from '../../src/lease/fenced.js';
import { commitPlacements } from '../../src/placement/store.js';
import { submitJob } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { reportFinished, reportStarted } from '../../src/agent-protocol/reports-store.js';
import { RunLog } from '../../src/agent/run-log.js';
import { check } from '../../src/checker/check.js';
import { readHistory, readRunLogs } from '../../src/checker/read.js';
import { jobRequest } from '../helpers/jobs.js';

const leader = { epoch: () => 7 };
const CHECK = join(process.cwd(), 'chaos', 'check');

describe('the checker on a real history and run log', () => {
  let t: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    t = await freshDatabase('checker');
    dir = mkdtempSync(join(tmpdir(), 'fencer-checker-'));
    await t.db.query("UPDATE lease SET holder = 't', epoch = 7, expires_at = now() + interval '1 hour'");
    await registerNode(t.db, 'node-1', 4000, 8 * 1024 ** 3, {});
    await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Submits, places on node-1 and returns what the node would be told. */
  async function place(name: string) {
    const uid = (await submitJob(t.db, jobRequest(name))).job.uid;
    expect(
      await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'node-1' }])),
    ).toBe(1);
    const a = (
      await t.db.query<{ id: string; epoch: number; attempt: number }>(
        'SELECT id, epoch::int AS epoch, attempt FROM assignments WHERE job_uid = $1',
        [uid],
      )
    ).rows[0]!;
    return { id: a.id, job: `default/${name}`, jobUid: uid, epoch: a.epoch, attempt: a.attempt };
  }

  function cli(...args: string[]) {
    return spawnSync(CHECK, args, { encoding: 'utf8' });
  }

  it('reports a placed, run and finished job clean', async () => {
    const log = new RunLog(join(dir, 'nodes', 'node-1.ndjson'), 'node-1');
    const a = await place('fine');
    log.start(a); // on disk before "started", as the agent does
    expect(await reportStarted(t.db, a.id, 'node-1')).toBe('ok');
    log.stop(a, 'completed');
    expect(await reportFinished(t.db, a.id, 'node-1', 'Succeeded', null)).toBe('ok');
    log.close();

    const history = await readHistory(t.url);
    expect(history.map((r) => [r.entity, r.toState])).toEqual([
      ['job', 'Pending'],
      ['job', 'Assigned'],
      ['assignment', 'Assigned'],
      ['assignment', 'Running'],
      ['job', 'Running'],
      ['assignment', 'Succeeded'],
      ['job', 'Succeeded'],
    ]);
    expect(history.every((r) => r.entity === 'assignment' || r.dueAt !== null)).toBe(true);
    const report = check({ history, runs: readRunLogs([dir]) });
    expect(report).toMatchObject({
      ok: true,
      placedTwice: [],
      overlappingRuns: [],
      lost: [],
      early: [],
      finished: { Succeeded: 1 },
    });
    expect(report.counts).toMatchObject({ jobs: 1, assignments: 1, runs: 1, rejected: 0, runsWithoutEnd: 0 });

    const json = join(dir, 'report.json');
    const run = cli('--database-url', t.url, '--logs', join(dir, 'nodes'), '--json', json);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/placed twice\s+0/);
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ ok: true, counts: { runs: 1 } });
  });

  it('reports a job placed twice once the unique index is gone and a second active assignment gets in', async () => {
    await t.db.query('DROP INDEX one_active_assignment_per_job');
    const a = await place('twice');
    const second = randomUUID();
    await t.db.query(
      "INSERT INTO assignments (id, job_uid, node, epoch, attempt, state, cpu_millis, memory_bytes, duration_ms, confirm_by) VALUES ($1, $2, 'node-1', 7, 1, 'Assigned', 1, 1, 1, now())",
      [second, a.jobUid],
    );

    const report = check({ history: await readHistory(t.db), runs: readRunLogs([dir]) });
    expect(report.ok).toBe(false);
    expect(report.placedTwice).toHaveLength(1);
    expect(report.placedTwice[0]).toMatchObject({ job: 'default/twice', jobUid: a.jobUid });
    expect(report.placedTwice[0]!.active.map((x) => x.assignment)).toEqual([a.id, second]);
    expect(report.lost.map((l) => l.job)).toEqual(['default/twice']); // it never finished either

    const run = cli('--database-url', t.url, '--logs', dir);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/placed twice\s+1/);
    expect(run.stdout).toContain(second);
  });

  it('exits 2 on bad usage or unreadable inputs', () => {
    expect(cli('--database-url', t.url).status).toBe(2); // no --logs
    expect(cli('--database-url', t.url, '--logs', join(dir, 'missing')).status).toBe(2);
    expect(cli('--bogus').status).toBe(2);
  });
});
