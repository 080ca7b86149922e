-- 0026_pending_notify_per_row: fencer_pending is sent per row again, as 0015 sent it (one uid a
-- notification; the listener reads a payload as a list, so one uid is a list of one). The
-- statement triggers of 0024 joined each UPDATE's old and new transition tables to find the jobs
-- to name; in a 20,000-job burst that join was the costliest trigger statement per job, and the
-- burst ran at 508 jobs/s with PostgreSQL at 39.4 CPU s against 683 jobs/s and 28.0 s with the
-- per-row trigger (bench/results/throughput-2026-12-02-attempts.md). Per row, the trigger
-- compares OLD with NEW in memory and sends only what changed.
DROP TRIGGER jobs_pending_notify_insert ON jobs;
DROP TRIGGER jobs_pending_notify_update ON jobs;
DROP TRIGGER jobs_pending_notify_delete ON jobs;
DROP FUNCTION fencer_pending_notify();

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
