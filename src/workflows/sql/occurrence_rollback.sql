-- workflows/occurrence_rollback: undoes a CronJob occurrence's workflow whose name (or a job's) was
-- taken (workflows/occurrence_savepoint). No parameters.
ROLLBACK TO SAVEPOINT occurrence_workflow
