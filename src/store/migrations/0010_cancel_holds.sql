-- 0010_cancel_holds: a cancelled run holds its queue's (and namespace's) share until its node
-- must have stopped it. A cancel ends the assignment at once, but the node hears of it through
-- its watch stream, which may be late; freed at once, the slot could go to another job of the
-- queue on another node while the cancelled run still runs. The hold lasts to the run's start
-- plus its duration plus the slack after which an overdue run is given up (the node fences
-- itself before that). Also: every queue touched by a placement is locked, with a limit or not,
-- and a namespace's quota is serialized by an advisory lock, so a limit or quota added while a
-- round commits is either seen by the round or waits for it.

ALTER TABLE assignments ADD COLUMN holds_until timestamptz;
CREATE INDEX assignments_holding ON assignments (namespace, queue) WHERE holds_until IS NOT NULL;

-- What counts against a queue's limits and a namespace's quota: active assignments, and
-- cancelled runs whose node may still be running them. The one definition (placement's reads,
-- the trigger, the status of queues and namespaces).
CREATE FUNCTION fencer_holds_share(state text, holds_until timestamptz) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT state IN ('Assigned', 'Running') OR holds_until > now()
$$;

-- The advisory lock key of a namespace's quota (taken by placements and by quota writes).
CREATE FUNCTION fencer_quota_lock_key(namespace text) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended('fencer.quota/' || namespace, 0)
$$;

CREATE OR REPLACE FUNCTION fencer_queue_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  over record;
BEGIN
  IF current_setting('fencer.skip_limit_check', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM queues q
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
  ORDER BY q.namespace, q.name
  FOR UPDATE;
  SELECT q.namespace, q.name, u.n, u.cpu, u.memory, q.concurrency_limit, q.cpu_limit_millis, q.memory_limit_bytes INTO over
  FROM queues q
  CROSS JOIN LATERAL (
    SELECT count(*) AS n, coalesce(sum(a.cpu_millis), 0) AS cpu, coalesce(sum(a.memory_bytes), 0) AS memory
    FROM assignments a
    WHERE a.namespace = q.namespace AND a.queue = q.name AND fencer_holds_share(a.state, a.holds_until)
  ) u
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (u.n > q.concurrency_limit OR u.cpu > q.cpu_limit_millis OR u.memory > q.memory_limit_bytes)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'queue %/% would run % jobs holding % mCPU and % bytes, over its limits (% jobs, % mCPU, % bytes)',
      over.namespace, over.name, over.n, over.cpu, over.memory, over.concurrency_limit, over.cpu_limit_millis, over.memory_limit_bytes
      USING ERRCODE = 'check_violation', CONSTRAINT = 'queue_within_limits';
  END IF;

  PERFORM pg_advisory_xact_lock(fencer_quota_lock_key(ns))
  FROM (SELECT DISTINCT namespace AS ns FROM inserted WHERE state IN ('Assigned', 'Running') ORDER BY 1) n;
  SELECT r.namespace, u.cpu, u.memory, r.cpu_limit_millis, r.memory_limit_bytes INTO over
  FROM resource_quotas r
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(a.cpu_millis), 0) AS cpu, coalesce(sum(a.memory_bytes), 0) AS memory
    FROM assignments a
    WHERE a.namespace = r.namespace AND fencer_holds_share(a.state, a.holds_until)
  ) u
  WHERE r.namespace IN (SELECT namespace FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (u.cpu > r.cpu_limit_millis OR u.memory > r.memory_limit_bytes)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'namespace % would hold % mCPU and % bytes, over its quota (% mCPU, % bytes)',
      over.namespace, over.cpu, over.memory, over.cpu_limit_millis, over.memory_limit_bytes
      USING ERRCODE = 'check_violation', CONSTRAINT = 'quota_within_limits';
  END IF;
  RETURN NULL;
END
$$;
