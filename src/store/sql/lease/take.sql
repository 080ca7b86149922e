-- lease/take: become the holder with the next epoch. $1 holder, $2 lease length in ms.
UPDATE lease
SET holder = $1, epoch = epoch + 1, acquired_at = now(), expires_at = now() + $2::bigint * interval '1 millisecond'
WHERE id = 1
RETURNING epoch, expires_at
