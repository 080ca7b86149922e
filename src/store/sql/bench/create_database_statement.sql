-- bench/create_database_statement: the statement that creates a database named $1 (text), for the
-- caller to run on a connection to another database of the server, outside a transaction.
-- CREATE DATABASE takes no parameters: format() quotes the name as an identifier.
SELECT format('CREATE DATABASE %I', $1::text) AS statement
