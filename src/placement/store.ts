// Placement's reads and writes: a round's input (the nodes, the queues' and quotas' limits and
// use, the pending jobs that could fit) and the leader's commit of a round and of why the rest
// wait. Each write runs inside a fenced transaction (the caller's `tx`), re-checks the row
// conditions it depends on, and locks in the order job, assignment, node.
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../store/db.js';
import { sql } from '../store/sql.js';
import { isBroken } from '../testing/broken-guards.js';
import type { NodeCapacity, PendingJob, Placement } from './best-fit.js';
import type { NamespaceQuotaState, QueueState } from '../fair-share/share-order.js';
import type { Lane } from '../domain/resources.js';
import { DEFAULT_MAX_UNCLAIMED } from '../config.js';

/** A pending job as placement reads it (placement/pending.sql, and the pending set's reads). */
export interface PendingRow {
  uid: string;
  namespace: string;
  queue: string;
  lane: Lane;
  cpu_millis: number;
  memory_bytes: number;
  duration_ms: number;
  path_ms: number;
  node_selector: Record<string, string>;
  image: string | null;
  pool: string | null;
}

interface CapacityRow {
  free_slots: number;
  name: string;
  cpu_millis: number;
  memory_bytes: number;
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  labels: Record<string, string>;
  images: string[];
}

interface QueueUseRow {
  namespace: string;
  name: string;
  weight: number;
  strict_lanes: boolean;
  concurrency_limit: number | null;
  cpu_limit_millis: number | null;
  memory_limit_bytes: number | null;
  running: number;
  cpu: number;
  memory: number;
}

interface QuotaUseRow {
  namespace: string;
  name: string;
  cpu_limit_millis: number | null;
  memory_limit_bytes: number | null;
  rate_per_second: number | null;
  rate_burst: number | null;
  cpu: number;
  memory: number;
  tokens: number | null;
}

export interface PlacementInput {
  jobs: PendingJob[];
  nodes: NodeCapacity[];
  queues: QueueState[];
  quotas: NamespaceQuotaState[];
  /** Whether some queue lane filled its slice of the round (more jobs wait behind it). */
  full: boolean;
}

/** What a round places on: the nodes, the queues' and quotas' limits and use, and which jobs could fit. */
export interface RoundState {
  nodes: NodeCapacity[];
  queues: QueueState[];
  quotas: NamespaceQuotaState[];
  /** placement/pending.sql's room test: the most free CPU and memory on a node, the largest node. */
  room: { freeCpu: number; freeMemory: number; capacityCpu: number; capacityMemory: number };
}

/** Each ready queue lane gets at least this many of a round's jobs, however many lanes there are. */
export const LEAST_SLICE = 500;

/**
 * A round's input: the nodes, then the queues' and quotas' limits and use, then the oldest
 * pending jobs of each queue lane that could fit on one of them now (no larger than the most free
 * CPU and the most free memory on any node) or on none ever (to be marked Unschedulable). On a
 * full cluster with a long backlog that is a handful of rows, not ten thousand read, sent and
 * parsed for nothing on every pass. The leader's pending set (pending-set.ts) answers the last
 * part from memory; this reads it from the database.
 */
export async function readPlacementInput(
  db: Db,
  limit: number,
  freshHeartbeatMs: number,
  maxUnclaimed: number = DEFAULT_MAX_UNCLAIMED,
): Promise<PlacementInput> {
  return readPendingJobs(db, limit, await readRoundState(db, freshHeartbeatMs, maxUnclaimed));
}

/** The pending part of a round's input from the database, for the state already read. */
export async function readPendingJobs(db: Db, limit: number, state: RoundState): Promise<PlacementInput> {
  const { room } = state;
  const rows = (
    await db.query<PendingRow>(sql('placement/pending'), [
      limit,
      room.freeCpu,
      room.freeMemory,
      room.capacityCpu,
      room.capacityMemory,
      LEAST_SLICE,
    ])
  ).rows;
  const perLane = new Map<string, number>();
  for (const r of rows)
    perLane.set(`${r.namespace}/${r.queue}/${r.lane}`, (perLane.get(`${r.namespace}/${r.queue}/${r.lane}`) ?? 0) + 1);
  const slice = Math.max(LEAST_SLICE, Math.floor(limit / Math.max(1, perLane.size)));
  return {
    ...state,
    jobs: rows.map(pendingJobOf),
    full: [...perLane.values()].some((n) => n >= slice),
  };
}

export function pendingJobOf(r: PendingRow): PendingJob {
  return {
    uid: r.uid,
    cpuMillis: r.cpu_millis,
    memoryBytes: r.memory_bytes,
    durationMs: r.duration_ms,
    pathMs: r.path_ms,
    nodeSelector: r.node_selector,
    image: r.image,
    pool: r.pool,
    namespace: r.namespace,
    queue: `${r.namespace}/${r.queue}`,
    lane: r.lane,
  };
}

