-- lease/read: the lease as the database sees it now. No parameters.
SELECT holder, epoch, expires_at, (holder IS NULL OR expires_at <= now()) AS free
FROM lease WHERE id = 1
