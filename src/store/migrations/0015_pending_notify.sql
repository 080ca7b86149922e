-- 0015_pending_notify: a NOTIFY fencer_pending naming each job whose place among the pending jobs
-- may have changed: it became or stopped being Pending, or, while Pending, its waiting flag, due
-- time, queue, lane or critical path changed. NOTIFY is sent at commit, in commit order, to every
-- replica listening: the leader keeps its pending jobs between placement rounds and reads again
-- only the jobs named (src/controllers/placement/pending-set.ts), not the oldest thousands of every
-- queue lane on every round. One writer for every path that changes a job: this trigger.
CREATE FUNCTION fencer_pending_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', NEW.uid::text); END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', OLD.uid::text); END IF;
  ELSIF (OLD.phase = 'Pending') <> (NEW.phase = 'Pending')
     OR (NEW.phase = 'Pending' AND (OLD.waiting, OLD.due_at, OLD.queue, OLD.lane, OLD.path_ms)
                                   IS DISTINCT FROM (NEW.waiting, NEW.due_at, NEW.queue, NEW.lane, NEW.path_ms)) THEN
    PERFORM pg_notify('fencer_pending', NEW.uid::text);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_pending_notify AFTER INSERT OR UPDATE OR DELETE ON jobs
  FOR EACH ROW EXECUTE FUNCTION fencer_pending_notify();
