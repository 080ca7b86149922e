-- lease/lock: the lease row, locked for an acquisition attempt. No parameters.
-- Waits behind fenced transactions (they hold it FOR SHARE), so an epoch bump never
-- overtakes a decision in flight.
SELECT holder, epoch, (holder IS NULL OR expires_at <= now()) AS free
FROM lease WHERE id = 1 FOR UPDATE
