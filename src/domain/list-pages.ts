// Lists served in pages, as the Kubernetes list API serves them: a request names how many objects
// it wants at most (`limit`) and where the previous page ended (`continue`, the opaque token that
// page's `metadata.continue` carried); an answer without `metadata.continue` is the last page. The
// server (src/api/list-page.ts) and the clients that need a whole list (the CLI, the dashboard)
// share these names. Pure: the dashboard loads this module as it is.

/** The most objects a page holds: a larger `limit` is served this many. */
export const MOST_PER_PAGE = 1000;

/** The objects a page of GET /api/v1/jobs holds when the request names no `limit`. */
export const DEFAULT_PER_PAGE = 500;

/** Where a page ended: its last object, which the next page starts after. */
export interface PageKey {
  namespace: string;
  name: string;
}

/** A list answer, as far as paging goes. */
export interface Page<T> {
  items: T[];
  metadata?: { continue?: string };
}

/**
 * Every object of a list served in pages: `path` with the largest limit, then with each answer's
 * continue token until one has none. Pages are not a snapshot: an object that exists throughout
 * comes exactly once; one created or deleted meanwhile may come or not, never twice.
 */
export async function readAllPages<T>(path: string, get: (path: string) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const first = `${path}${path.includes('?') ? '&' : '?'}limit=${MOST_PER_PAGE}`;
  for (let next = first; ;) {
    const page = await get(next);
    for (const item of page.items) items.push(item);
    const token = page.metadata?.continue;
    if (!token) return items;
    next = `${first}&continue=${encodeURIComponent(token)}`;
  }
}
