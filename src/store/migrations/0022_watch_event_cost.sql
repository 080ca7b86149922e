-- 0022_watch_event_cost: the watch trigger of 0013 fires for every change of a job (five per job
-- in a burst) and turned the whole row into JSON to read its namespace, and looked the event
-- sequence up in the catalog, each time: the costliest trigger per job (a pg_stat_statements
-- profile, bench/results/throughput-2026-12-02-profile.md). Same events, read directly.
CREATE OR REPLACE FUNCTION fencer_watch_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_id bigint := nextval('watch_events_id_seq');
  subject record;
  ns text;
BEGIN
  IF TG_OP = 'DELETE' THEN subject := OLD; ELSE subject := NEW; END IF;
  -- Compiled per table: the field is read only on tables that have it.
  IF TG_ARGV[1] = 'namespaced' THEN ns := subject.namespace; END IF;
  INSERT INTO watch_events (id, kind, namespace, name, type, object)
  VALUES (event_id, TG_ARGV[0], ns, subject.name,
          CASE TG_OP WHEN 'INSERT' THEN 'ADDED' WHEN 'UPDATE' THEN 'MODIFIED' ELSE 'DELETED' END,
          CASE WHEN TG_OP = 'DELETE' THEN jsonb_build_object('uid', to_jsonb(OLD) ->> 'uid', 'labels', to_jsonb(OLD) -> 'labels') END);
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  NEW.watch_rv := event_id;
  RETURN NEW;
END $$;
