-- migrate/record: a migration applied, written in the migration's own transaction. $1 version,
-- $2 file name.
INSERT INTO schema_migrations (version, name) VALUES ($1, $2)
