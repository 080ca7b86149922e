-- replicas/seen: this replica is alive. $1 name, $2 url.
INSERT INTO replicas (name, url) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET url = EXCLUDED.url, seen_at = now()
