-- 0002_history_due_at: job rows of the history also say when the job was due, so a checker
-- reading only the history can prove that nothing was placed or run before its due time.
ALTER TABLE history ADD COLUMN due_at timestamptz;

CREATE OR REPLACE FUNCTION fencer_job_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at)
    VALUES ('job', OLD.uid, OLD.namespace || '/' || OLD.name, OLD.assignment_id, OLD.node,
            fencer_decision_epoch(), OLD.phase, 'Deleted', 'Deleted', current_setting('fencer.replica', true), OLD.due_at);
    RETURN OLD;
  END IF;
  IF TG_OP = 'INSERT' OR NEW.phase IS DISTINCT FROM OLD.phase THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at)
    VALUES ('job', NEW.uid, NEW.namespace || '/' || NEW.name, NEW.assignment_id, NEW.node,
            fencer_decision_epoch(), CASE WHEN TG_OP = 'UPDATE' THEN OLD.phase END, NEW.phase, NEW.reason,
            current_setting('fencer.replica', true), NEW.due_at);
  END IF;
  RETURN NEW;
END $$;
