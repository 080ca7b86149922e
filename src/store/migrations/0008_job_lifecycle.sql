-- 0008_job_lifecycle: workflows, retries with backoff, dead letters, start times, matching by
-- pool and image, and idempotent creates.

-- A workflow owns its jobs (jobs.workflow_uid); its phase is job-reconcile's to close.
CREATE TABLE workflows (
  uid              uuid PRIMARY KEY,
  namespace        text NOT NULL,
  name             text NOT NULL,
  labels           jsonb NOT NULL DEFAULT '{}',
  spec             jsonb NOT NULL,
  phase            text NOT NULL DEFAULT 'Running' CHECK (phase IN ('Running', 'Succeeded', 'Failed', 'Cancelled')),
  reason           text,
  message          text,
  -- Set by a user's cancel: the workflow closes Cancelled, whatever else ended its jobs.
  cancelled        boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  resource_version bigint NOT NULL DEFAULT 1,
  UNIQUE (namespace, name)
);
CREATE INDEX workflows_running ON workflows (created_at) WHERE phase = 'Running';

ALTER TABLE jobs
  ADD COLUMN workflow_uid    uuid REFERENCES workflows (uid),
  -- Names of jobs of the same namespace that must succeed first, and whether this Pending job
  -- still waits for them (placement never reads a waiting job; job-reconcile releases or skips it).
  ADD COLUMN needs           text[] NOT NULL DEFAULT '{}',
  ADD COLUMN waiting         boolean NOT NULL DEFAULT false,
  -- Its duration plus the longest chain of its workflow's jobs waiting on it (critical path first).
  ADD COLUMN path_ms         bigint,
  ADD COLUMN image           text,
  ADD COLUMN pool            text,
  ADD COLUMN retry_policy    text NOT NULL DEFAULT 'OnFailure' CHECK (retry_policy IN ('OnFailure', 'Never')),
  ADD COLUMN backoff_base_ms bigint NOT NULL DEFAULT 1000 CHECK (backoff_base_ms > 0),
  ADD COLUMN backoff_cap_ms  bigint NOT NULL DEFAULT 300000 CHECK (backoff_cap_ms > 0),
  -- The start time it was accepted with (spec.startAt/startAfter, or its acceptance): a replay
  -- or a workflow's retry never makes it due before this.
  ADD COLUMN not_before      timestamptz NOT NULL DEFAULT now(),
  ADD CONSTRAINT waiting_only_pending CHECK (NOT waiting OR phase = 'Pending');
CREATE INDEX jobs_waiting ON jobs (namespace) WHERE waiting;
CREATE INDEX jobs_of_workflow ON jobs (workflow_uid) WHERE workflow_uid IS NOT NULL;
CREATE INDEX jobs_dead ON jobs (namespace, finished_at) WHERE phase = 'Dead';

-- What a node said when a run ended (e.g. "exit code 3"): a retry or a dead letter quotes it.
ALTER TABLE assignments ADD COLUMN message text;

-- Nodes advertise the images they hold; a job with spec.image runs only where it is.
ALTER TABLE nodes ADD COLUMN images text[] NOT NULL DEFAULT '{}';

-- Who did it, for changes a user asked for (a replay, a cancel): set per transaction as
-- fencer.actor, NULL for the control plane's own decisions.
ALTER TABLE history ADD COLUMN actor text;

-- A job's needs, on the row of its creation: the checker proves from the history alone that no
-- job was placed before every need had succeeded.
ALTER TABLE history ADD COLUMN needs text[];

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
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor, needs)
    VALUES ('job', NEW.uid, NEW.namespace || '/' || NEW.name, NEW.assignment_id, NEW.node,
            fencer_decision_epoch(), CASE WHEN TG_OP = 'UPDATE' THEN OLD.phase END, NEW.phase, NEW.reason,
            current_setting('fencer.replica', true), NEW.due_at, nullif(current_setting('fencer.actor', true), ''),
            CASE WHEN TG_OP = 'INSERT' AND cardinality(NEW.needs) > 0 THEN NEW.needs END);
  END IF;
  RETURN NEW;
END $$;

-- A create without a name of its own (metadata.generateName) retried with the same
-- Idempotency-Key gets the object the first request made, never a second one.
CREATE TABLE idempotency_keys (
  namespace  text NOT NULL,
  kind       text NOT NULL,
  key        text NOT NULL,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, kind, key)
);
