-- fencer's database schema as src/store/migrations/ leave it (0001_init.sql … 0031_lease_grace.sql),
-- for reading: the migrations are what builds it. Generated, do not edit: `npm run schema` writes
-- it again, and test/integration/schema.test.ts fails when it is not current.

-- Tables

CREATE TABLE assignments (
  id uuid NOT NULL,
  job_uid uuid NOT NULL,
  node text NOT NULL,
  epoch bigint NOT NULL,
  attempt integer NOT NULL,
  state text NOT NULL,
  cpu_millis bigint NOT NULL,
  memory_bytes bigint NOT NULL,
  duration_ms bigint NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  confirm_by timestamp with time zone,
  started_at timestamp with time zone,
  finished_at timestamp with time zone,
  message text,
  namespace text,
  queue text,
  holds_until timestamp with time zone,
  CONSTRAINT assignments_pkey PRIMARY KEY (id),
  CONSTRAINT assignments_node_fkey FOREIGN KEY (node) REFERENCES nodes(name),
  CONSTRAINT assignments_state_check CHECK (state = ANY (ARRAY['Assigned'::text, 'Running'::text, 'Succeeded'::text, 'Failed'::text, 'Lost'::text, 'Unconfirmed'::text, 'Cancelled'::text]))
);

CREATE TABLE cluster_events (
  id bigint DEFAULT nextval('cluster_events_id_seq'::regclass) NOT NULL,
  at timestamp with time zone DEFAULT now() NOT NULL,
  type text NOT NULL,
  reason text NOT NULL,
  object text NOT NULL,
  epoch bigint,
  replica text,
  message text NOT NULL,
  CONSTRAINT cluster_events_pkey PRIMARY KEY (id),
  CONSTRAINT cluster_events_type_check CHECK (type = ANY (ARRAY['Normal'::text, 'Warning'::text]))
);

CREATE TABLE cron_occurrences (
  id bigint DEFAULT nextval('cron_occurrences_id_seq'::regclass) NOT NULL,
  cronjob_uid uuid NOT NULL,
  cronjob text NOT NULL,
  version bigint NOT NULL,
  schedule text NOT NULL,
  time_zone text NOT NULL,
  concurrency_policy text NOT NULL,
  scheduled_at timestamp with time zone NOT NULL,
  outcome text NOT NULL,
  reason text,
  job_uid uuid,
  job text,
  epoch bigint,
  replica text,
  at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
  CONSTRAINT cron_occurrences_pkey PRIMARY KEY (id),
  CONSTRAINT cron_occurrences_outcome_check CHECK (outcome = ANY (ARRAY['Fired'::text, 'Skipped'::text]))
);

CREATE TABLE cronjobs (
  uid uuid DEFAULT gen_random_uuid() NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  spec jsonb NOT NULL,
  schedule text NOT NULL,
  time_zone text NOT NULL,
  suspend boolean DEFAULT false NOT NULL,
  concurrency_policy text NOT NULL,
  catch_up text NOT NULL,
  starting_deadline_seconds bigint,
  successful_history_limit integer NOT NULL,
  failed_history_limit integer NOT NULL,
  next_fire_at timestamp with time zone,
  version bigint DEFAULT 1 NOT NULL,
  last_handled_at timestamp with time zone,
  last_schedule_time timestamp with time zone,
  last_successful_time timestamp with time zone,
  blocked_reason text,
  blocked_message text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  resource_version bigint DEFAULT 1 NOT NULL,
  watch_rv bigint,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  CONSTRAINT cronjobs_pkey PRIMARY KEY (uid),
  CONSTRAINT cronjobs_namespace_name_key UNIQUE (namespace, name),
  CONSTRAINT cronjobs_catch_up_check CHECK (catch_up = ANY (ARRAY['latest'::text, 'all'::text, 'none'::text])),
  CONSTRAINT cronjobs_concurrency_policy_check CHECK (concurrency_policy = ANY (ARRAY['Allow'::text, 'Forbid'::text, 'Replace'::text])),
  CONSTRAINT cronjobs_failed_history_limit_check CHECK (failed_history_limit >= 0),
  CONSTRAINT cronjobs_starting_deadline_seconds_check CHECK (starting_deadline_seconds >= 0),
  CONSTRAINT cronjobs_successful_history_limit_check CHECK (successful_history_limit >= 0)
);

CREATE TABLE history (
  id bigint DEFAULT nextval('history_id_seq'::regclass) NOT NULL,
  at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
  entity text NOT NULL,
  job_uid uuid NOT NULL,
  job text NOT NULL,
  assignment uuid,
  node text,
  epoch bigint,
  from_state text,
  to_state text NOT NULL,
  reason text,
  replica text,
  due_at timestamp with time zone,
  actor text,
  needs text[],
  queue text,
  CONSTRAINT history_pkey PRIMARY KEY (id),
  CONSTRAINT history_entity_check CHECK (entity = ANY (ARRAY['job'::text, 'assignment'::text]))
);

