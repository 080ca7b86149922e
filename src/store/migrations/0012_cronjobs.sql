-- 0012_cronjobs: recurring jobs (kind CronJob) and the record of every occurrence.

-- next_fire_at is the cursor: the next occurrence not yet handled, in UTC, computed in the
-- CronJob's zone. Only the cron controller advances it (from the value it read, at the version
-- it read); every edit bumps version, so a fire decided before an edit changes nothing.
CREATE TABLE cronjobs (
  uid                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  namespace                 text NOT NULL,
  name                      text NOT NULL,
  labels                    jsonb NOT NULL DEFAULT '{}',
  spec                      jsonb NOT NULL,
  schedule                  text NOT NULL,
  time_zone                 text NOT NULL,
  suspend                   boolean NOT NULL DEFAULT false,
  concurrency_policy        text NOT NULL CHECK (concurrency_policy IN ('Allow', 'Forbid', 'Replace')),
  catch_up                  text NOT NULL CHECK (catch_up IN ('latest', 'all', 'none')),
  starting_deadline_seconds bigint CHECK (starting_deadline_seconds >= 0),
  successful_history_limit  int NOT NULL CHECK (successful_history_limit >= 0),
  failed_history_limit      int NOT NULL CHECK (failed_history_limit >= 0),
  next_fire_at              timestamptz,
  version                   bigint NOT NULL DEFAULT 1,
  -- The last occurrence handled (fired or skipped): an edit never moves the cursor to or before it.
  last_handled_at           timestamptz,
  last_schedule_time        timestamptz,
  last_successful_time      timestamptz,
  -- Why the cron controller could not fire (e.g. QuotaExceeded), null when it could.
  blocked_reason            text,
  blocked_message           text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  resource_version          bigint NOT NULL DEFAULT 1,
  UNIQUE (namespace, name)
);
CREATE INDEX cronjobs_due ON cronjobs (next_fire_at) WHERE next_fire_at IS NOT NULL;

-- The CronJob that made a job (its occurrence's run), or a workflow (and its jobs).
ALTER TABLE jobs ADD COLUMN cronjob_uid uuid;
ALTER TABLE workflows ADD COLUMN cronjob_uid uuid;
CREATE INDEX workflows_of_cronjob ON workflows (cronjob_uid, created_at) WHERE cronjob_uid IS NOT NULL;
CREATE INDEX jobs_of_cronjob ON jobs (cronjob_uid, created_at) WHERE cronjob_uid IS NOT NULL;

-- Append-only, like history: one row per occurrence handled, written by the statement that
-- advances the cursor. No unique key on purpose: the checker proves "each occurrence once" from
-- these rows, so the schema must not be what hides a second one.
CREATE TABLE cron_occurrences (
  id            bigserial PRIMARY KEY,
  cronjob_uid   uuid NOT NULL,
  cronjob       text NOT NULL,
  version       bigint NOT NULL,
  -- The schedule the occurrence belongs to: the checker finds a missed one between two records.
  schedule      text NOT NULL,
  time_zone     text NOT NULL,
  -- Forbid and Replace: the checker proves from the nodes' logs that its runs never overlapped.
  concurrency_policy text NOT NULL,
  scheduled_at  timestamptz NOT NULL,
  outcome       text NOT NULL CHECK (outcome IN ('Fired', 'Skipped')),
  reason        text,
  job_uid       uuid,
  job           text,
  epoch         bigint,
  replica       text,
  at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX cron_occurrences_of ON cron_occurrences (cronjob_uid, scheduled_at);

-- Runs that hold a share after their cancel, by job: Forbid and Replace count a CronJob's Job that
-- its node may still be running (cronjobs/busy.sql), and pruning leaves it until then.
CREATE INDEX assignments_holding_by_job ON assignments (job_uid) WHERE holds_until IS NOT NULL;
