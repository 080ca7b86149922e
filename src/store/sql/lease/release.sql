-- lease/release: graceful step-down, so a standby need not wait for expiry. $1 holder, $2 epoch.
UPDATE lease SET holder = NULL, expires_at = now(), renewed_at = now()
WHERE id = 1 AND holder = $1 AND epoch = $2