CREATE TABLE idempotency_keys (
  namespace text NOT NULL,
  kind text NOT NULL,
  key text NOT NULL,
  name text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  subject text NOT NULL,
  body_hash text NOT NULL,
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (namespace, kind, subject, key)
);

CREATE TABLE jobs (
  uid uuid NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  spec jsonb NOT NULL,
  cpu_millis bigint NOT NULL,
  memory_bytes bigint NOT NULL,
  duration_ms bigint NOT NULL,
  node_selector jsonb DEFAULT '{}'::jsonb NOT NULL,
  max_attempts integer NOT NULL,
  phase text DEFAULT 'Pending'::text NOT NULL,
  attempt integer DEFAULT 1 NOT NULL,
  due_at timestamp with time zone DEFAULT now() NOT NULL,
  assignment_id uuid,
  node text,
  epoch bigint,
  reason text,
  message text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  started_at timestamp with time zone,
  finished_at timestamp with time zone,
  resource_version bigint DEFAULT 1 NOT NULL,
  workflow_uid uuid,
  needs text[] DEFAULT '{}'::text[] NOT NULL,
  waiting boolean DEFAULT false NOT NULL,
  path_ms bigint,
  image text,
  pool text,
  retry_policy text DEFAULT 'OnFailure'::text NOT NULL,
  backoff_base_ms bigint DEFAULT 1000 NOT NULL,
  backoff_cap_ms bigint DEFAULT 300000 NOT NULL,
  not_before timestamp with time zone DEFAULT now() NOT NULL,
  queue text DEFAULT 'default'::text NOT NULL,
  priority integer DEFAULT 0 NOT NULL,
  lane smallint GENERATED ALWAYS AS (
CASE
    WHEN (priority >= 1000) THEN 0
    WHEN (priority <= '-1000'::integer) THEN 2
    ELSE 1
END) STORED,
  cronjob_uid uuid,
  watch_rv bigint,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  disruptions integer DEFAULT 0 NOT NULL,
  CONSTRAINT jobs_pkey PRIMARY KEY (uid),
  CONSTRAINT jobs_namespace_name_key UNIQUE (namespace, name),
  CONSTRAINT jobs_workflow_uid_fkey FOREIGN KEY (workflow_uid) REFERENCES workflows(uid),
  CONSTRAINT jobs_backoff_base_ms_check CHECK (backoff_base_ms > 0),
  CONSTRAINT jobs_backoff_cap_ms_check CHECK (backoff_cap_ms > 0),
  CONSTRAINT jobs_cpu_millis_check CHECK (cpu_millis > 0),
  CONSTRAINT jobs_duration_ms_check CHECK (duration_ms > 0),
  CONSTRAINT jobs_max_attempts_check CHECK (max_attempts >= 1),
  CONSTRAINT jobs_memory_bytes_check CHECK (memory_bytes > 0),
  CONSTRAINT jobs_phase_check CHECK (phase = ANY (ARRAY['Pending'::text, 'Assigned'::text, 'Running'::text, 'Succeeded'::text, 'Failed'::text, 'Cancelled'::text, 'Skipped'::text, 'Dead'::text])),
  CONSTRAINT jobs_retry_policy_check CHECK (retry_policy = ANY (ARRAY['OnFailure'::text, 'Never'::text])),
  CONSTRAINT waiting_only_pending CHECK (NOT waiting OR phase = 'Pending'::text)
);

CREATE TABLE join_tokens (
  id text NOT NULL,
  secret_sha256 bytea NOT NULL,
  description text DEFAULT ''::text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  node_name text,
  CONSTRAINT join_tokens_pkey PRIMARY KEY (id),
  CONSTRAINT join_tokens_id_check CHECK (id ~ '^[a-z0-9]{6}$'::text),
  CONSTRAINT join_tokens_node_name_check CHECK (node_name <> ''::text),
  CONSTRAINT join_tokens_secret_sha256_check CHECK (length(secret_sha256) = 32)
);

CREATE TABLE lease (
  id integer NOT NULL,
  holder text,
  epoch bigint DEFAULT 0 NOT NULL,
  acquired_at timestamp with time zone,
  expires_at timestamp with time zone,
  renewed_at timestamp with time zone,
  grace_from timestamp with time zone,
  lapse interval DEFAULT '00:00:00'::interval NOT NULL,
  CONSTRAINT lease_pkey PRIMARY KEY (id),
  CONSTRAINT lease_id_check CHECK (id = 1)
);

CREATE TABLE node_credential_keys (
  kid text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT node_credential_keys_pkey PRIMARY KEY (kid),
  CONSTRAINT node_credential_keys_kid_check CHECK (kid <> ''::text)
);

CREATE TABLE node_heartbeats (
  name text NOT NULL,
  at timestamp with time zone NOT NULL,
  CONSTRAINT node_heartbeats_pkey PRIMARY KEY (name)
);

