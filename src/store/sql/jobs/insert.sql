-- jobs/insert: accept jobs (any replica), in one statement however many. A name already taken
-- gives no row back. All arrays have one entry per job: $1 uuid[] uids, $2 text[] namespaces,
-- $3 text[] names, $4 text[] labels (JSON), $5 text[] specs (JSON), $6 bigint[] cpu millis,
-- $7 bigint[] memory bytes, $8 bigint[] duration ms, $9 text[] node selectors (JSON),
-- $10 int[] max attempts, $11 timestamptz[] start at (or NULL), $12 bigint[] start after ms (or
-- NULL), $13 text[] needs (JSON arrays of job names), $14 uuid[] workflow uids (or NULL),
-- $15 bigint[] path ms, $16 text[] images, $17 text[] pools, $18 text[] retry policies,
-- $19 bigint[] backoff base ms, $20 bigint[] backoff cap ms, $21 text[] queues, $22 int[] priorities,
-- $23 uuid[] cronjob uids (or NULL), $24 text[] annotations (JSON).
-- Due times are the database's: a start delay counts from this statement's now().
INSERT INTO jobs (uid, namespace, name, labels, spec, cpu_millis, memory_bytes, duration_ms, node_selector, max_attempts,
                  due_at, not_before, needs, waiting, workflow_uid, path_ms, image, pool, retry_policy, backoff_base_ms, backoff_cap_ms, queue, priority, cronjob_uid, annotations)
SELECT uid, namespace, name, labels::jsonb, spec::jsonb, cpu, memory, duration, selector::jsonb, attempts,
       coalesce(start_at, now() + start_after * interval '1 millisecond', now()),
       coalesce(start_at, now() + start_after * interval '1 millisecond', now()),
       ARRAY(SELECT jsonb_array_elements_text(needs::jsonb)), jsonb_array_length(needs::jsonb) > 0,
       workflow_uid, path, image, pool, retry_policy, backoff_base, backoff_cap, queue, priority, cronjob_uid, annotations::jsonb
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::int[],
            $11::timestamptz[], $12::bigint[], $13::text[], $14::uuid[], $15::bigint[], $16::text[], $17::text[], $18::text[],
            $19::bigint[], $20::bigint[], $21::text[], $22::int[], $23::uuid[], $24::text[])
  AS j(uid, namespace, name, labels, spec, cpu, memory, duration, selector, attempts, start_at, start_after, needs,
       workflow_uid, path, image, pool, retry_policy, backoff_base, backoff_cap, queue, priority, cronjob_uid, annotations)
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *
