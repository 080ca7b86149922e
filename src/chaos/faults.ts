// The faults a chaos campaign (and the chaos scripts) inject, each acting through the Cluster,
// so they work on every runtime. Each returns when the fault is in place; the ones that heal
// (freeze, partition) heal after their duration in the background and say so through `healed`.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import type { Cluster } from '../simulator/cluster.js';
import { applicationName } from '../store/db.js';
import { delay } from '../lifecycle.js';

export type FaultKind =
  | 'kill-leader'
  | 'freeze-leader'
  | 'freeze-leader-mid-transaction'
  | 'kill-node'
  | 'freeze-node'
  | 'partition-node'
  | 'restart-postgres'
  | 'terminate-leader-backends';

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
  const healed = delay(forMs).then(() => cluster.resume(action.name)).then(() => undefined);
  return { kind: 'freeze-leader', target: action.name, at: action.signalledAt!, epoch: action.epoch, healed };
}

/**
 * Freezes the leader while it is inside a fenced transaction, holding the lease row FOR SHARE.
 * Needs replicas started with FENCER_TEST_HOLD_FENCED_TX=holdFile (see src/lease/fenced.ts):
 * the next fenced transaction waits inside until we have frozen it. Falls back to a plain
 * freeze when no decision comes within a few seconds.
 */
export async function freezeLeaderMidTransaction(cluster: Cluster, holdFile: string, forMs: number): Promise<FaultOutcome> {
  const inside = `${holdFile}.inside`;
  rmSync(inside, { force: true });
  writeFileSync(holdFile, 'hold');
  const deadline = Date.now() + 5000;
  while (!existsSync(inside) && Date.now() < deadline) await delay(5);
  const holder = existsSync(inside) ? (JSON.parse(readFileSync(inside, 'utf8')) as { pid: number; replica: string | null }) : undefined;
  const name = cluster.replicaNames.find((n) => holder !== undefined && (holder.replica === n || cluster.pid(n) === holder.pid));
  if (!name) {
    rmSync(holdFile, { force: true });
    return freezeLeader(cluster, forMs);
  }
  const action = await cluster.freeze(name);
  // The next leader must not wait; the frozen one goes on (and is rejected) once resumed.
  rmSync(holdFile, { force: true });
  rmSync(inside, { force: true });
  const healed = delay(forMs).then(() => cluster.resume(name)).then(() => undefined);
  return { kind: 'freeze-leader-mid-transaction', target: name, at: action.signalledAt!, epoch: action.epoch, healed };
}

export async function killNode(cluster: Cluster, node: string): Promise<FaultOutcome> {
  const action = await cluster.kill(node);
  return { kind: 'kill-node', target: node, at: action.signalledAt!, epoch: null, healed: done };
}

export async function freezeNode(cluster: Cluster, node: string, forMs: number): Promise<FaultOutcome> {
  const action = await cluster.freeze(node);
  const healed = delay(forMs).then(() => cluster.resume(node)).then(() => undefined);
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
    const { rowCount } = await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [applicationName(replica)],
    );
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}
