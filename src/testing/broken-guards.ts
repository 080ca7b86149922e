// The one seam for broken variants: test-only switches that break one safety guard on purpose,
// so a test can show that the guard is what keeps the system correct (docs/testing.md lists each
// and the test that catches it). Set FENCER_BREAK_GUARDS=name,name in a process's environment.
// Never in production. Each guard is read in one place, where it is kept; no production
// signature carries a switch.

export type BreakableGuard =
  | 'fence' // fenced(tx) stops comparing the lease epoch with ours
  | 'node-epoch-check' // the agent runs assignments from an older epoch
  | 'node-dedupe' // the agent runs an assignment id it has already seen
  | 'self-fence' // the agent keeps running jobs when cut off from every replica
  | 'claim-first' // the agent runs an assignment as soon as a snapshot lists it, claiming it after
  | 'fence-on-heartbeats' // the agent's self-fence counts any answered request, not only heartbeats
  | 'death-heartbeat-lock' // declaring a node dead does not lock its heartbeat row first
  | 'heartbeat-forward' // a heartbeat that began earlier but commits later moves the node's last heartbeat back
  | 'registration-generation' // a registration from an older process of a node is taken like any other
  | 'join-token-node' // a join token bound to one node name registers any name
  | 'node-credential-row' // a node's reports are not checked against its row: a credential of a replaced process still reports
  | 'watch-session-check' // a watch stream superseded by another of its node's keeps being sent the node's assignments
  | 'idle-in-tx-timeout' // leader sessions may stay idle in a transaction forever
  | 'commit-ambiguity' // a transaction whose session ended during COMMIT runs again, though it may have committed
  | 'pool-match' // placement ignores a job's pool (its workflow's spec.pool)
  | 'label-match' // placement ignores a job's nodeSelector
  | 'skip-blocked' // the workflow pass never skips a job whose need failed
  | 'queue-limit-plan' // placement plans past queue limits and namespace quotas
  | 'queue-limit-commit' // the database does not check queue limits and quotas when placing
  | 'cancel-hold' // a cancelled run frees its queue's share at once, before its node can have stopped it
  | 'cron-version' // a cron fire advances the cursor whatever edits came since its read
  | 'cron-cursor' // a cron fire advances the cursor even when it moved since its read
  | 'cron-name' // each cron fire names its Job afresh, so firing an occurrence again makes a second Job
  | 'cron-replace-wait' // Replace starts the new Job in the same fire that cancels the old, before its node stopped it
  | 'pending-set-reread' // the leader's pending set is not read whole again after its LISTEN connection was lost
  | 'pending-left-reread' // a job that left the pending ones while the set was reading it is not read again
  | 'not-reported-is-loss' // job-reconcile ends a live node's run it has no report of past the run's end, and retries it using an attempt
  | 'unclaimed-bound' // placement gives a node all it has room for at once, however much of it the node has not claimed yet
  | 'confirm-at-delivery' // an assignment's confirm deadline starts when a replica reads it for its node, not when it is sent (a slow control plane's delay counts against the node)
  | 'delivery-skip-locked' // recording when assignments were sent waits for rows a claim has locked (a deadlock across nodes)
  | 'dry-run' // writes ignore dryRun=All and make the change they were asked only to check
  | 'authorize-before-handler' // one route (a job's cancel) skips its authorization: the handler runs for anyone with a token
  | 'body-type-check' // writes take any Content-Type: a form's text/plain POST is read as YAML
  | 'origin-check' // requests from any web page's Origin are answered
  | 'rate-limit' // a caller's requests are never limited
  | 'pooled-prepared-statements' // pools through a transaction-mode pooler name their statements too (prepared on one server session, run on another)
  | 'port-socket-error' // a connection on the one port has no error listener before a server owns it: a reset before its first byte crashes the replica
  | 'refused-linger' // plain HTTP refused from another address waits for the client to close: one that never does holds its descriptor
  | 'tls-half-open' // a TLS connection on the one port keeps the port's half-open sockets: a client that hangs up mid-handshake is held until Node's handshake timeout (120 s)
  | 'idempotency-prune-age' // the prune pass deletes a key it chose as expired though its caller took it over meanwhile
  | 'watch-xmin'; // watches and list versions take events of ended transactions past a running one's (xid order)

/** Whether FENCER_BREAK_GUARDS breaks this guard. */
export function isBroken(guard: BreakableGuard, env: NodeJS.ProcessEnv = process.env): boolean {
  return brokenGuards(env).includes(guard);
}

/** Every guard FENCER_BREAK_GUARDS names (a process logs them at start). */
export function brokenGuards(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.FENCER_BREAK_GUARDS;
  if (!raw) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
