-- bench/drop_database_statement: the statement that drops the database named $1 (text), sessions
-- and all, for the caller to run on a connection to another database of the server, outside a
-- transaction. DROP DATABASE takes no parameters: format() quotes the name as an identifier.
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', $1::text) AS statement
