// The parameters every paged list statement ends with: the key of the previous page's last row
// (keyset pagination over the (namespace, name) index) and how many rows to read, one more than
// the page holds (cutPage keeps the extra one as the sign that another page follows).
import type { PageKey, PageRequest } from '../domain/list-pages.js';

/** `after`'s namespace and name and the limit plus one; all NULL for every row (no page). */
export function pageParameters(page: PageRequest | null): [string | null, string | null, number | null] {
  if (page === null) return [null, null, null];
  return [page.after?.namespace ?? null, page.after?.name ?? null, page.limit + 1];
}

/** A namespaced row's page key. */
export function keyOf(row: { namespace: string; name: string }): PageKey {
  return { namespace: row.namespace, name: row.name };
}
