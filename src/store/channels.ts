// The NOTIFY channels between the store (sender: a trigger or a .sql file, at commit) and every
// replica's LISTEN connection (src/store/listener.ts, wired to controllers in src/replica.ts).
// The SQL keeps the literal; test/unit/channels.test.ts checks that every channel the SQL names
// is one of these and each of these is sent somewhere.
export const CHANNELS = {
  /**
   * Jobs whose place among the pending ones changed: `uid` for a job now pending (it became
   * Pending, or while Pending its waiting flag, due time, queue, lane or critical path changed),
   * `-uid` for one that left the pending ones. Payload: such names, comma-separated. Sent by the
   * jobs' per-row trigger (migration 0027), one name a notification. A job now pending wakes the
   * leader's pending set, then placement; one that left only leaves the set.
   */
  pending: 'fencer_pending',
  /**
   * Room for placement that no job's pending state shows: a node claimed an assignment (one
   * unclaimed fewer) or stopped a cancelled run that held its queue's share. No payload. Sent by
   * agent-protocol/start.sql (a claim) and placement/notify_room.sql. Wakes placement.
   */
  room: 'fencer_room',
  /**
   * A node's active assignments changed. Payload: the node's name. Sent by nodes/notify.sql (and
   * placement/place.sql for the nodes a round chose).
   * Wakes that node's watch streams on every replica, and placement while jobs wait for room.
   */
  assignments: 'fencer_assignments',
  /**
   * The leader has outcomes to decide on: a run ended other than by success (the retry rule), or
   * a job of a workflow ended (the workflow may move on). No payload. Sent by
   * jobs/notify_outcomes.sql and agent-protocol/end_reported.sql. Wakes job-reconcile and workflow. A plain success sends none: it is
   * most of the ends in a burst, and waking two controllers for each cost a pass apiece.
   */
  outcomes: 'fencer_outcomes',
  /**
   * Who may do what changed: a token revoked, a Role, ClusterRole or binding written or deleted.
   * Payload: the table's name (revoked_tokens, rbac_roles, rbac_bindings). Sent by the statement
   * triggers of migration 0025. Each replica reads its policy and revocations again
   * (AccessControl.reload, src/auth/access-control.ts).
   */
  auth: 'fencer_auth',
} as const;

export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** What a fencer_pending payload says: the jobs now pending and those that left the pending ones. */
export function pendingChanges(payload: string): { pending: string[]; left: string[] } {
  const pending: string[] = [];
  const left: string[] = [];
  if (payload === '') return { pending, left };
  for (const name of payload.split(',')) {
    if (name.startsWith('-')) left.push(name.slice(1));
    else pending.push(name);
  }
  return { pending, left };
}
