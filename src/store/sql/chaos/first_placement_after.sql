-- chaos/first_placement_after: when the first assignment after a moment was made (null while
-- none has been). $1 the moment, ms since the Unix epoch.
SELECT min(at) AS at FROM history
WHERE entity = 'assignment' AND to_state = 'Assigned' AND at > to_timestamp($1 / 1000.0)
