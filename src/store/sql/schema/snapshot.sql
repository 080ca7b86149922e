-- schema/snapshot: the schema of the current database (schema public) as DDL, one row per object,
-- in a fixed order: what docs/schema.sql is written from (src/store/schema.ts). No parameters.
-- section: tables, sequences, views, indexes, functions or triggers; name orders within one.
-- Names are left unqualified (everything is in public). Constraints sit in their table; NOT NULL
-- shows on its column (PostgreSQL 18 also keeps it as a constraint of its own); indexes that
-- back a primary key or unique constraint are left out.
WITH tables AS (
  SELECT c.oid, c.relname FROM pg_class c
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
),
columns AS (
  SELECT a.attrelid AS oid,
         string_agg(
           format('  %I %s', a.attname, format_type(a.atttypid, a.atttypmod))
           || CASE WHEN a.attgenerated = 's' THEN format(' GENERATED ALWAYS AS (%s) STORED', pg_get_expr(d.adbin, d.adrelid))
                   WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                   ELSE '' END
           || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
           E',\n' ORDER BY a.attnum) AS text
  FROM pg_attribute a
  JOIN tables t ON t.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE a.attnum > 0 AND NOT a.attisdropped
  GROUP BY a.attrelid
),
constraints AS (
  SELECT k.conrelid AS oid,
         string_agg(format('  CONSTRAINT %I %s', k.conname, pg_get_constraintdef(k.oid, true)), E',\n'
                    ORDER BY CASE k.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'f' THEN 2 ELSE 3 END, k.conname) AS text
  FROM pg_constraint k
  JOIN tables t ON t.oid = k.conrelid
  WHERE k.contype <> 'n'
  GROUP BY k.conrelid
)
SELECT section, ddl FROM (
SELECT 1 AS section_order, 'tables' AS section, t.relname::text AS name,
       format(E'CREATE TABLE %I (\n%s\n);', t.relname, concat_ws(E',\n', c.text, k.text)) AS ddl
FROM tables t
JOIN columns c ON c.oid = t.oid
LEFT JOIN constraints k ON k.oid = t.oid
UNION ALL
SELECT 2, 'sequences', s.relname::text,
       format('CREATE SEQUENCE %I AS %s', s.relname, format_type(q.seqtypid, NULL))
       || coalesce(format(' OWNED BY %I.%I', owner.relname, a.attname), '') || ';'
FROM pg_class s
JOIN pg_sequence q ON q.seqrelid = s.oid
LEFT JOIN pg_depend dep ON dep.classid = 'pg_class'::regclass AND dep.objid = s.oid
  AND dep.refclassid = 'pg_class'::regclass AND dep.deptype IN ('a', 'i')
LEFT JOIN pg_class owner ON owner.oid = dep.refobjid
LEFT JOIN pg_attribute a ON a.attrelid = owner.oid AND a.attnum = dep.refobjsubid
WHERE s.relnamespace = 'public'::regnamespace AND s.relkind = 'S'
UNION ALL
SELECT 3, 'views', v.relname::text, format(E'CREATE VIEW %I AS\n%s', v.relname, rtrim(pg_get_viewdef(v.oid, true), ';')) || ';'
FROM pg_class v
WHERE v.relnamespace = 'public'::regnamespace AND v.relkind IN ('v', 'm')
UNION ALL
SELECT 4, 'indexes', t.relname || '.' || ic.relname, replace(pg_get_indexdef(i.indexrelid), ' ON public.', ' ON ') || ';'
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_class t ON t.oid = i.indrelid
WHERE t.relnamespace = 'public'::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))
UNION ALL
SELECT 5, 'functions', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
       regexp_replace(rtrim(pg_get_functiondef(p.oid), E'\n'), '^CREATE OR REPLACE FUNCTION public\.', 'CREATE FUNCTION ') || ';'
FROM pg_proc p
WHERE p.pronamespace = 'public'::regnamespace
UNION ALL
SELECT 6, 'triggers', t.relname || '.' || g.tgname, pg_get_triggerdef(g.oid, true) || ';'
FROM pg_trigger g
JOIN pg_class t ON t.oid = g.tgrelid
WHERE t.relnamespace = 'public'::regnamespace AND NOT g.tgisinternal
) objects
ORDER BY section_order, name COLLATE "C"