CREATE TABLE nodes (
  name text NOT NULL,
  cpu_millis bigint NOT NULL,
  memory_bytes bigint NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  state text DEFAULT 'Ready'::text NOT NULL,
  allocated_cpu_millis bigint DEFAULT 0 NOT NULL,
  allocated_memory_bytes bigint DEFAULT 0 NOT NULL,
  registered_at timestamp with time zone DEFAULT now() NOT NULL,
  watch_session uuid,
  watch_replica text,
  disconnected_at timestamp with time zone,
  dead_at timestamp with time zone,
  dead_reason text,
  incarnation uuid,
  watch_attempt bigint DEFAULT 0 NOT NULL,
  generation bigint,
  images text[] DEFAULT '{}'::text[] NOT NULL,
  watch_rv bigint,
  max_jobs integer DEFAULT 110 NOT NULL,
  allocated_jobs integer DEFAULT 0 NOT NULL,
  unclaimed_jobs integer DEFAULT 0 NOT NULL,
  CONSTRAINT nodes_pkey PRIMARY KEY (name),
  CONSTRAINT allocation_within_capacity CHECK (allocated_cpu_millis >= 0 AND allocated_cpu_millis <= cpu_millis AND allocated_memory_bytes >= 0 AND allocated_memory_bytes <= memory_bytes),
  CONSTRAINT jobs_within_capacity CHECK (allocated_jobs >= 0 AND allocated_jobs <= max_jobs AND unclaimed_jobs >= 0 AND unclaimed_jobs <= allocated_jobs),
  CONSTRAINT nodes_cpu_millis_check CHECK (cpu_millis > 0),
  CONSTRAINT nodes_max_jobs_check CHECK (max_jobs > 0),
  CONSTRAINT nodes_memory_bytes_check CHECK (memory_bytes > 0),
  CONSTRAINT nodes_state_check CHECK (state = ANY (ARRAY['Ready'::text, 'Dead'::text]))
);

CREATE TABLE queues (
  uid uuid DEFAULT gen_random_uuid() NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  spec jsonb DEFAULT '{}'::jsonb NOT NULL,
  weight double precision DEFAULT 1 NOT NULL,
  concurrency_limit integer,
  cpu_limit_millis bigint,
  memory_limit_bytes bigint,
  strict_lanes boolean DEFAULT false NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  resource_version bigint DEFAULT 1 NOT NULL,
  watch_rv bigint,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  CONSTRAINT queues_pkey PRIMARY KEY (uid),
  CONSTRAINT queues_namespace_name_key UNIQUE (namespace, name),
  CONSTRAINT queues_concurrency_limit_check CHECK (concurrency_limit >= 0),
  CONSTRAINT queues_cpu_limit_millis_check CHECK (cpu_limit_millis >= 0),
  CONSTRAINT queues_memory_limit_bytes_check CHECK (memory_limit_bytes >= 0),
  CONSTRAINT queues_weight_check CHECK (weight > 0::double precision)
);

CREATE TABLE rbac_bindings (
  uid uuid DEFAULT gen_random_uuid() NOT NULL,
  kind text NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  role_kind text NOT NULL,
  role_name text NOT NULL,
  subjects jsonb NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  resource_version bigint DEFAULT 1 NOT NULL,
  CONSTRAINT rbac_bindings_pkey PRIMARY KEY (uid),
  CONSTRAINT rbac_bindings_kind_namespace_name_key UNIQUE (kind, namespace, name),
  CONSTRAINT rbac_binding_scope CHECK ((kind = 'ClusterRoleBinding'::text) = (namespace = ''::text)),
  CONSTRAINT rbac_bindings_kind_check CHECK (kind = ANY (ARRAY['RoleBinding'::text, 'ClusterRoleBinding'::text])),
  CONSTRAINT rbac_bindings_name_check CHECK (name <> ''::text),
  CONSTRAINT rbac_bindings_role_kind_check CHECK (role_kind = ANY (ARRAY['Role'::text, 'ClusterRole'::text])),
  CONSTRAINT rbac_bindings_role_name_check CHECK (role_name <> ''::text),
  CONSTRAINT rbac_bindings_subjects_check CHECK (jsonb_typeof(subjects) = 'array'::text),
  CONSTRAINT rbac_cluster_binding_role CHECK (kind = 'RoleBinding'::text OR role_kind = 'ClusterRole'::text)
);

CREATE TABLE rbac_roles (
  uid uuid DEFAULT gen_random_uuid() NOT NULL,
  kind text NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  rules jsonb NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  resource_version bigint DEFAULT 1 NOT NULL,
  CONSTRAINT rbac_roles_pkey PRIMARY KEY (uid),
  CONSTRAINT rbac_roles_kind_namespace_name_key UNIQUE (kind, namespace, name),
  CONSTRAINT rbac_role_scope CHECK ((kind = 'ClusterRole'::text) = (namespace = ''::text)),
  CONSTRAINT rbac_roles_kind_check CHECK (kind = ANY (ARRAY['Role'::text, 'ClusterRole'::text])),
  CONSTRAINT rbac_roles_name_check CHECK (name <> ''::text),
  CONSTRAINT rbac_roles_rules_check CHECK (jsonb_typeof(rules) = 'array'::text)
);