/**
 * The nodes, then the queues' and quotas' limits and use. Limits and use before the jobs: a job
 * placed in between ends no earlier than it started, so the round can only think a queue fuller
 * than it is, never emptier.
 */
export async function readRoundState(
  db: Db,
  freshHeartbeatMs: number,
  maxUnclaimed: number = DEFAULT_MAX_UNCLAIMED,
): Promise<RoundState> {
  const read = (
    await db.query<{ nodes: CapacityRow[]; queues: QueueUseRow[]; quotas: QuotaUseRow[] }>(
      sql('placement/round_state'),
      [freshHeartbeatMs, maxUnclaimed],
    )
  ).rows[0]!;
  const nodes = read.nodes.map((r) => ({
    name: r.name,
    cpuMillis: r.cpu_millis,
    memoryBytes: r.memory_bytes,
    allocatedCpuMillis: r.allocated_cpu_millis,
    allocatedMemoryBytes: r.allocated_memory_bytes,
    labels: r.labels,
    images: r.images,
    freeSlots: r.free_slots,
  }));
  const room = { freeCpu: 0, freeMemory: 0, capacityCpu: 0, capacityMemory: 0 };
  for (const n of nodes) {
    room.capacityCpu = Math.max(room.capacityCpu, n.cpuMillis);
    room.capacityMemory = Math.max(room.capacityMemory, n.memoryBytes);
    if (n.freeSlots <= 0) continue; // room for no job now, whatever its size
    room.freeCpu = Math.max(room.freeCpu, n.cpuMillis - n.allocatedCpuMillis);
    room.freeMemory = Math.max(room.freeMemory, n.memoryBytes - n.allocatedMemoryBytes);
  }
  const queues = read.queues.map((r): QueueState => ({
    key: `${r.namespace}/${r.name}`,
    weight: r.weight,
    strictLanes: r.strict_lanes,
    concurrencyLimit: r.concurrency_limit,
    cpuLimitMillis: r.cpu_limit_millis,
    memoryLimitBytes: r.memory_limit_bytes,
    running: r.running,
    cpuMillis: r.cpu,
    memoryBytes: r.memory,
  }));
  const quotas = read.quotas.map((r): NamespaceQuotaState => ({
    namespace: r.namespace,
    name: r.name,
    cpuLimitMillis: r.cpu_limit_millis,
    memoryLimitBytes: r.memory_limit_bytes,
    cpuMillis: r.cpu,
    memoryBytes: r.memory,
    tokens: r.tokens,
    perSecond: r.rate_per_second,
    burst: r.rate_burst,
  }));
  return { nodes, queues, quotas, room };
}

/** A job a round's commit placed: its assignment and node, and how long it waited (seconds). */
export interface ClaimedJob {
  job: string;
  assignment: string;
  node: string;
  wait: number;
}

export class NodeGoneError extends Error {
  constructor() {
    super('a chosen node is no longer Ready; the round is rolled back and planned again');
    this.name = 'NodeGoneError';
  }
}

/**
 * Commits a round: claims each job still pending and due, and makes its assignment. Returns how
 * many were placed; throws NodeGoneError (rolling the whole round back) if a chosen node is no
 * longer Ready. Queue limits and quotas are checked by the database in the same statement
 * (migration 0009); `tokens` are what the round took from namespaces' placement-rate buckets.
 */
export async function commitPlacements(
  tx: Tx,
  epoch: number,
  placements: Placement[],
  tokens: ReadonlyMap<string, number> = new Map(),
  /** Filled with each job placed: its assignment, and its wait (for /metrics and the log, once the transaction commits). */
  claimed?: ClaimedJob[],
): Promise<number> {
  if (placements.length === 0) return 0;
  if (isBroken('queue-limit-commit')) await tx.query(sql('placement/skip_limit_check'));
  if (tokens.size > 0) await tx.query(sql('placement/take_tokens'), [[...tokens.keys()], [...tokens.values()]]);
  const result = await tx.query<{
    placed: number;
    nodes_ready: number;
    nodes_wanted: number;
    claimed: ClaimedJob[];
  }>(sql('placement/place'), [
    placements.map((p) => p.jobUid),
    placements.map((p) => p.node),
    placements.map(() => randomUUID()),
    epoch,
  ]);
  const row = result.rows[0]!;
  if (row.nodes_ready !== row.nodes_wanted) throw new NodeGoneError(); // and its notifications with it
  claimed?.splice(0, claimed.length, ...row.claimed);
  return row.placed;
}

/** Why these pending jobs wait (a pod's Unschedulable, and the queues' reasons). */
export async function markWaiting(
  tx: Tx,
  jobs: ReadonlyArray<{ jobUid: string; reason: string; message: string }>,
): Promise<void> {
  if (jobs.length === 0) return;
  await tx.query(sql('placement/mark_waiting'), [
    jobs.map((j) => j.jobUid),
    jobs.map((j) => j.reason),
    jobs.map((j) => j.message),
  ]);
}
