// Row shapes as they come out of PostgreSQL (bigints parsed as numbers, see db.ts).
import type {
  CatchUp,
  ConcurrencyPolicy,
  CronJobSpec,
  JobPhase,
  JobSpec,
  WorkflowPhase,
  WorkflowSpec,
} from '../domain/resources.js';

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
  /** Runs its nodes lost (migration 0020). */
  disruptions: number;
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
  /** The id of the object's latest watch event (migration 0013): its resourceVersion. */
  watch_rv: number | null;
  annotations: Record<string, string>;
  workflow_uid: string | null;
  cronjob_uid: string | null;
  needs: string[];
  waiting: boolean;
  path_ms: number | null;
  image: string | null;
  pool: string | null;
  retry_policy: 'OnFailure' | 'Never';
  backoff_base_ms: number;
  backoff_cap_ms: number;
}

export interface WorkflowRow {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: WorkflowSpec;
  phase: WorkflowPhase;
  reason: string | null;
  message: string | null;
  cancelled: boolean;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  resource_version: number;
  /** The id of the object's latest watch event (migration 0013): its resourceVersion. */
  watch_rv: number | null;
  annotations: Record<string, string>;
  cronjob_uid: string | null;
}

export interface NodeRow {
  name: string;
  cpu_millis: number;
  memory_bytes: number;
  labels: Record<string, string>;
  images: string[];
  state: 'Ready' | 'Dead';
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  max_jobs: number;
  allocated_jobs: number;
  unclaimed_jobs: number;
  registered_at: Date;
  last_heartbeat_at: Date;
  watch_session: string | null;
  watch_replica: string | null;
  disconnected_at: Date | null;
  dead_at: Date | null;
  dead_reason: string | null;
  /** The registered process (migrations 0003, 0007); bigint comes back as a string. */
  incarnation?: string | null;
  generation?: string | number | null;
  jobs?: number;
  watch_rv?: number | null;
}

export interface EndedAssignment {
  id: string;
  job_uid: string;
  node: string;
  cpu_millis: number;
  memory_bytes: number;
  /** The state it ended in */
  state: 'Succeeded' | 'Failed' | 'Lost' | 'Unconfirmed' | 'Cancelled';
  /** When its node claimed it (assignments/end.sql); null: it never ran */
  started_at?: Date | null;
}

export interface CronJobRow {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: CronJobSpec;
  schedule: string;
  time_zone: string;
  suspend: boolean;
  concurrency_policy: ConcurrencyPolicy;
  catch_up: CatchUp;
  starting_deadline_seconds: number | null;
  successful_history_limit: number;
  failed_history_limit: number;
  next_fire_at: Date | null;
  version: number;
  last_handled_at: Date | null;
  last_schedule_time: Date | null;
  last_successful_time: Date | null;
  blocked_reason: string | null;
  blocked_message: string | null;
  created_at: Date;
  updated_at: Date;
  resource_version: number;
  /** The id of the object's latest watch event (migration 0013): its resourceVersion. */
  watch_rv: number | null;
  annotations: Record<string, string>;
}

/** cron/list: a CronJob with its unfinished Jobs. */
export interface CronJobListRow extends CronJobRow {
  active: Array<{ name: string; uid: string }>;
  newest_success: Date | null;
}
