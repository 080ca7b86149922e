-- 0009_queues: queues with weights and hard limits, priorities in lanes, namespace quotas.

-- A namespace's queues (kind Queue). `default` exists in every namespace that has jobs: the
-- submit path creates it. The limits are hard: the trigger below refuses any placement past them.
CREATE TABLE queues (
  uid                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  namespace          text NOT NULL,
  name               text NOT NULL,
  labels             jsonb NOT NULL DEFAULT '{}',
  spec               jsonb NOT NULL DEFAULT '{}',
  weight             double precision NOT NULL DEFAULT 1 CHECK (weight > 0),
  concurrency_limit  int CHECK (concurrency_limit >= 0),
  cpu_limit_millis   bigint CHECK (cpu_limit_millis >= 0),
  memory_limit_bytes bigint CHECK (memory_limit_bytes >= 0),
  strict_lanes       boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  resource_version   bigint NOT NULL DEFAULT 1,
  UNIQUE (namespace, name)
);

-- A namespace's quota (kind ResourceQuota, at most one per namespace). tokens/tokens_at are the
-- placement rate's token bucket: placement is their one writer, in its fenced transaction.
CREATE TABLE resource_quotas (
  uid                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  namespace          text NOT NULL UNIQUE,
  name               text NOT NULL,
  labels             jsonb NOT NULL DEFAULT '{}',
  spec               jsonb NOT NULL DEFAULT '{}',
  pending_jobs       int CHECK (pending_jobs >= 0),
  cpu_limit_millis   bigint CHECK (cpu_limit_millis >= 0),
  memory_limit_bytes bigint CHECK (memory_limit_bytes >= 0),
  rate_per_second    double precision CHECK (rate_per_second > 0),
  rate_burst         int CHECK (rate_burst >= 1),
  tokens             double precision,
  tokens_at          timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  resource_version   bigint NOT NULL DEFAULT 1
);

-- A job's queue (in its namespace) and priority; its lane follows from the priority:
-- 0 high (>= 1000), 1 normal, 2 low (<= -1000).
ALTER TABLE jobs
  ADD COLUMN queue    text NOT NULL DEFAULT 'default',
  ADD COLUMN priority int NOT NULL DEFAULT 0,
  ADD COLUMN lane     smallint GENERATED ALWAYS AS (CASE WHEN priority >= 1000 THEN 0 WHEN priority <= -1000 THEN 2 ELSE 1 END) STORED;
CREATE INDEX jobs_pending_by_queue ON jobs (namespace, queue, lane, created_at, uid) WHERE phase = 'Pending' AND NOT waiting;
CREATE INDEX jobs_pending_by_namespace ON jobs (namespace) WHERE phase = 'Pending';

INSERT INTO queues (namespace, name) SELECT DISTINCT namespace, 'default' FROM jobs ON CONFLICT DO NOTHING;

-- What an active assignment counts against: copied from its job when placed.
ALTER TABLE assignments ADD COLUMN namespace text, ADD COLUMN queue text;
UPDATE assignments a SET namespace = j.namespace, queue = j.queue FROM jobs j WHERE j.uid = a.job_uid;
CREATE INDEX assignments_active_by_queue ON assignments (namespace, queue) WHERE state IN ('Assigned', 'Running');

-- The queue on the row of a job's creation: the checker proves queue limits from the history
-- and the nodes' logs.
ALTER TABLE history ADD COLUMN queue text;

CREATE OR REPLACE FUNCTION fencer_job_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor)
    VALUES ('job', OLD.uid, OLD.namespace || '/' || OLD.name, OLD.assignment_id, OLD.node,
            fencer_decision_epoch(), OLD.phase, 'Deleted', 'Deleted', current_setting('fencer.replica', true), OLD.due_at,
            nullif(current_setting('fencer.actor', true), ''));
    RETURN OLD;
  END IF;
  IF TG_OP = 'INSERT' OR NEW.phase IS DISTINCT FROM OLD.phase THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor, needs, queue)
    VALUES ('job', NEW.uid, NEW.namespace || '/' || NEW.name, NEW.assignment_id, NEW.node,
            fencer_decision_epoch(), CASE WHEN TG_OP = 'UPDATE' THEN OLD.phase END, NEW.phase, NEW.reason,
            current_setting('fencer.replica', true), NEW.due_at, nullif(current_setting('fencer.actor', true), ''),
            CASE WHEN TG_OP = 'INSERT' AND cardinality(NEW.needs) > 0 THEN NEW.needs END,
            CASE WHEN TG_OP = 'INSERT' THEN NEW.namespace || '/' || NEW.queue END);
  END IF;
  RETURN NEW;
END $$;

-- The hard limits, in the statement that makes assignments active: each queue (and namespace
-- quota) touched is locked, then its active assignments are counted with the new ones. Whoever
-- places next waits for the lock and counts after this commits, so two placements can never
-- both fit under a limit that only one fits under. fencer.skip_limit_check is a test-only
-- switch (guard queue-limit-commit, src/guards.ts).
CREATE FUNCTION fencer_queue_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  over record;
BEGIN
  IF current_setting('fencer.skip_limit_check', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM queues q
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (q.concurrency_limit IS NOT NULL OR q.cpu_limit_millis IS NOT NULL OR q.memory_limit_bytes IS NOT NULL)
  ORDER BY q.namespace, q.name
  FOR UPDATE;
  SELECT q.namespace, q.name, u.n, u.cpu, u.memory, q.concurrency_limit, q.cpu_limit_millis, q.memory_limit_bytes INTO over
  FROM queues q
  CROSS JOIN LATERAL (
    SELECT count(*) AS n, coalesce(sum(a.cpu_millis), 0) AS cpu, coalesce(sum(a.memory_bytes), 0) AS memory
    FROM assignments a
    WHERE a.namespace = q.namespace AND a.queue = q.name AND a.state IN ('Assigned', 'Running')
  ) u
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (u.n > q.concurrency_limit OR u.cpu > q.cpu_limit_millis OR u.memory > q.memory_limit_bytes)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'queue %/% would run % jobs holding % mCPU and % bytes, over its limits (% jobs, % mCPU, % bytes)',
      over.namespace, over.name, over.n, over.cpu, over.memory, over.concurrency_limit, over.cpu_limit_millis, over.memory_limit_bytes
      USING ERRCODE = 'check_violation', CONSTRAINT = 'queue_within_limits';
  END IF;

  PERFORM 1 FROM resource_quotas r
  WHERE r.namespace IN (SELECT namespace FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (r.cpu_limit_millis IS NOT NULL OR r.memory_limit_bytes IS NOT NULL)
  ORDER BY r.namespace
  FOR UPDATE;
  SELECT r.namespace, u.cpu, u.memory, r.cpu_limit_millis, r.memory_limit_bytes INTO over
  FROM resource_quotas r
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(a.cpu_millis), 0) AS cpu, coalesce(sum(a.memory_bytes), 0) AS memory
    FROM assignments a
    WHERE a.namespace = r.namespace AND a.state IN ('Assigned', 'Running')
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

CREATE TRIGGER assignments_within_limits AFTER INSERT ON assignments
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION fencer_queue_limits();
CREATE INDEX assignments_active_by_namespace ON assignments (namespace) WHERE state IN ('Assigned', 'Running');
