-- agent-protocol/beat_backwards: broken on purpose (src/testing/broken-guards.ts, heartbeat-forward), for tests only: a
-- heartbeat that sets its time whatever the row holds, as before migration 0018. $1 name.
WITH beat AS (
    INSERT INTO node_heartbeats (name, at)
    SELECT $1, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = $1)
    ON CONFLICT (name) DO UPDATE SET at = EXCLUDED.at
    RETURNING name
)
SELECT n.state FROM beat JOIN nodes n ON n.name = beat.name
