-- 0011_share_holders_view: what counts against queue limits and namespace quotas, as a view of
-- two index scans (active assignments; cancelled runs still holding their share) instead of a
-- function whose OR kept every count from using an index: the limits trigger and placement's
-- reads scanned the whole assignments table on every round.

CREATE INDEX assignments_holding_by_namespace ON assignments (namespace) WHERE holds_until IS NOT NULL;

-- The one definition of what holds a share (the limits trigger, placement's reads, statuses).
CREATE VIEW share_holders AS
  SELECT namespace, queue, cpu_millis, memory_bytes
  FROM assignments WHERE state IN ('Assigned', 'Running')
  UNION ALL
  SELECT namespace, queue, cpu_millis, memory_bytes
  FROM assignments WHERE holds_until IS NOT NULL AND holds_until > now() AND state NOT IN ('Assigned', 'Running');

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
    SELECT count(*) AS n, coalesce(sum(h.cpu_millis), 0) AS cpu, coalesce(sum(h.memory_bytes), 0) AS memory
    FROM share_holders h
    WHERE h.namespace = q.namespace AND h.queue = q.name
  ) u
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (q.concurrency_limit IS NOT NULL OR q.cpu_limit_millis IS NOT NULL OR q.memory_limit_bytes IS NOT NULL)
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
    SELECT coalesce(sum(h.cpu_millis), 0) AS cpu, coalesce(sum(h.memory_bytes), 0) AS memory
    FROM share_holders h
    WHERE h.namespace = r.namespace
  ) u
  WHERE r.namespace IN (SELECT namespace FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (r.cpu_limit_millis IS NOT NULL OR r.memory_limit_bytes IS NOT NULL)
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

DROP FUNCTION fencer_holds_share(text, timestamptz);
