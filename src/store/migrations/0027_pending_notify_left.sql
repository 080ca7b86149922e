-- 0027_pending_notify_left: fencer_pending says which way a job went. A job now pending (new, or
-- changed while pending) is named as before, `uid`; a job that left the pending ones (placed,
-- cancelled, deleted) is named `-uid`. The leader drops a job that left from its pending set
-- without reading it again and without a placement round: before, each placement woke a second
-- round that read back the jobs it had just placed and found nothing to do (half the rounds of
-- jobs submitted one at a time).
CREATE OR REPLACE FUNCTION fencer_pending_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', NEW.uid::text); END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', '-' || OLD.uid::text); END IF;
  ELSIF (OLD.phase = 'Pending') AND NEW.phase <> 'Pending' THEN
    PERFORM pg_notify('fencer_pending', '-' || NEW.uid::text);
  ELSIF NEW.phase = 'Pending'
    AND (OLD.phase <> 'Pending'
         OR (OLD.waiting, OLD.due_at, OLD.queue, OLD.lane, OLD.path_ms)
            IS DISTINCT FROM (NEW.waiting, NEW.due_at, NEW.queue, NEW.lane, NEW.path_ms)) THEN
    PERFORM pg_notify('fencer_pending', NEW.uid::text);
  END IF;
  RETURN NULL;
END $$;