CREATE TABLE replicas (
  name text NOT NULL,
  url text NOT NULL,
  started_at timestamp with time zone DEFAULT now() NOT NULL,
  seen_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT replicas_pkey PRIMARY KEY (name)
);

CREATE TABLE resource_quotas (
  uid uuid DEFAULT gen_random_uuid() NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  spec jsonb DEFAULT '{}'::jsonb NOT NULL,
  pending_jobs integer,
  cpu_limit_millis bigint,
  memory_limit_bytes bigint,
  rate_per_second double precision,
  rate_burst integer,
  tokens double precision,
  tokens_at timestamp with time zone,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  resource_version bigint DEFAULT 1 NOT NULL,
  watch_rv bigint,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  CONSTRAINT resource_quotas_pkey PRIMARY KEY (uid),
  CONSTRAINT resource_quotas_namespace_key UNIQUE (namespace),
  CONSTRAINT resource_quotas_cpu_limit_millis_check CHECK (cpu_limit_millis >= 0),
  CONSTRAINT resource_quotas_memory_limit_bytes_check CHECK (memory_limit_bytes >= 0),
  CONSTRAINT resource_quotas_pending_jobs_check CHECK (pending_jobs >= 0),
  CONSTRAINT resource_quotas_rate_burst_check CHECK (rate_burst >= 1),
  CONSTRAINT resource_quotas_rate_per_second_check CHECK (rate_per_second > 0::double precision)
);

CREATE TABLE revoked_tokens (
  jti text NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  revoked_at timestamp with time zone DEFAULT now() NOT NULL,
  revoked_by text,
  reason text,
  CONSTRAINT revoked_tokens_pkey PRIMARY KEY (jti),
  CONSTRAINT revoked_tokens_jti_check CHECK (jti <> ''::text)
);

CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE watch_events (
  id bigint DEFAULT nextval('watch_events_id_seq'::regclass) NOT NULL,
  xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
  kind text NOT NULL,
  namespace text,
  name text NOT NULL,
  type text NOT NULL,
  object jsonb,
  at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT watch_events_pkey PRIMARY KEY (id),
  CONSTRAINT watch_events_type_check CHECK (type = ANY (ARRAY['ADDED'::text, 'MODIFIED'::text, 'DELETED'::text]))
);

CREATE TABLE workflows (
  uid uuid NOT NULL,
  namespace text NOT NULL,
  name text NOT NULL,
  labels jsonb DEFAULT '{}'::jsonb NOT NULL,
  spec jsonb NOT NULL,
  phase text DEFAULT 'Running'::text NOT NULL,
  reason text,
  message text,
  cancelled boolean DEFAULT false NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  finished_at timestamp with time zone,
  resource_version bigint DEFAULT 1 NOT NULL,
  cronjob_uid uuid,
  watch_rv bigint,
  annotations jsonb DEFAULT '{}'::jsonb NOT NULL,
  CONSTRAINT workflows_pkey PRIMARY KEY (uid),
  CONSTRAINT workflows_namespace_name_key UNIQUE (namespace, name),
  CONSTRAINT workflows_phase_check CHECK (phase = ANY (ARRAY['Running'::text, 'Succeeded'::text, 'Failed'::text, 'Cancelled'::text]))
);

-- Sequences (of the bigserial columns)

CREATE SEQUENCE cluster_events_id_seq AS bigint OWNED BY cluster_events.id;

CREATE SEQUENCE cron_occurrences_id_seq AS bigint OWNED BY cron_occurrences.id;

CREATE SEQUENCE history_id_seq AS bigint OWNED BY history.id;

CREATE SEQUENCE watch_events_id_seq AS bigint OWNED BY watch_events.id;

-- Views

CREATE VIEW share_holders AS
 SELECT assignments.namespace,
    assignments.queue,
    assignments.cpu_millis,
    assignments.memory_bytes
   FROM assignments
  WHERE assignments.state = ANY (ARRAY['Assigned'::text, 'Running'::text])
UNION ALL
 SELECT assignments.namespace,
    assignments.queue,
    assignments.cpu_millis,
    assignments.memory_bytes
   FROM assignments
  WHERE assignments.holds_until IS NOT NULL AND assignments.holds_until > now() AND (assignments.state <> ALL (ARRAY['Assigned'::text, 'Running'::text]));

-- Indexes (those behind a primary key or unique constraint are in their table)

CREATE INDEX assignments_active_by_namespace ON assignments USING btree (namespace) WHERE (state = ANY (ARRAY['Assigned'::text, 'Running'::text]));

CREATE INDEX assignments_active_by_node ON assignments USING btree (node) WHERE (state = ANY (ARRAY['Assigned'::text, 'Running'::text]));

CREATE INDEX assignments_active_by_queue ON assignments USING btree (namespace, queue) WHERE (state = ANY (ARRAY['Assigned'::text, 'Running'::text]));

CREATE INDEX assignments_failed_by_job ON assignments USING btree (job_uid) WHERE (state = 'Failed'::text);

