-- 0017_cluster_events: what happened to the cluster itself, as a Kubernetes Event list shows it
-- (`fencer get events`, the dashboard): a leader elected at a new epoch, a node declared dead or
-- registered, a replica's fenced transaction rejected. Job changes are in history, not here.
-- Leader and node events are written by triggers, in the transaction that makes the change, so
-- no path that takes the lease or changes a node's state can forget one. Each is also a row of the
-- watch feed (kind Event), so the dashboard learns of it in commit order, as of any other change.
-- The leader forgets old rows (cluster_events/prune.sql).
CREATE TABLE cluster_events (
  id      bigserial PRIMARY KEY,
  at      timestamptz NOT NULL DEFAULT now(),
  type    text NOT NULL CHECK (type IN ('Normal', 'Warning')),
  reason  text NOT NULL,
  -- What it is about, as kind/name: replica/replica-2, node/node-7.
  object  text NOT NULL,
  epoch   bigint,
  -- The replica that wrote it, where known.
  replica text,
  message text NOT NULL
);

CREATE FUNCTION fencer_cluster_event_watch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO watch_events (kind, namespace, name, type) VALUES ('Event', NULL, NEW.object, 'ADDED');
  RETURN NULL;
END $$;
CREATE TRIGGER cluster_events_watch AFTER INSERT ON cluster_events
  FOR EACH ROW EXECUTE FUNCTION fencer_cluster_event_watch();

CREATE FUNCTION fencer_lease_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cluster_events (type, reason, object, epoch, replica, message)
  VALUES ('Normal', 'LeaderElected', 'replica/' || coalesce(NEW.holder, 'none'), NEW.epoch, NEW.holder,
          format('%s leads at epoch %s', NEW.holder, NEW.epoch)
          || CASE WHEN OLD.renewed_at IS NOT NULL AND OLD.epoch > 0
                  THEN format(' (no live leader for %s s since %s last renewed or released the lease)',
                              round(extract(epoch FROM NEW.renewed_at - OLD.renewed_at)::numeric, 3),
                              coalesce(OLD.holder, 'the previous holder'))
                  ELSE '' END);
  RETURN NULL;
END $$;
CREATE TRIGGER lease_event AFTER UPDATE OF epoch ON lease
  FOR EACH ROW WHEN (NEW.epoch <> OLD.epoch) EXECUTE FUNCTION fencer_lease_event();

CREATE FUNCTION fencer_node_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'Dead' THEN
    INSERT INTO cluster_events (type, reason, object, epoch, message)
    VALUES ('Warning', 'NodeDied', 'node/' || NEW.name, (SELECT epoch FROM lease WHERE id = 1),
            format('node %s declared dead: %s', NEW.name, coalesce(NEW.dead_reason, 'no reason given')));
  ELSE
    INSERT INTO cluster_events (type, reason, object, epoch, message)
    VALUES ('Normal', 'NodeRegistered', 'node/' || NEW.name, NULL,
            format('node %s registered: %s CPU, %s GiB of memory%s', NEW.name, trim_scale(round(NEW.cpu_millis / 1000.0, 3)),
                   trim_scale(round(NEW.memory_bytes / 1073741824.0, 3)),
                   CASE WHEN TG_OP = 'UPDATE' THEN ' again after it was declared dead' ELSE '' END));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER node_registered_event AFTER INSERT ON nodes
  FOR EACH ROW EXECUTE FUNCTION fencer_node_event();
CREATE TRIGGER node_state_event AFTER UPDATE OF state ON nodes
  FOR EACH ROW WHEN (NEW.state IS DISTINCT FROM OLD.state) EXECUTE FUNCTION fencer_node_event();
