// docs/schema.sql is the schema the migrations build, for reading: this keeps it current.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { projectRoot } from '../../src/paths.js';
import { schemaSnapshot } from '../../src/store/schema.js';

let t: TestDatabase;
afterAll(() => t?.close());

it('docs/schema.sql is what the migrations build', async () => {
  t = await freshDatabase('schema');
  const written = readFileSync(join(projectRoot(), 'docs/schema.sql'), 'utf8');
  expect(await schemaSnapshot(t.db), 'docs/schema.sql is not current: run `npm run schema` and commit it').toBe(
    written,
  );
});
