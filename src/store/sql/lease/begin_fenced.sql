-- lease/begin_fenced: opens every fenced transaction and reads the lease in the same round trip
-- (no parameters: it is sent by the simple protocol, BEGIN and all). The caller compares the
-- epoch returned with its own and aborts unless they are equal.
-- FOR SHARE makes a concurrent takeover (UPDATE of this row) wait until we commit or abort, so
-- either our decision commits under our epoch or we see the new one and abort.
-- For this transaction only, set before the row is locked (the target list is computed below
-- the lock): lock_timeout, since a decision must not wait long on a row another session holds
-- (say a frozen replica's report) while it holds this row and the renewal waits behind it; and
-- fencer.epoch, the row's epoch (ours, or we abort), which the history triggers stamp on every
-- row they write.
BEGIN;
SELECT epoch, holder, set_config('lock_timeout', '300ms', true), set_config('fencer.epoch', epoch::text, true)
FROM lease WHERE id = 1 FOR SHARE
