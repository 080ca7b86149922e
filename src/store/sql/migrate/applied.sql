-- migrate/applied: the versions of the migrations applied so far. No parameters.
SELECT version FROM schema_migrations
