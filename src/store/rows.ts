// Row shapes as they come out of PostgreSQL (bigints parsed as numbers, see db.ts).
import type { JobPhase, JobSpec } from '../domain/resources.js';

export interface JobRow {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: JobSpec;
  cpu_millis: number;
  memory_bytes: number;
  duration_ms: number;
  node_selector: Record<string, string>;
  max_attempts: number;
  phase: JobPhase;
  attempt: number;
  due_at: Date;
  assignment_id: string | null;
  node: string | null;
  epoch: number | null;
  reason: string | null;
  message: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  resource_version: number;
}

export interface NodeRow {
  name: string;
  cpu_millis: number;
  memory_bytes: number;
  labels: Record<string, string>;
  state: 'Ready' | 'Dead';
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  registered_at: Date;
  last_heartbeat_at: Date;
  watch_session: string | null;
  watch_replica: string | null;
  disconnected_at: Date | null;
  dead_at: Date | null;
  dead_reason: string | null;
  jobs?: number;
}

export interface EndedAssignment {
  id: string;
  job_uid: string;
  node: string;
  cpu_millis: number;
  memory_bytes: number;
}
