// The NOTIFY channels between the store (sender: a trigger or a .sql file, at commit) and every
// replica's LISTEN connection (src/store/listener.ts, wired to controllers in src/replica.ts).
// The SQL keeps the literal; test/unit/channels.test.ts checks that every channel the SQL names
// is one of these and each of these is sent somewhere.
export const CHANNELS = {
  /**
   * Jobs whose place among the pending ones may have changed (became or stopped being Pending,
   * or, while Pending, their waiting flag, due time, queue, lane or critical path changed).
   * Payload: their uids, comma-separated. Sent by the jobs' per-row trigger (migration 0026), one uid a notification.
   * Wakes the leader's pending set, then placement.
   */
  pending: 'fencer_pending',
  /**
   * Room for placement that no job's pending state shows: a node claimed an assignment (one
   * unclaimed fewer) or stopped a cancelled run that held its queue's share. No payload. Sent by
   * placement/notify_room.sql. Wakes placement.
   */
  room: 'fencer_room',
  /**
   * A node's active assignments changed. Payload: the node's name. Sent by nodes/notify.sql.
   * Wakes that node's watch streams on every replica, placement, job-reconcile and workflow.
   */
  assignments: 'fencer_assignments',
  /**
   * Who may do what changed: a token revoked, a Role, ClusterRole or binding written or deleted.
   * Payload: the table's name (revoked_tokens, rbac_roles, rbac_bindings). Sent by the statement
   * triggers of migration 0025. Nothing acts on it yet (docs/security.md, "Wiring still to do"):
   * it is for a replica to read its cached policy and revocations again.
   */
  auth: 'fencer_auth',
} as const;

export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** The uids a fencer_pending payload names. */
export function pendingUids(payload: string): string[] {
  return payload === '' ? [] : payload.split(',');
}
