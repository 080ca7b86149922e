-- workflows/occurrence_savepoint: before a CronJob occurrence's workflow goes in, so that a name
-- already taken (the workflow's or a job's) undoes just it. No parameters.
SAVEPOINT occurrence_workflow
