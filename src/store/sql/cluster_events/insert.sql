-- cluster_events/insert: an event no trigger writes (a replica's fenced transaction rejected).
-- $1 type (Normal | Warning), $2 reason, $3 object (kind/name), $4 epoch or NULL, $5 replica,
-- $6 message.
INSERT INTO cluster_events (type, reason, object, epoch, replica, message)
VALUES ($1, $2, $3, $4, $5, $6)
