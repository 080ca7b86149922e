-- lease/read: the lease as the database sees it now. No parameters.
SELECT holder, epoch, acquired_at, expires_at, (holder IS NULL OR expires_at <= now()) AS free
FROM lease WHERE id = 1
