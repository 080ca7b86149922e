-- lease/take: become the holder with the next epoch. $1 holder, $2 lease length in ms, $3 the
-- death rule's silence timeout in ms. Also says how long ago the old holder last showed it was
-- alive (renewed or released), in seconds.
-- The death rule's grace (0031): it counts from now, and its lapse is this one (the time since the
-- old holder's last sign), or the one carried if longer and the old holder was not heard for a
-- full silence timeout since its own grace began.
-- clock_timestamp(), not now(): the transaction may have waited on the row lock, and the lease
-- must run from the moment it is taken, as the new leader's trust window does.
WITH before AS (SELECT renewed_at, grace_from, lapse FROM lease WHERE id = 1)
UPDATE lease
SET holder = $1, epoch = epoch + 1, acquired_at = clock_timestamp(), renewed_at = clock_timestamp(),
    expires_at = clock_timestamp() + $2::bigint * interval '1 millisecond',
    grace_from = clock_timestamp(),
    lapse = (SELECT greatest(coalesce(clock_timestamp() - before.renewed_at, interval '0'),
                             CASE WHEN before.renewed_at - before.grace_from < $3::bigint * interval '1 millisecond'
                                  THEN before.lapse ELSE interval '0' END,
                             interval '0')
             FROM before)
WHERE id = 1
RETURNING epoch, expires_at, (SELECT extract(epoch FROM clock_timestamp() - before.renewed_at)::float8 FROM before) AS since_alive_seconds
