-- lease/renew: extend our lease. $1 holder, $2 epoch, $3 lease length in ms, $4 the death rule's
-- silence timeout in ms.
-- No row back means the lease is no longer ours: we were deposed.
-- A renewal after a gap (the database stalled and came back, and nobody took over meanwhile)
-- starts the death rule's grace again, as a take does (lease/take.sql). A gap is more than a
-- lease, or than half the silence timeout if that is shorter: a stall the nodes' heartbeats
-- could not cover must never go unrecorded, however long the lease is set.
-- Every expression reads the row as it was before this update.
UPDATE lease
SET expires_at = now() + $3::bigint * interval '1 millisecond', renewed_at = now(),
    grace_from = CASE WHEN now() - renewed_at > least($3::bigint, $4::bigint / 2) * interval '1 millisecond'
                      THEN now() ELSE grace_from END,
    lapse = CASE WHEN now() - renewed_at > least($3::bigint, $4::bigint / 2) * interval '1 millisecond'
                 THEN greatest(now() - renewed_at,
                               CASE WHEN renewed_at - grace_from < $4::bigint * interval '1 millisecond'
                                    THEN lapse ELSE interval '0' END)
                 ELSE lapse END
WHERE id = 1 AND holder = $1 AND epoch = $2
RETURNING expires_at
