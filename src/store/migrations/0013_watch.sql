-- 0013_watch: every change of an object a client can watch (jobs, workflows, cronjobs, queues,
-- resource quotas, nodes) as a row of watch_events, written in the changing transaction.
--
-- The order a watch streams them in is (xid, id): an event is streamed only once every
-- transaction with a smaller xid has ended (xid below the oldest running one,
-- pg_snapshot_xmin), so nothing can later appear before a point already streamed, and a watch
-- resumed from an event on any replica misses nothing. An object's metadata.resourceVersion is
-- the id of its latest event (watch_rv), so a client resumes from what it last saw.
CREATE TABLE watch_events (
  id        bigserial PRIMARY KEY,
  xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  kind      text NOT NULL,
  namespace text,
  name      text NOT NULL,
  type      text NOT NULL CHECK (type IN ('ADDED', 'MODIFIED', 'DELETED')),
  -- A deleted object's last identity (its row is gone): uid and labels.
  object    jsonb,
  at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX watch_events_order ON watch_events (xid, id);

CREATE FUNCTION fencer_watch_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_id bigint := nextval(pg_get_serial_sequence('watch_events', 'id'));
  subject record;
BEGIN
  IF TG_OP = 'DELETE' THEN subject := OLD; ELSE subject := NEW; END IF;
  INSERT INTO watch_events (id, kind, namespace, name, type, object)
  VALUES (event_id, TG_ARGV[0], CASE WHEN TG_ARGV[1] = 'namespaced' THEN to_jsonb(subject) ->> 'namespace' END, subject.name,
          CASE TG_OP WHEN 'INSERT' THEN 'ADDED' WHEN 'UPDATE' THEN 'MODIFIED' ELSE 'DELETED' END,
          CASE WHEN TG_OP = 'DELETE' THEN jsonb_build_object('uid', to_jsonb(OLD) ->> 'uid', 'labels', to_jsonb(OLD) -> 'labels') END);
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  NEW.watch_rv := event_id;
  RETURN NEW;
END $$;

ALTER TABLE jobs ADD COLUMN watch_rv bigint;
ALTER TABLE workflows ADD COLUMN watch_rv bigint;
ALTER TABLE cronjobs ADD COLUMN watch_rv bigint;
ALTER TABLE queues ADD COLUMN watch_rv bigint;
ALTER TABLE resource_quotas ADD COLUMN watch_rv bigint;
ALTER TABLE nodes ADD COLUMN watch_rv bigint;

CREATE TRIGGER jobs_watch BEFORE INSERT OR UPDATE OR DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('Job', 'namespaced');
CREATE TRIGGER workflows_watch BEFORE INSERT OR UPDATE OR DELETE ON workflows FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('Workflow', 'namespaced');
CREATE TRIGGER cronjobs_watch BEFORE INSERT OR UPDATE OR DELETE ON cronjobs FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('CronJob', 'namespaced');
CREATE TRIGGER queues_watch BEFORE INSERT OR UPDATE OR DELETE ON queues FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('Queue', 'namespaced');
CREATE TRIGGER resource_quotas_watch BEFORE INSERT OR UPDATE OR DELETE ON resource_quotas FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('ResourceQuota', 'namespaced');
CREATE TRIGGER nodes_watch BEFORE INSERT OR UPDATE OR DELETE ON nodes FOR EACH ROW EXECUTE FUNCTION fencer_watch_event('Node', 'cluster');