CREATE INDEX assignments_holding ON assignments USING btree (namespace, queue) WHERE (holds_until IS NOT NULL);

CREATE INDEX assignments_holding_by_job ON assignments USING btree (job_uid) WHERE (holds_until IS NOT NULL);

CREATE INDEX assignments_holding_by_namespace ON assignments USING btree (namespace) WHERE (holds_until IS NOT NULL);

CREATE UNIQUE INDEX one_active_assignment_per_job ON assignments USING btree (job_uid) WHERE (state = ANY (ARRAY['Assigned'::text, 'Running'::text]));

CREATE INDEX cron_occurrences_of ON cron_occurrences USING btree (cronjob_uid, scheduled_at);

CREATE INDEX cronjobs_due ON cronjobs USING btree (next_fire_at) WHERE (next_fire_at IS NOT NULL);

CREATE INDEX history_job ON history USING btree (job_uid, id);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys USING btree (created_at);

CREATE INDEX jobs_active_by_assignment ON jobs USING btree (assignment_id) WHERE (phase = ANY (ARRAY['Assigned'::text, 'Running'::text]));

CREATE INDEX jobs_dead ON jobs USING btree (namespace, finished_at) WHERE (phase = 'Dead'::text);

CREATE INDEX jobs_of_cronjob ON jobs USING btree (cronjob_uid, created_at) WHERE (cronjob_uid IS NOT NULL);

CREATE INDEX jobs_of_workflow ON jobs USING btree (workflow_uid) WHERE (workflow_uid IS NOT NULL);

CREATE INDEX jobs_pending_by_namespace ON jobs USING btree (namespace) WHERE (phase = 'Pending'::text);

CREATE INDEX jobs_pending_by_queue ON jobs USING btree (namespace, queue, lane, created_at, uid) WHERE ((phase = 'Pending'::text) AND (NOT waiting));

CREATE INDEX jobs_pending_due ON jobs USING btree (due_at, created_at) WHERE (phase = 'Pending'::text);

CREATE INDEX jobs_waiting ON jobs USING btree (namespace) WHERE waiting;

CREATE INDEX revoked_tokens_by_expiry ON revoked_tokens USING btree (expires_at);

CREATE INDEX watch_events_order ON watch_events USING btree (xid, id);

CREATE INDEX workflows_of_cronjob ON workflows USING btree (cronjob_uid, created_at) WHERE (cronjob_uid IS NOT NULL);

CREATE INDEX workflows_running ON workflows USING btree (created_at) WHERE (phase = 'Running'::text);

-- Functions

CREATE FUNCTION fencer_allocation_delta()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory,
                           allocated_jobs = n.allocated_jobs + d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs + d.unclaimed
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory, count(*) AS jobs,
                     count(*) FILTER (WHERE state = 'Assigned') AS unclaimed
              FROM inserted WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory,
                           allocated_jobs = n.allocated_jobs + d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs + d.unclaimed
        FROM (SELECT a.node,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.cpu_millis ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.cpu_millis ELSE 0 END) AS cpu,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.memory_bytes ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.memory_bytes ELSE 0 END) AS memory,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN 1 ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN 1 ELSE 0 END) AS jobs,
                     sum(CASE WHEN a.state = 'Assigned' THEN 1 ELSE 0 END
                       - CASE WHEN b.state = 'Assigned' THEN 1 ELSE 0 END) AS unclaimed
              FROM updated a JOIN previous b USING (id)
              GROUP BY a.node) d
        WHERE n.name = d.node AND (d.cpu <> 0 OR d.memory <> 0 OR d.jobs <> 0 OR d.unclaimed <> 0);
    ELSE
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis - d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes - d.memory,
                           allocated_jobs = n.allocated_jobs - d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs - d.unclaimed
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory, count(*) AS jobs,
                     count(*) FILTER (WHERE state = 'Assigned') AS unclaimed
              FROM removed WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    END IF;
    RETURN NULL;
END
$function$;

CREATE FUNCTION fencer_assignment_history_rows()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    SELECT 'assignment', n.job_uid, coalesce(j.namespace || '/' || j.name, '?'), n.id, n.node,
           coalesce(fencer_decision_epoch(), n.epoch), NULL, n.state, NULL, current_setting('fencer.replica', true)
    FROM (SELECT *, row_number() OVER () AS ord FROM new_rows) n LEFT JOIN jobs j ON j.uid = n.job_uid
    ORDER BY n.ord;
  ELSE
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica)
    SELECT 'assignment', n.job_uid, coalesce(j.namespace || '/' || j.name, '?'), n.id, n.node,
           fencer_decision_epoch(), o.state, n.state, NULL, current_setting('fencer.replica', true)
    FROM (SELECT *, row_number() OVER () AS ord FROM new_rows) n
    JOIN old_rows o ON o.id = n.id
    LEFT JOIN jobs j ON j.uid = n.job_uid
    WHERE n.state IS DISTINCT FROM o.state
    ORDER BY n.ord;
  END IF;
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_auth_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('fencer_auth', TG_TABLE_NAME);
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_cluster_event_watch()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO watch_events (kind, namespace, name, type) VALUES ('Event', NULL, NEW.object, 'ADDED');
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_decision_epoch()
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT nullif(current_setting('fencer.epoch', true), '')::bigint
$function$;

