-- lease/fenced_lock_timeout: how long a fenced transaction waits for a row lock. No parameters.
-- A decision must not wait long on a row another session holds (say a frozen replica's report):
-- while it waits it holds the lease row FOR SHARE, and the renewal waits behind it.
SET LOCAL lock_timeout = '300ms'
