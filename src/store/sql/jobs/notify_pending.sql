-- jobs/notify_pending: wake the placement controller when this transaction commits. No parameters.
SELECT pg_notify('fencer_jobs', '')