CREATE FUNCTION fencer_heartbeat(node text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    node_state text;
BEGIN
    INSERT INTO node_heartbeats (name, at)
    SELECT node, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = node)
    ON CONFLICT (name) DO UPDATE SET at = GREATEST(node_heartbeats.at, EXCLUDED.at);
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT state INTO node_state FROM nodes WHERE name = node;
    RETURN node_state;
END
$function$;

CREATE FUNCTION fencer_heartbeat(node text, node_incarnation uuid, node_generation bigint)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    node_state text;
BEGIN
    IF EXISTS (SELECT 1 FROM nodes WHERE name = node
               AND ((node_incarnation IS NOT NULL AND incarnation IS DISTINCT FROM node_incarnation)
                    OR (node_generation IS NOT NULL AND generation IS DISTINCT FROM node_generation))) THEN
        RETURN 'Superseded';
    END IF;
    INSERT INTO node_heartbeats (name, at)
    SELECT node, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = node)
    ON CONFLICT (name) DO UPDATE SET at = GREATEST(node_heartbeats.at, EXCLUDED.at);
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT state INTO node_state FROM nodes WHERE name = node;
    RETURN node_state;
END
$function$;

CREATE FUNCTION fencer_history_is_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'history is append-only';
END $function$;

CREATE FUNCTION fencer_job_history_rows()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor, needs, queue)
    SELECT 'job', n.uid, n.namespace || '/' || n.name, n.assignment_id, n.node, fencer_decision_epoch(), NULL, n.phase,
           n.reason, current_setting('fencer.replica', true), n.due_at, nullif(current_setting('fencer.actor', true), ''),
           CASE WHEN cardinality(n.needs) > 0 THEN n.needs END, n.namespace || '/' || n.queue
    FROM new_rows n ORDER BY n.watch_rv;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor)
    SELECT 'job', n.uid, n.namespace || '/' || n.name, n.assignment_id, n.node, fencer_decision_epoch(), o.phase, n.phase,
           n.reason, current_setting('fencer.replica', true), n.due_at, nullif(current_setting('fencer.actor', true), '')
    FROM new_rows n JOIN old_rows o ON o.uid = n.uid
    WHERE n.phase IS DISTINCT FROM o.phase
    ORDER BY n.watch_rv;
  ELSE
    INSERT INTO history (entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, due_at, actor)
    SELECT 'job', o.uid, o.namespace || '/' || o.name, o.assignment_id, o.node, fencer_decision_epoch(), o.phase, 'Deleted',
           'Deleted', current_setting('fencer.replica', true), o.due_at, nullif(current_setting('fencer.actor', true), '')
    FROM old_rows o;
  END IF;
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_lease_event()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO cluster_events (type, reason, object, epoch, replica, message)
  VALUES ('Normal', 'LeaderElected', 'replica/' || coalesce(NEW.holder, 'none'), NEW.epoch, NEW.holder,
          format('%s leads at epoch %s', NEW.holder, NEW.epoch)
          || CASE WHEN OLD.renewed_at IS NOT NULL AND OLD.epoch > 0
                  THEN format(' (no live leader for %s s since %s last renewed or released the lease)',
                              round(extract(epoch FROM NEW.renewed_at - OLD.renewed_at)::numeric, 3),
                              coalesce(OLD.holder, 'the previous holder'))
                  ELSE '' END);
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_node_event()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NEW.state = 'Dead' THEN
    INSERT INTO cluster_events (type, reason, object, epoch, message)
    VALUES ('Warning', 'NodeDied', 'node/' || NEW.name, (SELECT epoch FROM lease WHERE id = 1),
            format('node %s declared dead: %s', NEW.name, coalesce(NEW.dead_reason, 'no reason given')));
  ELSE
    INSERT INTO cluster_events (type, reason, object, epoch, message)
    VALUES ('Normal', 'NodeRegistered', 'node/' || NEW.name, NULL,
            format('node %s registered: %s CPU, %s GiB of memory%s', NEW.name, trim_scale(round(NEW.cpu_millis / 1000.0, 3)),
                   trim_scale(round(NEW.memory_bytes / 1073741824.0, 3)),
                   CASE WHEN TG_OP = 'UPDATE' THEN ' again after it was declared dead' ELSE '' END));
  END IF;
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_pending_notify()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', NEW.uid::text); END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.phase = 'Pending' THEN PERFORM pg_notify('fencer_pending', '-' || OLD.uid::text); END IF;
  ELSIF (OLD.phase = 'Pending') AND NEW.phase <> 'Pending' THEN
    PERFORM pg_notify('fencer_pending', '-' || NEW.uid::text);
  ELSIF NEW.phase = 'Pending'
    AND (OLD.phase <> 'Pending'
         OR (OLD.waiting, OLD.due_at, OLD.queue, OLD.lane, OLD.path_ms)
            IS DISTINCT FROM (NEW.waiting, NEW.due_at, NEW.queue, NEW.lane, NEW.path_ms)) THEN
    PERFORM pg_notify('fencer_pending', NEW.uid::text);
  END IF;
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_queue_limits()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  over record;
BEGIN
  IF current_setting('fencer.skip_limit_check', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM queues q
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
  ORDER BY q.namespace, q.name
  FOR UPDATE;
  SELECT q.namespace, q.name, u.n, u.cpu, u.memory, q.concurrency_limit, q.cpu_limit_millis, q.memory_limit_bytes INTO over
  FROM queues q
  CROSS JOIN LATERAL (
    SELECT count(*) AS n, coalesce(sum(h.cpu_millis), 0) AS cpu, coalesce(sum(h.memory_bytes), 0) AS memory
    FROM share_holders h
    WHERE h.namespace = q.namespace AND h.queue = q.name
  ) u
  WHERE (q.namespace, q.name) IN (SELECT namespace, queue FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (q.concurrency_limit IS NOT NULL OR q.cpu_limit_millis IS NOT NULL OR q.memory_limit_bytes IS NOT NULL)
    AND (u.n > q.concurrency_limit OR u.cpu > q.cpu_limit_millis OR u.memory > q.memory_limit_bytes)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'queue %/% would run % jobs holding % mCPU and % bytes, over its limits (% jobs, % mCPU, % bytes)',
      over.namespace, over.name, over.n, over.cpu, over.memory, over.concurrency_limit, over.cpu_limit_millis, over.memory_limit_bytes
      USING ERRCODE = 'check_violation', CONSTRAINT = 'queue_within_limits';
  END IF;

  PERFORM pg_advisory_xact_lock(fencer_quota_lock_key(ns))
  FROM (SELECT DISTINCT namespace AS ns FROM inserted WHERE state IN ('Assigned', 'Running') ORDER BY 1) n;
  SELECT r.namespace, u.cpu, u.memory, r.cpu_limit_millis, r.memory_limit_bytes INTO over
  FROM resource_quotas r
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(h.cpu_millis), 0) AS cpu, coalesce(sum(h.memory_bytes), 0) AS memory
    FROM share_holders h
    WHERE h.namespace = r.namespace
  ) u
  WHERE r.namespace IN (SELECT namespace FROM inserted WHERE state IN ('Assigned', 'Running'))
    AND (r.cpu_limit_millis IS NOT NULL OR r.memory_limit_bytes IS NOT NULL)
    AND (u.cpu > r.cpu_limit_millis OR u.memory > r.memory_limit_bytes)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'namespace % would hold % mCPU and % bytes, over its quota (% mCPU, % bytes)',
      over.namespace, over.cpu, over.memory, over.cpu_limit_millis, over.memory_limit_bytes
      USING ERRCODE = 'check_violation', CONSTRAINT = 'quota_within_limits';
  END IF;
  RETURN NULL;
