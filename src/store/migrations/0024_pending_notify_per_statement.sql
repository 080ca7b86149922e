-- 0024_pending_notify_per_statement: NOTIFY fencer_pending (0015) once per statement instead of
-- once per row. The payload is the uids of the jobs whose place among the pending jobs may have
-- changed, comma-separated, at most 200 to a notification (a payload must stay under 8000
-- bytes). A placement round of a thousand jobs or a thousand-job submission sent a thousand
-- notifications, each delivered to every replica; now it sends five. The jobs named are the same
-- as 0015's: a job that became or stopped being Pending, or, while Pending, whose waiting flag,
-- due time, queue, lane or critical path changed. This trigger is placement's one wake-up for a
-- pending change: the store no longer sends fencer_jobs beside it (src/store/channels.ts).
--
-- Transition tables need one trigger per event. The number 0023 is left to a migration being
-- written beside this one.
DROP TRIGGER jobs_pending_notify ON jobs;
DROP FUNCTION fencer_pending_notify();

-- TG_OP picks which rows count; the chunks are numbered in the order the rows were changed.
CREATE FUNCTION fencer_pending_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('fencer_pending', string_agg(uid::text, ',')) FROM (
      SELECT uid, (row_number() OVER () - 1) / 200 AS chunk FROM new_rows WHERE phase = 'Pending'
    ) named GROUP BY chunk;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('fencer_pending', string_agg(uid::text, ',')) FROM (
      SELECT uid, (row_number() OVER () - 1) / 200 AS chunk FROM old_rows WHERE phase = 'Pending'
    ) named GROUP BY chunk;
  ELSE
    PERFORM pg_notify('fencer_pending', string_agg(uid::text, ',')) FROM (
      SELECT n.uid, (row_number() OVER () - 1) / 200 AS chunk
      FROM new_rows n JOIN old_rows o ON o.uid = n.uid
      WHERE (o.phase = 'Pending') <> (n.phase = 'Pending')
         OR (n.phase = 'Pending' AND (o.waiting, o.due_at, o.queue, o.lane, o.path_ms)
                                     IS DISTINCT FROM (n.waiting, n.due_at, n.queue, n.lane, n.path_ms))
    ) named GROUP BY chunk;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_pending_notify_insert AFTER INSERT ON jobs
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_pending_notify();
CREATE TRIGGER jobs_pending_notify_update AFTER UPDATE ON jobs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_pending_notify();
CREATE TRIGGER jobs_pending_notify_delete AFTER DELETE ON jobs
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_pending_notify();
