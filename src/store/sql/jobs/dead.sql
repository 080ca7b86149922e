-- jobs/dead: dead letters of a namespace (all when $1 is NULL), oldest death first. $1 namespace.
SELECT * FROM jobs WHERE phase = 'Dead' AND ($1::text IS NULL OR namespace = $1) ORDER BY finished_at, name
