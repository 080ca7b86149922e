-- 0023_statement_triggers: the watch events and the history rows of a statement are written by
-- one INSERT … SELECT over its transition tables, not by one plpgsql INSERT per changed row. A
-- placement round, a 1,000-job submission or a node's report changes hundreds of rows in one
-- statement; per row, these triggers were about half of PostgreSQL's time per job (12 trigger
-- INSERTs and 3 name lookups per job: bench/results/throughput-2026-12-02-profile.md). The rows
-- written are the same as before, in the same order (a statement's rows in the order it changed
-- them, each watch event's id its object's watch_rv).
--
-- An object's watch_rv must be in its row when the statement returns it, so a BEFORE ROW trigger
-- still draws it from the events' sequence; that is an expression, not a statement. Transition
-- tables need one trigger per event and no column list, so the history triggers now look at every
-- UPDATE and keep the rows whose phase or state changed.

-- Every table first, in one go, in the order a report locks them (as 0021 does), so a replica
-- still on the old code cannot deadlock with this.
LOCK TABLE assignments, nodes, jobs, workflows, cronjobs, queues, resource_quotas IN ACCESS EXCLUSIVE MODE;

-- Watch events (0013, 0022), on every kind a client can watch.
CREATE FUNCTION fencer_watch_rv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.watch_rv := nextval('watch_events_id_seq');
  RETURN NEW;
END $$;

-- TG_ARGV: the kind, then 'namespaced' or 'cluster'. plpgsql plans each statement when it first
-- runs, per table: the namespace column is read only on tables that have it.
CREATE FUNCTION fencer_watch_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF TG_ARGV[1] = 'namespaced' THEN
      INSERT INTO watch_events (kind, namespace, name, type, object)
      SELECT TG_ARGV[0], o.namespace, o.name, 'DELETED',
             jsonb_build_object('uid', to_jsonb(o) ->> 'uid', 'labels', to_jsonb(o) -> 'labels')
      FROM old_rows o;
    ELSE
      INSERT INTO watch_events (kind, namespace, name, type, object)
      SELECT TG_ARGV[0], NULL, o.name, 'DELETED',
             jsonb_build_object('uid', to_jsonb(o) ->> 'uid', 'labels', to_jsonb(o) -> 'labels')
      FROM old_rows o;
    END IF;
  ELSIF TG_ARGV[1] = 'namespaced' THEN
    INSERT INTO watch_events (id, kind, namespace, name, type)
    SELECT n.watch_rv, TG_ARGV[0], n.namespace, n.name, CASE TG_OP WHEN 'INSERT' THEN 'ADDED' ELSE 'MODIFIED' END
    FROM new_rows n ORDER BY n.watch_rv;
  ELSE
    INSERT INTO watch_events (id, kind, namespace, name, type)
    SELECT n.watch_rv, TG_ARGV[0], NULL, n.name, CASE TG_OP WHEN 'INSERT' THEN 'ADDED' ELSE 'MODIFIED' END
    FROM new_rows n ORDER BY n.watch_rv;
  END IF;
  RETURN NULL;
END $$;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('jobs', 'Job', 'namespaced'), ('workflows', 'Workflow', 'namespaced'),
                                 ('cronjobs', 'CronJob', 'namespaced'), ('queues', 'Queue', 'namespaced'),
                                 ('resource_quotas', 'ResourceQuota', 'namespaced'), ('nodes', 'Node', 'cluster'))
                  AS v(tab, kind, scope) LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', t.tab || '_watch', t.tab);
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv()',
                   t.tab || '_watch_rv', t.tab);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION fencer_watch_events(%L, %L)', t.tab || '_watch_added', t.tab, t.kind, t.scope);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION fencer_watch_events(%L, %L)', t.tab || '_watch_modified', t.tab, t.kind, t.scope);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION fencer_watch_events(%L, %L)', t.tab || '_watch_deleted', t.tab, t.kind, t.scope);
  END LOOP;
END $$;
DROP FUNCTION fencer_watch_event();

-- A job's history (0001, last changed in 0009): the same columns, one statement.
CREATE FUNCTION fencer_job_history_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor, needs, queue)
    SELECT 'job', n.uid, n.namespace || '/' || n.name, n.assignment_id, n.node, fencer_decision_epoch(), NULL, n.phase,
           n.reason, current_setting('fencer.replica', true), n.due_at, nullif(current_setting('fencer.actor', true), ''),
           CASE WHEN cardinality(n.needs) > 0 THEN n.needs END, n.namespace || '/' || n.queue
    FROM new_rows n ORDER BY n.watch_rv;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor)
    SELECT 'job', n.uid, n.namespace || '/' || n.name, n.assignment_id, n.node, fencer_decision_epoch(), o.phase, n.phase,
           n.reason, current_setting('fencer.replica', true), n.due_at, nullif(current_setting('fencer.actor', true), '')
    FROM new_rows n JOIN old_rows o ON o.uid = n.uid
    WHERE n.phase IS DISTINCT FROM o.phase
    ORDER BY n.watch_rv;
  ELSE
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor)
    SELECT 'job', o.uid, o.namespace || '/' || o.name, o.assignment_id, o.node, fencer_decision_epoch(), o.phase, 'Deleted',
           'Deleted', current_setting('fencer.replica', true), o.due_at, nullif(current_setting('fencer.actor', true), '')
    FROM old_rows o;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER jobs_history ON jobs;
DROP FUNCTION fencer_job_history();
CREATE TRIGGER jobs_history_added AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();
CREATE TRIGGER jobs_history_changed AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();
CREATE TRIGGER jobs_history_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();

-- An assignment's history (0001): its job's name from one join per statement. Rows keep the order
-- the statement changed them in (a transition table is read back in that order).
CREATE FUNCTION fencer_assignment_history_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    SELECT 'assignment', n.job_uid, coalesce(j.namespace || '/' || j.name, '?'), n.id, n.node,
           coalesce(fencer_decision_epoch(), n.epoch), NULL, n.state, NULL, current_setting('fencer.replica', true)
    FROM (SELECT *, row_number() OVER () AS ord FROM new_rows) n LEFT JOIN jobs j ON j.uid = n.job_uid
    ORDER BY n.ord;
  ELSE
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    SELECT 'assignment', n.job_uid, coalesce(j.namespace || '/' || j.name, '?'), n.id, n.node,
           fencer_decision_epoch(), o.state, n.state, NULL, current_setting('fencer.replica', true)
    FROM (SELECT *, row_number() OVER () AS ord FROM new_rows) n
    JOIN old_rows o ON o.id = n.id
    LEFT JOIN jobs j ON j.uid = n.job_uid
    WHERE n.state IS DISTINCT FROM o.state
    ORDER BY n.ord;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER assignments_history ON assignments;
DROP FUNCTION fencer_assignment_history();
CREATE TRIGGER assignments_history_added AFTER INSERT ON assignments REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_assignment_history_rows();
CREATE TRIGGER assignments_history_changed AFTER UPDATE ON assignments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_assignment_history_rows();

-- Room in each page for a row's next version: an update that changes no indexed column (a pending
-- job's reason, an assignment's delivered stamp) is then HOT, with no new index entries. Applies to
-- pages written from now on.
ALTER TABLE jobs SET (fillfactor = 85);
ALTER TABLE assignments SET (fillfactor = 85);
