-- jobs/insert: accept jobs (any replica), in one statement however many. A name already taken
-- gives no row back. All arrays have one entry per job: $1 uuid[] uids, $2 text[] namespaces,
-- $3 text[] names, $4 text[] labels (JSON), $5 text[] specs (JSON), $6 bigint[] cpu millis,
-- $7 bigint[] memory bytes, $8 bigint[] duration ms, $9 text[] node selectors (JSON),
-- $10 int[] max attempts.
INSERT INTO jobs (uid, namespace, name, labels, spec, cpu_millis, memory_bytes, duration_ms, node_selector, max_attempts)
SELECT uid, namespace, name, labels::jsonb, spec::jsonb, cpu, memory, duration, selector::jsonb, attempts
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::int[])
  AS j(uid, namespace, name, labels, spec, cpu, memory, duration, selector, attempts)
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *
