-- jobs/notify_outcomes: tell the leader, on commit, that it has outcomes to decide on: a run
-- ended other than by success (the retry rule), or a job of a workflow ended (its workflow may
-- move on). src/store/channels.ts, outcomes. No parameters.
SELECT pg_notify('fencer_outcomes', '')
