-- agent-protocol/register: a node (re)joins (any replica); its heartbeat row is written first
-- (agent-protocol/register_heartbeat). It is Ready; what it holds is the assignments' triggers' to count (migration
-- 0006), never this statement's. A new incarnation is not yet connected (until it opens its watch stream). The same
-- incarnation again (a retried request that arrived late, or the node registering after it was
-- declared dead) keeps the watch stream it has open: resetting it would leave a node that
-- heartbeats, holds an open stream and is never placed on. A closed one is forgotten, so the
-- node is simply not connected until it opens another.
-- A process older than the registered one (generation lower) changes nothing: no row back.
-- $1 name, $2 cpu millis, $3 memory bytes, $4 labels, $5 incarnation, $6 generation (or NULL),
-- $7 text[] images the node holds, $8 the most runs it holds at once (max_jobs).
INSERT INTO nodes (name, cpu_millis, memory_bytes, labels, incarnation, generation, images, max_jobs)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (name) DO UPDATE
SET cpu_millis = EXCLUDED.cpu_millis, memory_bytes = EXCLUDED.memory_bytes, labels = EXCLUDED.labels, images = EXCLUDED.images,
    max_jobs = EXCLUDED.max_jobs,
    incarnation = EXCLUDED.incarnation, state = 'Ready', registered_at = now(),
    dead_at = NULL, dead_reason = NULL, disconnected_at = NULL,
    watch_session = CASE WHEN nodes.incarnation = EXCLUDED.incarnation AND nodes.disconnected_at IS NULL THEN nodes.watch_session END,
    watch_replica = CASE WHEN nodes.incarnation = EXCLUDED.incarnation AND nodes.disconnected_at IS NULL THEN nodes.watch_replica END,
    watch_attempt = CASE WHEN nodes.incarnation IS DISTINCT FROM EXCLUDED.incarnation THEN 0 ELSE nodes.watch_attempt END,
    generation = coalesce(EXCLUDED.generation, nodes.generation)
WHERE EXCLUDED.generation IS NULL OR nodes.generation IS NULL OR nodes.generation <= EXCLUDED.generation
RETURNING *, now() AS last_heartbeat_at
