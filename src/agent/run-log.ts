// The node's own record of every run it started, stopped or refused: one JSON object per line
// (NDJSON), format in docs/agent-log.md. Together with the control plane's history it is what
// the chaos checker reads to prove "never placed twice" and "runs never overlap".
//
// Lines are written with writeSync before the caller goes on: a start line is in the kernel
// before the job holds anything (the run begins with it, after the claim), and a stop line
// before the control plane hears "finished", so a SIGKILL right after cannot lose either. (The
// page cache survives the death of the process; only a machine crash would need fsync.)

import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AssignmentMessage } from '../agent-protocol/messages.js';

export type StopReason =
  | 'completed' // ran for its full duration
  | 'failed' // ended with a failure (spec.simulate: an exit code, maybe before its full duration)
  | 'self-fence' // cut off from every replica for too long: stopped before it could be given away
  | 'stale' // only the claim-first broken variant (src/testing/broken-guards.ts): its claim, made after the start, was refused
  | 'withdrawn' // absent from a snapshot: cancelled, deleted or given back
  | 'node-dead' // the heartbeat got 410: the node was declared dead and its jobs requeued
  | 'shutdown'; // the agent stopped gracefully

export type RejectReason =
  | 'stale-epoch' // from a leader older than the newest the node has seen
  | 'claim-refused' // its start (the claim) was answered not-active: taken back or never this node's
  | 'claim-late' // its claim was answered after the confirm timeout: given back, not run
  | 'unclaimed'; // dropped before its claim was answered (withdrawn, self-fence, node dead, shutdown)

export interface RunLogLine {
  event: 'start' | 'stop' | 'reject';
  node: string;
  assignment: string;
  job: string;
  jobUid: string;
  epoch: number;
  attempt: number;
  reason?: StopReason | RejectReason;
  /** On `start` lines: what the run holds, and what the node has (for the checker's capacity check). */
  cpuMillis?: number;
  memoryBytes?: number;
  nodeCpuMillis?: number;
  nodeMemoryBytes?: number;
  /** On `start` lines: the most runs the node holds at once (its --max-jobs). */
  nodeMaxJobs?: number;
  wallTime: string;
  wallMs: number;
  /** process.hrtime.bigint() as a decimal string: monotonic, comparable within one process. */
  monoNs: string;
  pid: number;
}

type Subject = Pick<AssignmentMessage, 'id' | 'job' | 'jobUid' | 'epoch' | 'attempt'> &
  Partial<Pick<AssignmentMessage, 'cpuMillis' | 'memoryBytes'>>;

/** What the node has: written on every start line. */
export interface NodeCapacity {
  cpuMillis: number;
  memoryBytes: number;
  maxJobs?: number;
}

export class RunLog {
  private fd: number | null;

  constructor(
    readonly path: string,
    private readonly node: string,
    private readonly capacity?: NodeCapacity,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  start(assignment: Subject): RunLogLine {
    return this.append('start', assignment);
  }

  stop(assignment: Subject, reason: StopReason): RunLogLine {
    return this.append('stop', assignment, reason);
  }

  reject(assignment: Subject, reason: RejectReason): RunLogLine {
    return this.append('reject', assignment, reason);
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  private append(event: RunLogLine['event'], a: Subject, reason?: RunLogLine['reason']): RunLogLine {
    if (this.fd === null) throw new Error(`run log ${this.path} is closed`);
    const now = new Date();
    const line: RunLogLine = {
      event,
      node: this.node,
      assignment: a.id,
      job: a.job,
      jobUid: a.jobUid,
      epoch: a.epoch,
      attempt: a.attempt,
      ...(reason === undefined ? {} : { reason }),
      ...(event === 'start' && a.cpuMillis !== undefined && a.memoryBytes !== undefined
        ? { cpuMillis: a.cpuMillis, memoryBytes: a.memoryBytes }
        : {}),
      ...(event === 'start' && this.capacity
        ? { nodeCpuMillis: this.capacity.cpuMillis, nodeMemoryBytes: this.capacity.memoryBytes }
        : {}),
      ...(event === 'start' && this.capacity?.maxJobs !== undefined ? { nodeMaxJobs: this.capacity.maxJobs } : {}),
      wallTime: now.toISOString(),
      wallMs: now.getTime(),
      monoNs: process.hrtime.bigint().toString(),
      pid: process.pid,
    };
    const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
    // One write per line on an O_APPEND fd; loop in case the kernel takes it in parts.
    for (let off = 0; off < bytes.length;) off += writeSync(this.fd, bytes, off);
    return line;
  }
}

/** Reads a run log back, skipping a torn last line (a SIGKILL in the middle of a write). */
export function readRunLog(path: string): RunLogLine[] {
  const lines: RunLogLine[] = [];
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    if (raw.trim() === '') continue;
    try {
      lines.push(JSON.parse(raw) as RunLogLine);
    } catch {
      // only the last line can be torn; anything else is skipped all the same
    }
  }
  return lines;
}
