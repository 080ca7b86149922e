-- lease/renew: extend our lease. $1 holder, $2 epoch, $3 lease length in ms.
-- No row back means the lease is no longer ours: we were deposed.
UPDATE lease
SET expires_at = now() + $3::bigint * interval '1 millisecond', renewed_at = now()
WHERE id = 1 AND holder = $1 AND epoch = $2
RETURNING expires_at
