-- assignments/get: one assignment. $1 id.
SELECT * FROM assignments WHERE id = $1
