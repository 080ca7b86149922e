// The schema the migrations build, written out for reading (docs/schema.sql): the catalog read by
// one query and printed in a fixed order, so the same migrations always give the same text.
// `npm run schema` writes the file; test/integration/schema.test.ts fails when it is not current.
import type { Db } from './db.js';
import { migrationFiles } from './migrate.js';
import { sql } from './sql.js';

const SECTION_TITLES: Record<string, string> = {
  tables: 'Tables',
  sequences: 'Sequences (of the bigserial columns)',
  views: 'Views',
  indexes: 'Indexes (those behind a primary key or unique constraint are in their table)',
  functions: 'Functions',
  triggers: 'Triggers',
};

/** docs/schema.sql's text for the database `db` is connected to (migrated to the latest). */
export async function schemaSnapshot(db: Db): Promise<string> {
  const { rows } = await db.query<{ section: string; ddl: string }>(sql('schema/snapshot'));
  const migrations = migrationFiles();
  const lines = [
    `-- fencer's database schema as src/store/migrations/ leave it (${migrations[0]?.name} … ${migrations.at(-1)?.name}),`,
    '-- for reading: the migrations are what builds it. Generated, do not edit: `npm run schema` writes',
    '-- it again, and test/integration/schema.test.ts fails when it is not current.',
  ];
  let section: string | undefined;
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      lines.push('', `-- ${SECTION_TITLES[section] ?? section}`);
    }
    lines.push('', row.ddl);
  }
  return `${lines.join('\n')}\n`;
}
