// Never run twice, also under overload: a control plane that is slow rather than dead. Real
// replicas and agents; faults injected per path and per node (src/faults.ts): reports answered
// 503 while heartbeats pass, snapshots delivered late while keepalives flow. The verdict is the
// checker's, over the history and the nodes' own run logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { check } from '../../src/checker/check.js';
import { readHistory, readRunLogs } from '../../src/checker/read.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { setFaults } from '../helpers/faults.js';

let t: TestDatabase;
let cluster: Cluster;
let home: string;
let faults: string;

const CONFIRM_TIMEOUT_MS = 1500;

function nodeLog(node: string): Array<Record<string, any>> {
  const file = cluster.nodeLogFile(node);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

async function verdict() {
  const nodes = ['node-1', 'node-2'].map((n) => cluster.nodeLogFile(n)).filter(existsSync);
  return check({ history: await readHistory(t.db), runs: readRunLogs(nodes) });
}

beforeAll(async () => {
  t = await freshDatabase('overload');
  home = mkdtempSync(join(tmpdir(), 'fencer-overload-'));
  faults = join(home, 'faults.json');
  setFaults(faults, {});
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 2,
    nodeCpu: '2',
    nodeMemory: '4Gi',
    nodeLabels: (i) => ({ pool: i === 0 ? 'default' : 'spare' }),
    databaseUrl: t.url,
    home,
    timings: { ...DEFAULT_TIMINGS, confirmTimeoutMs: CONFIRM_TIMEOUT_MS },
    env: { FENCER_TEST_FAULTS: faults },
  });
});

afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
  else console.log(`cluster home kept: ${home}`);
});

describe('an overloaded control plane', () => {
  it('never has a job run on two nodes at once when a node cannot get its start through in time', async () => {
    // node-1's reports fail (every replica busy) and its snapshots arrive late (read through the
    // same busy pool), while its heartbeats and keepalives pass: it is alive and connected.
    setFaults(faults, { reports: { nodes: ['node-1'], status: 503 }, snapshots: { nodes: ['node-1'], delayMs: 2 * CONFIRM_TIMEOUT_MS } });
    expect(await submit(cluster.replicaUrls, jobYaml('slow-start', { cpu: '1', memory: '1Gi', duration: '4s', nodeSelector: { pool: 'default' } }))).toBe(201);
    const first = await eventually(async () => {
      const row = (await t.db.query<{ id: string; node: string }>("SELECT a.id, a.node FROM assignments a JOIN jobs j ON j.uid = a.job_uid WHERE j.name = 'slow-start'")).rows[0];
      return row ?? null;
    }, { what: 'the first placement' });
    expect(first.node).toBe('node-1'); // the only node of its pool
    // Send the retry to node-2, as moving a node between pools would: the question is what
    // node-1 does with the assignment it hears of late.
    await t.db.query(`UPDATE nodes SET labels = jsonb_build_object('pool', CASE name WHEN 'node-1' THEN 'spare' ELSE 'default' END)`);
    const other = 'node-2';

    await eventually(async () => (await t.db.query("SELECT phase FROM jobs WHERE name = 'slow-start'")).rows[0].phase === 'Succeeded', {
      timeoutMs: 30_000,
      what: 'the job to succeed',
    });
    // node-1 heard of its assignment only after the control plane gave it away. Lift the faults
    // and wait until it decided (a stop, or a refusal of that assignment, in its log).
    setFaults(faults, {});
    await eventually(() => nodeLog(first.node).some((l) => l.assignment === first.id && l.event !== 'start'), {
      timeoutMs: 20_000,
      what: `${first.node} to decide about its late assignment`,
    });
    const report = await verdict();
    expect(report.overlappingRuns).toEqual([]);
    expect(report.placedTwice).toEqual([]);
    expect(nodeLog(other).filter((l) => l.event === 'start' && l.job === 'default/slow-start')).toHaveLength(1);
  });
});