END
$function$;

CREATE FUNCTION fencer_quota_lock_key(namespace text)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT hashtextextended('fencer.quota/' || namespace, 0)
$function$;

CREATE FUNCTION fencer_watch_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF TG_ARGV[1] = 'namespaced' THEN
      INSERT INTO watch_events (kind, namespace, name, type, object)
      SELECT TG_ARGV[0], o.namespace, o.name, 'DELETED',
             jsonb_build_object('uid', to_jsonb(o) ->> 'uid', 'labels', to_jsonb(o) -> 'labels')
      FROM old_rows o;
    ELSE
      INSERT INTO watch_events (kind, namespace, name, type, object)
      SELECT TG_ARGV[0], NULL, o.name, 'DELETED',
             jsonb_build_object('uid', to_jsonb(o) ->> 'uid', 'labels', to_jsonb(o) -> 'labels')
      FROM old_rows o;
    END IF;
  ELSIF TG_ARGV[1] = 'namespaced' THEN
    INSERT INTO watch_events (id, kind, namespace, name, type)
    SELECT n.watch_rv, TG_ARGV[0], n.namespace, n.name, CASE TG_OP WHEN 'INSERT' THEN 'ADDED' ELSE 'MODIFIED' END
    FROM new_rows n ORDER BY n.watch_rv;
  ELSE
    INSERT INTO watch_events (id, kind, namespace, name, type)
    SELECT n.watch_rv, TG_ARGV[0], NULL, n.name, CASE TG_OP WHEN 'INSERT' THEN 'ADDED' ELSE 'MODIFIED' END
    FROM new_rows n ORDER BY n.watch_rv;
  END IF;
  RETURN NULL;
END $function$;

CREATE FUNCTION fencer_watch_rv()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  NEW.watch_rv := nextval('watch_events_id_seq');
  RETURN NEW;
END $function$;

-- Triggers

CREATE TRIGGER assignments_allocate AFTER INSERT ON assignments REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();

