-- agent-protocol/active_on_node: what a node should be running now, for its watch stream. $1 node,
-- $2 the stream's watch session. `ours` is false once another session holds the node's watch (a
-- new process, or the same one reconnected): such a stream gets no assignment and is ended. One
-- row with a null id when the node has none.
-- A job with spec.simulate fails its first failAttempts runs (runs of this job that failed before,
-- replays included, so a replayed dead letter can succeed): fail_exit_code is set for a run that
-- is to fail, fail_after (a duration) when it fails early. undelivered: never sent to the node yet
-- (agent-protocol/delivered starts its confirm deadline).
WITH watch AS (SELECT coalesce((SELECT watch_session = $2::uuid FROM nodes WHERE name = $1), false) AS ours)
SELECT watch.ours, x.* FROM watch LEFT JOIN (
SELECT a.id, a.created_at, a.job_uid, j.namespace || '/' || j.name AS job, a.epoch, a.attempt,
       a.cpu_millis, a.memory_bytes, a.duration_ms, a.state, a.state = 'Assigned' AND a.confirm_by IS NULL AS undelivered,
       CASE WHEN (j.spec->'simulate'->>'failAttempts')::int > 0 -- counted only for such jobs (CASE evaluates in order)
            THEN CASE WHEN (SELECT count(*) FROM assignments p WHERE p.job_uid = a.job_uid AND p.state = 'Failed')
                           < (j.spec->'simulate'->>'failAttempts')::int
                      THEN coalesce((j.spec->'simulate'->>'exitCode')::int, 1) END
       END AS fail_exit_code,
       j.spec->'simulate'->>'failAfter' AS fail_after
FROM assignments a JOIN jobs j ON j.uid = a.job_uid
WHERE a.node = $1 AND a.state IN ('Assigned', 'Running')
) x ON watch.ours OR $3::boolean -- $3 true only for the broken variant watch-session-check
ORDER BY x.created_at, x.id
