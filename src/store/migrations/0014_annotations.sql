-- 0014_annotations: metadata.annotations of the objects clients write, kept as given (kubectl's
-- last-applied configuration lives there: client-side apply computes its patches from it).
ALTER TABLE jobs ADD COLUMN annotations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE workflows ADD COLUMN annotations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE cronjobs ADD COLUMN annotations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE queues ADD COLUMN annotations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE resource_quotas ADD COLUMN annotations jsonb NOT NULL DEFAULT '{}';
