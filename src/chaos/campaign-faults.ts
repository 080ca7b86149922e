// The faults a chaos campaign (and the chaos scripts) inject, each acting through the Cluster,
// so they work on every runtime. Each returns when the fault is in place; the ones that heal
// (freeze, partition) heal after their duration in the background and say so through `healed`.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import type { Cluster } from '../simulator/local-cluster.js';
import { applicationName } from '../store/db.js';
import { sql } from '../store/sql.js';
import { delay } from '../lifecycle.js';
import { writeFaults, type Faults, type PathFault } from '../testing/overload-faults.js';
import type { NodeRow } from '../store/rows.js';
import { formatCpu, formatMemory } from '../domain/quantity.js';
import { NODE_ROUTES } from '../agent-protocol/routes.js';

export type FaultKind =
  | 'kill-leader'
  | 'freeze-leader'
  | 'freeze-leader-mid-transaction'
  | 'kill-node'
  | 'freeze-node'
  | 'partition-node'
  | 'restart-postgres'
  | 'terminate-leader-backends'
  | 'degrade-reports'
  | 'exhaust-pool'
  | 'fail-heartbeats'
  | 'late-registration';

export interface FaultOutcome {
  kind: FaultKind;
  target: string;
  /** Date.now() when the fault struck. */
  at: number;
  /** The lease epoch when it struck (replica faults). */
  epoch: number | null;
  /** Resolves when a temporary fault (freeze, partition) has been undone. */
  healed: Promise<void>;
}

const done = Promise.resolve();

export async function killLeader(cluster: Cluster): Promise<FaultOutcome> {
  const action = await cluster.kill('leader');
  return { kind: 'kill-leader', target: action.name, at: action.signalledAt!, epoch: action.epoch, healed: done };
}

export async function freezeLeader(cluster: Cluster, forMs: number): Promise<FaultOutcome> {
  const action = await cluster.freeze('leader');
  const healed = delay(forMs)
    .then(() => cluster.resume(action.name))
    .then(() => undefined);
  return { kind: 'freeze-leader', target: action.name, at: action.signalledAt!, epoch: action.epoch, healed };
}

/**
 * Freezes the leader while it is inside a fenced transaction, holding the lease row FOR SHARE.
 * Needs replicas started with FENCER_TEST_HOLD_FENCED_TX=holdFile (see src/lease/fenced.ts):
 * the next fenced transaction waits inside until we have frozen it. Falls back to a plain
 * freeze when no decision comes within a few seconds.
 */
export async function freezeLeaderMidTransaction(
  cluster: Cluster,
  holdFile: string,
  forMs: number,
): Promise<FaultOutcome> {
  const inside = `${holdFile}.inside`;
  rmSync(inside, { force: true });
  writeFileSync(holdFile, 'hold');
  const deadline = Date.now() + 5000;
  while (!existsSync(inside) && Date.now() < deadline) await delay(5);
  const holder = existsSync(inside)
    ? (JSON.parse(readFileSync(inside, 'utf8')) as { pid: number; replica: string | null })
    : undefined;
  const name = cluster.replicaNames.find(
    (n) => holder !== undefined && (holder.replica === n || cluster.pid(n) === holder.pid),
  );
  if (!name) {
    rmSync(holdFile, { force: true });
    return freezeLeader(cluster, forMs);
  }
  const action = await cluster.freeze(name);
  // The next leader must not wait; the frozen one goes on (and is rejected) once resumed.
  rmSync(holdFile, { force: true });
  rmSync(inside, { force: true });
  const healed = delay(forMs)
    .then(() => cluster.resume(name))
    .then(() => undefined);
  return { kind: 'freeze-leader-mid-transaction', target: name, at: action.signalledAt!, epoch: action.epoch, healed };
}

export async function killNode(cluster: Cluster, node: string): Promise<FaultOutcome> {
  const action = await cluster.kill(node);
  return { kind: 'kill-node', target: node, at: action.signalledAt!, epoch: null, healed: done };
}

export async function freezeNode(cluster: Cluster, node: string, forMs: number): Promise<FaultOutcome> {
  const action = await cluster.freeze(node);
  const healed = delay(forMs)
    .then(() => cluster.resume(node))
    .then(() => undefined);
  return { kind: 'freeze-node', target: node, at: action.signalledAt!, epoch: null, healed };
}

export async function partitionNode(cluster: Cluster, node: string, forMs: number): Promise<FaultOutcome> {
  const at = Date.now();
  await cluster.partition(node);
  const healed = delay(forMs).then(() => cluster.heal(node));
  return { kind: 'partition-node', target: node, at, epoch: null, healed };
}

export async function restartPostgres(cluster: Cluster): Promise<FaultOutcome> {
  const at = Date.now();
  await cluster.restartDatabase();
  return { kind: 'restart-postgres', target: 'postgres', at, epoch: null, healed: done };
}

/** Ends every PostgreSQL session of the leading replica (pg_terminate_backend). */
export async function terminateLeaderBackends(cluster: Cluster): Promise<FaultOutcome> {
  const leader = await cluster.leader();
  if (!leader) throw new Error('no replica leads right now');
  const at = Date.now();
  await terminateBackends(cluster.databaseUrl, leader.name);
  return { kind: 'terminate-leader-backends', target: leader.name, at, epoch: leader.epoch, healed: done };
}

