// What the dashboard is pushed over Server-Sent Events (/api/v1/changes): the replica's change feed
// (src/api/change-feed.ts) sends it, the dashboard (src/ui/) reads it.

export interface Change {
  /** Kinds with an object added, changed or deleted: Job, Workflow, CronJob, Queue, ResourceQuota, Node. */
  kinds: string[];
  /** Jobs that changed (namespace/name), when few enough to name; otherwise only the kind. */
  jobs?: string[];
  /** The status moved: a new leader or epoch, no live leader any more, a replica came or went. */
  status: boolean;
  /** A cluster event was recorded. */
  events: boolean;
  /** What changed before this point is unknown (the feed started or read again): refetch everything. */
  all?: boolean;
}
