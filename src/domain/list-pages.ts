// Lists served in pages, as the Kubernetes list API serves them: a request names how many objects
// it wants at most (`limit`) and where the previous page ended (`continue`, the opaque token that
// page's `metadata.continue` carried); an answer without `metadata.continue` is the last page. The
// server (src/api/list-page.ts) and the clients that need a whole list (the CLI, the dashboard)
// share these names. Pure: the dashboard loads this module as it is.

/** The most objects a page holds: a larger `limit` is served this many. */
export const MOST_PER_PAGE = 1000;

/** The objects a page of an /api/v1 or Kubernetes list holds when the request names no `limit`. */
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

/** Which page a server reads: at most `limit` objects, those after `after` (from the first when null). */
export interface PageRequest {
  after: PageKey | null;
  limit: number;
}

/** A page as the store reads it: its rows and, when more follow, the key the next page starts after. */
export interface RowsPage<T> {
  rows: T[];
  next: PageKey | null;
}

/**
 * The page in `rows`, read with a limit one more than the page's: that extra row, when it came,
 * says another page follows (and is left for it).
 */
export function cutPage<T>(rows: T[], limit: number, keyOf: (row: T) => PageKey): RowsPage<T> {
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: keyOf(page.at(-1)!) };
}