export async function terminateBackends(databaseUrl: string, replica: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(sql('chaos/terminate_backends'), [applicationName(replica)]);
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * The test-only faults file every replica of a campaign reads (FENCER_TEST_FAULTS, src/testing/overload-faults.ts):
 * faults that overlap in time are merged, and each is taken out again when it heals.
 */
export class FaultFile {
  private readonly active = new Map<string, Faults>();
  private next = 0;

  constructor(readonly path: string) {
    this.write();
  }

  /** Puts a fault in force for `forMs`; the promise resolves once it is lifted. */
  async apply(faults: Faults, forMs: number): Promise<void> {
    const id = `f${++this.next}`;
    this.active.set(id, faults.pool ? { ...faults, pool: { ...faults.pool, id } } : faults);
    this.write();
    await delay(forMs);
    this.active.delete(id);
    this.write();
  }

  private write(): void {
    const merged: Faults = {};
    for (const faults of this.active.values()) {
      for (const kind of ['reports', 'heartbeats', 'snapshots'] as const) {
        const fault = faults[kind];
        if (fault) merged[kind] = mergePathFaults(merged[kind], fault);
      }
      if (faults.pool) merged.pool = faults.pool;
    }
    writeFaults(this.path, merged);
  }
}

function mergePathFaults(a: PathFault | undefined, b: PathFault): PathFault {
  if (!a) return b;
  const delayMs = Math.max(a.delayMs ?? 0, b.delayMs ?? 0);
  const status = a.status ?? b.status;
  return {
    nodes: [...new Set([...a.nodes, ...b.nodes])],
    ...(delayMs ? { delayMs } : {}),
    ...(status ? { status } : {}),
  };
}

/** A node's reports are answered 503 and its snapshots come a second late, while its heartbeats pass. */
export async function degradeReports(file: FaultFile, node: string, forMs: number): Promise<FaultOutcome> {
  const at = Date.now();
  const healed = file.apply(
    { reports: { nodes: [node], status: 503 }, snapshots: { nodes: [node], delayMs: 1000 } },
    forMs,
  );
  return { kind: 'degrade-reports', target: node, at, epoch: null, healed };
}

/** Every API connection of one replica (or of all: '*') taken for a while. */
export async function exhaustPool(file: FaultFile, replica: string, forMs: number): Promise<FaultOutcome> {
  const at = Date.now();
  const healed = file.apply({ pool: { replicas: [replica], holdMs: forMs, id: '' } }, forMs + 500);
  return { kind: 'exhaust-pool', target: replica, at, epoch: null, healed };
}

/** A node's heartbeats are answered 503 while its reports pass: it must fence itself, then die. */
export async function failHeartbeats(file: FaultFile, node: string, forMs: number): Promise<FaultOutcome> {
  const at = Date.now();
  const healed = file.apply({ heartbeats: { nodes: [node], status: 503 } }, forMs);
  return { kind: 'fail-heartbeats', target: node, at, epoch: null, healed };
}

/**
 * The node's own registration, sent again as a request that timed out at the node and reached
 * a replica late would be: same name, capacity, labels and incarnation, a few times, to every
 * replica, while placements and reports go on; and one from an older process of the node
 * (a lower generation), which must change nothing.
 */
export async function lateRegistration(cluster: Cluster, node: string): Promise<FaultOutcome> {
  const at = Date.now();
  const client = new pg.Client({ connectionString: cluster.databaseUrl });
  await client.connect();
  let row:
    | (Pick<NodeRow, 'cpu_millis' | 'memory_bytes' | 'labels'> & {
        incarnation: string | null;
        generation: string | null;
      })
    | undefined;
  try {
    row = (await client.query(sql('nodes/get'), [node])).rows[0];
  } finally {
    await client.end();
  }
  if (row) {
    const capacity = { cpu: formatCpu(Number(row.cpu_millis)), memory: formatMemory(Number(row.memory_bytes)) };
    const generation = row.generation === null ? undefined : Number(row.generation);
    // The current process's registration again, and one from a process before it (which must be refused).
    const bodies = [
      JSON.stringify({ name: node, capacity, labels: row.labels, incarnation: row.incarnation, generation }),
    ];
    if (generation !== undefined && generation > 0) {
      bodies.push(
        JSON.stringify({
          name: node,
          capacity,
          labels: row.labels,
          incarnation: randomUUID(),
          generation: generation - 1,
        }),
      );
    }
    await Promise.allSettled(
      cluster.replicaUrls.flatMap((url) =>
        bodies.flatMap((body) =>
          [0, 5, 20].map(async (wait) => {
            await delay(wait);
            await cluster.fetch(`${url}${NODE_ROUTES.register.path()}`, {
              method: 'POST',
              body,
              headers: { authorization: `Bearer ${cluster.joinTokenOf(node)}`, 'content-type': 'application/json' },
              signal: AbortSignal.timeout(2000),
            });
          }),
        ),
      ),
    );
  }
  return { kind: 'late-registration', target: node, at, epoch: null, healed: done };
}
