-- lease/take: become the holder with the next epoch. $1 holder, $2 lease length in ms. Also
-- says how long ago the old holder last showed it was alive (renewed or released), in seconds,
-- and keeps that moment as unheld_since (the death rule's grace reads it).
-- clock_timestamp(), not now(): the transaction may have waited on the row lock, and the lease
-- must run from the moment it is taken, as the new leader's trust window does.
WITH before AS (SELECT renewed_at FROM lease WHERE id = 1)
UPDATE lease
SET holder = $1, epoch = epoch + 1, acquired_at = clock_timestamp(), renewed_at = clock_timestamp(),
    expires_at = clock_timestamp() + $2::bigint * interval '1 millisecond',
    unheld_since = least((SELECT renewed_at FROM before), clock_timestamp())
WHERE id = 1
RETURNING epoch, expires_at, (SELECT extract(epoch FROM clock_timestamp() - before.renewed_at)::float8 FROM before) AS since_alive_seconds