CREATE TRIGGER assignments_deallocate AFTER DELETE ON assignments REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();

CREATE TRIGGER assignments_history_added AFTER INSERT ON assignments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_assignment_history_rows();

CREATE TRIGGER assignments_history_changed AFTER UPDATE ON assignments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_assignment_history_rows();

CREATE TRIGGER assignments_reallocate AFTER UPDATE ON assignments REFERENCING OLD TABLE AS previous NEW TABLE AS updated FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();

CREATE TRIGGER assignments_within_limits AFTER INSERT ON assignments REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION fencer_queue_limits();

CREATE TRIGGER cluster_events_watch AFTER INSERT ON cluster_events FOR EACH ROW EXECUTE FUNCTION fencer_cluster_event_watch();

CREATE TRIGGER cronjobs_watch_added AFTER INSERT ON cronjobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('CronJob', 'namespaced');

CREATE TRIGGER cronjobs_watch_deleted AFTER DELETE ON cronjobs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('CronJob', 'namespaced');

CREATE TRIGGER cronjobs_watch_modified AFTER UPDATE ON cronjobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('CronJob', 'namespaced');

CREATE TRIGGER cronjobs_watch_rv BEFORE INSERT OR UPDATE ON cronjobs FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();

CREATE TRIGGER history_append_only BEFORE DELETE OR UPDATE ON history FOR EACH ROW EXECUTE FUNCTION fencer_history_is_append_only();

CREATE TRIGGER jobs_history_added AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();

CREATE TRIGGER jobs_history_changed AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();

CREATE TRIGGER jobs_history_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_job_history_rows();

CREATE TRIGGER jobs_pending_notify AFTER INSERT OR DELETE OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION fencer_pending_notify();

CREATE TRIGGER jobs_watch_added AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Job', 'namespaced');

CREATE TRIGGER jobs_watch_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Job', 'namespaced');

CREATE TRIGGER jobs_watch_modified AFTER UPDATE ON jobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Job', 'namespaced');

CREATE TRIGGER jobs_watch_rv BEFORE INSERT OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();

CREATE TRIGGER lease_event AFTER UPDATE OF epoch ON lease FOR EACH ROW WHEN (new.epoch <> old.epoch) EXECUTE FUNCTION fencer_lease_event();

CREATE TRIGGER node_registered_event AFTER INSERT ON nodes FOR EACH ROW EXECUTE FUNCTION fencer_node_event();

CREATE TRIGGER node_state_event AFTER UPDATE OF state ON nodes FOR EACH ROW WHEN (new.state IS DISTINCT FROM old.state) EXECUTE FUNCTION fencer_node_event();

CREATE TRIGGER nodes_watch_added AFTER INSERT ON nodes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Node', 'cluster');

CREATE TRIGGER nodes_watch_deleted AFTER DELETE ON nodes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Node', 'cluster');

CREATE TRIGGER nodes_watch_modified AFTER UPDATE ON nodes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Node', 'cluster');

CREATE TRIGGER nodes_watch_rv BEFORE INSERT OR UPDATE ON nodes FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();

CREATE TRIGGER queues_watch_added AFTER INSERT ON queues REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Queue', 'namespaced');

CREATE TRIGGER queues_watch_deleted AFTER DELETE ON queues REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Queue', 'namespaced');

CREATE TRIGGER queues_watch_modified AFTER UPDATE ON queues REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Queue', 'namespaced');

CREATE TRIGGER queues_watch_rv BEFORE INSERT OR UPDATE ON queues FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();

CREATE TRIGGER rbac_bindings_changed AFTER INSERT OR DELETE OR UPDATE ON rbac_bindings FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();

CREATE TRIGGER rbac_roles_changed AFTER INSERT OR DELETE OR UPDATE ON rbac_roles FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();

CREATE TRIGGER resource_quotas_watch_added AFTER INSERT ON resource_quotas REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('ResourceQuota', 'namespaced');

CREATE TRIGGER resource_quotas_watch_deleted AFTER DELETE ON resource_quotas REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('ResourceQuota', 'namespaced');

CREATE TRIGGER resource_quotas_watch_modified AFTER UPDATE ON resource_quotas REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('ResourceQuota', 'namespaced');

CREATE TRIGGER resource_quotas_watch_rv BEFORE INSERT OR UPDATE ON resource_quotas FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();

CREATE TRIGGER revoked_tokens_changed AFTER INSERT OR DELETE OR UPDATE ON revoked_tokens FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();

CREATE TRIGGER workflows_watch_added AFTER INSERT ON workflows REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Workflow', 'namespaced');

CREATE TRIGGER workflows_watch_deleted AFTER DELETE ON workflows REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Workflow', 'namespaced');

CREATE TRIGGER workflows_watch_modified AFTER UPDATE ON workflows REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fencer_watch_events('Workflow', 'namespaced');

CREATE TRIGGER workflows_watch_rv BEFORE INSERT OR UPDATE ON workflows FOR EACH ROW EXECUTE FUNCTION fencer_watch_rv();
