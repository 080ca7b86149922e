-- placement/notify_room: wake placement when this transaction commits, for room that no job's
-- pending state shows (a claim, a cancelled run's hold released; src/store/channels.ts, room).
-- No parameters.
SELECT pg_notify('fencer_room', '')
