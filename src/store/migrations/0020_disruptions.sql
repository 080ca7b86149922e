-- 0020_disruptions: lag is not loss. A run its node lost (the node died, fenced itself, was
-- drained or shut down) uses no attempt; it is counted here, and the job is Dead only at
-- spec.maxDisruptions (read from the stored spec, where the default is filled in; 10 for jobs
-- stored before it).
ALTER TABLE jobs ADD COLUMN disruptions int NOT NULL DEFAULT 0;
