-- replicas/list: every replica that ever said it was alive. $1 ms after which one counts as gone.
SELECT name, url, seen_at, seen_at > now() - $1::bigint * interval '1 millisecond' AS alive FROM replicas ORDER BY name
