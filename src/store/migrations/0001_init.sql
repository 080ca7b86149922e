-- 0001_init: the lease, nodes, jobs, assignments, replicas and the append-only history.
-- Applied once, in a transaction, under an advisory lock (src/store/migrate.ts).

-- The one lease row. holder/expires_at say who may lead and until when (by the database's
-- clock); epoch goes up by one at every acquisition and is what fences writes.
CREATE TABLE lease (
  id          int PRIMARY KEY CHECK (id = 1),
  holder      text,
  epoch       bigint NOT NULL DEFAULT 0,
  acquired_at timestamptz,
  expires_at  timestamptz
);
INSERT INTO lease (id) VALUES (1);

-- Every control-plane replica says it is alive here, so status can list them.
CREATE TABLE replicas (
  name       text PRIMARY KEY,
  url        text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
  name                   text PRIMARY KEY,
  cpu_millis             bigint NOT NULL CHECK (cpu_millis > 0),
  memory_bytes           bigint NOT NULL CHECK (memory_bytes > 0),
  labels                 jsonb NOT NULL DEFAULT '{}',
  state                  text NOT NULL DEFAULT 'Ready' CHECK (state IN ('Ready', 'Dead')),
  allocated_cpu_millis   bigint NOT NULL DEFAULT 0,
  allocated_memory_bytes bigint NOT NULL DEFAULT 0,
  registered_at          timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at      timestamptz NOT NULL DEFAULT now(),
  -- The node's current watch stream: which replica holds it, and when it closed (NULL while open).
  watch_session          uuid,
  watch_replica          text,
  disconnected_at        timestamptz,
  dead_at                timestamptz,
  dead_reason            text,
  -- The database itself refuses any placement that would overcommit a node.
  CONSTRAINT allocation_within_capacity CHECK (
    allocated_cpu_millis BETWEEN 0 AND cpu_millis
    AND allocated_memory_bytes BETWEEN 0 AND memory_bytes
  )
);

CREATE TABLE jobs (
  uid             uuid PRIMARY KEY,
  namespace       text NOT NULL,
  name            text NOT NULL,
  labels          jsonb NOT NULL DEFAULT '{}',
  spec            jsonb NOT NULL,
  cpu_millis      bigint NOT NULL CHECK (cpu_millis > 0),
  memory_bytes    bigint NOT NULL CHECK (memory_bytes > 0),
  duration_ms     bigint NOT NULL CHECK (duration_ms > 0),
  node_selector   jsonb NOT NULL DEFAULT '{}',
  max_attempts    int NOT NULL CHECK (max_attempts >= 1),
  phase           text NOT NULL DEFAULT 'Pending' CHECK (phase IN
                    ('Pending', 'Assigned', 'Running', 'Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')),
  attempt         int NOT NULL DEFAULT 1,
  due_at          timestamptz NOT NULL DEFAULT now(),
  -- The current (or last) assignment, copied here so reads need no join.
  assignment_id   uuid,
  node            text,
  epoch           bigint,
  reason          text,
  message         text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz,
  resource_version bigint NOT NULL DEFAULT 1,
  UNIQUE (namespace, name)
);
CREATE INDEX jobs_pending_due ON jobs (due_at, created_at) WHERE phase = 'Pending';

CREATE TABLE assignments (
  id            uuid PRIMARY KEY,
  job_uid       uuid NOT NULL,
  node          text NOT NULL REFERENCES nodes (name),
  epoch         bigint NOT NULL,
  attempt       int NOT NULL,
  state         text NOT NULL CHECK (state IN
                  ('Assigned', 'Running', 'Succeeded', 'Failed', 'Lost', 'Unconfirmed', 'Cancelled')),
  cpu_millis    bigint NOT NULL,
  memory_bytes  bigint NOT NULL,
  duration_ms   bigint NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  confirm_by    timestamptz NOT NULL,
  started_at    timestamptz,
  finished_at   timestamptz
);
-- Promise 1: at most one active assignment per job, whoever tries to write a second.
CREATE UNIQUE INDEX one_active_assignment_per_job ON assignments (job_uid)
  WHERE state IN ('Assigned', 'Running');
CREATE INDEX assignments_active_by_node ON assignments (node) WHERE state IN ('Assigned', 'Running');

-- The append-only history: one row per state change of a job or an assignment, written by
-- triggers in the same transaction as the change. README documents these columns.
CREATE TABLE history (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  entity      text NOT NULL CHECK (entity IN ('job', 'assignment')),
  job_uid     uuid NOT NULL,
  job         text NOT NULL,
  assignment  uuid,
  node        text,
  epoch       bigint,
  from_state  text,
  to_state    text NOT NULL,
  reason      text,
  replica     text
);
CREATE INDEX history_job ON history (job_uid, id);

CREATE FUNCTION fencer_decision_epoch() RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('fencer.epoch', true), '')::bigint
$$;

CREATE FUNCTION fencer_job_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    VALUES ('job', OLD.uid, OLD.namespace || '/' || OLD.name, OLD.assignment_id, OLD.node,
            fencer_decision_epoch(), OLD.phase, 'Deleted', 'Deleted', current_setting('fencer.replica', true));
    RETURN OLD;
  END IF;
  IF TG_OP = 'INSERT' OR NEW.phase IS DISTINCT FROM OLD.phase THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    VALUES ('job', NEW.uid, NEW.namespace || '/' || NEW.name, NEW.assignment_id, NEW.node,
            fencer_decision_epoch(), CASE WHEN TG_OP = 'UPDATE' THEN OLD.phase END, NEW.phase, NEW.reason,
            current_setting('fencer.replica', true));
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_history AFTER INSERT OR UPDATE OF phase OR DELETE ON jobs
  FOR EACH ROW EXECUTE FUNCTION fencer_job_history();

CREATE FUNCTION fencer_assignment_history() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  job_name text;
BEGIN
  IF TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state THEN
    SELECT namespace || '/' || name INTO job_name FROM jobs WHERE uid = NEW.job_uid;
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    VALUES ('assignment', NEW.job_uid, coalesce(job_name, '?'), NEW.id, NEW.node,
            coalesce(fencer_decision_epoch(), CASE WHEN TG_OP = 'INSERT' THEN NEW.epoch END),
            CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END, NEW.state, NULL,
            current_setting('fencer.replica', true));
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER assignments_history AFTER INSERT OR UPDATE OF state ON assignments
  FOR EACH ROW EXECUTE FUNCTION fencer_assignment_history();

-- Append-only means append-only: the database refuses to change or remove a history row.
CREATE FUNCTION fencer_history_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'history is append-only';
END $$;

CREATE TRIGGER history_append_only BEFORE UPDATE OR DELETE ON history
  FOR EACH ROW EXECUTE FUNCTION fencer_history_is_append_only();
