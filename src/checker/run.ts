// One run of one assignment as the checker pieces it together: its start line from the node's run
// log, and its end from the stop line, else the history (./check.ts builds them, ./cron.ts reads them).
import type { Instant } from './instant.js';

export type RunEnd =
  | { by: 'stop'; at: Instant; reason: string | undefined }
  | { by: 'history'; at: Instant; state: string; historyId: number }
  | { by: 'none'; at: null };

export interface Run {
  job: string;
  jobUid: string;
  assignment: string;
  node: string;
  pid: number;
  epoch: number;
  attempt: number;
  start: Instant;
  end: RunEnd;
  /** From the start line, when it says: what the run held, and what its node has. */
  cpuMillis?: number;
  memoryBytes?: number;
  nodeCpuMillis?: number;
  nodeMemoryBytes?: number;
  nodeMaxJobs?: number;
}
