// The namespaces, as Kubernetes clients list them: every namespace something lives in.
import { cutPage, type PageRequest, type RowsPage } from '../domain/list-pages.js';
import { pageParameters } from './pages.js';
import type { Db } from './db.js';
import { sql } from './sql.js';

/** A page of the namespaces something lives in, and "default" (a namespace's key: no namespace, its name). */
export async function listNamespacePage(db: Db, page: PageRequest): Promise<RowsPage<string>> {
  const [, after, limit] = pageParameters(page);
  const rows = (await db.query<{ namespace: string }>(sql('namespaces/list'), [after, limit])).rows;
  return cutPage(
    rows.map((r) => r.namespace),
    page.limit,
    (name) => ({ namespace: '', name }),
  );
}
