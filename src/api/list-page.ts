// A list's `limit` and `continue` as the server reads them. A page is in (namespace, name) order
// and its continue token names its last object (base64url of "namespace/name", the token kubectl
// has been round-tripping): the next page starts right after that key, whatever was created or
// deleted meanwhile (keyset pagination: no offset to shift, no row to go missing). The token is
// checked, not signed: one made by hand can only start a list where the same list could anyway.
import { HttpError } from '../errors/http-error.js';
import {
  DEFAULT_PER_PAGE,
  MOST_PER_PAGE,
  type PageKey,
  type PageRequest,
  type RowsPage,
} from '../domain/list-pages.js';
import { API_VERSION } from '../domain/resources.js';
import { isDns1123Label } from '../domain/names.js';

/** The longest token a key of a namespace (63) and a name (253) encodes to, with room. */
const LONGEST_TOKEN = 512;

/** An /api/v1 list's `limit`: a positive whole number, served at most MOST_PER_PAGE; none, DEFAULT_PER_PAGE. */
export function pageLimitOf(limit: unknown): number {
  if (limit === undefined) return DEFAULT_PER_PAGE;
  const text = String(limit);
  if (!/^[1-9][0-9]*$/.test(text))
    throw new HttpError(
      400,
      `limit: ${JSON.stringify(text)} is not a positive whole number (a page holds at most ${MOST_PER_PAGE})`,
    );
  return Math.min(Number(text), MOST_PER_PAGE);
}

/**
 * A Kubernetes list's `limit`, at most MOST_PER_PAGE. None or 0, which kube-apiserver takes for
 * every object, is a page of DEFAULT_PER_PAGE here, with metadata.continue when more follow: no
 * list is unbounded (kubectl sends limit=500 and follows continue on its own).
 */
export function kubeLimitOf(limit: unknown): number {
  if (limit === undefined || limit === '') return DEFAULT_PER_PAGE;
  const text = String(limit);
  if (!/^[0-9]+$/.test(text))
    throw new HttpError(
      400,
      `limit: ${JSON.stringify(text)} is not a whole number (a page holds at most ${MOST_PER_PAGE})`,
    );
  return Math.min(Number(text), MOST_PER_PAGE) || DEFAULT_PER_PAGE;
}

export function continueToken(key: PageKey): string {
  return Buffer.from(`${key.namespace}/${key.name}`, 'utf8').toString('base64url');
}

/**
 * The key a continue token names; 400 for one this server did not give: not base64url, not
 * "namespace/name", or (for a list of one namespace) a page of another namespace's list.
 */
export function parseContinue(token: unknown, namespace: string | null): PageKey {
  const text = String(token);
  const shown = JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
  const refuse = (why: string) =>
    new HttpError(
      400,
      `continue: ${shown} is not a continue token of this list (${why}); send the metadata.continue of the previous page as it came`,
    );
  if (text.length > LONGEST_TOKEN) throw refuse('longer than any this server gives');
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw refuse('not base64url');
  const decoded = Buffer.from(text, 'base64url').toString('utf8');
  // Stray bits and bytes that are not UTF-8 do not survive the round trip.
  if (Buffer.from(decoded, 'utf8').toString('base64url') !== text) throw refuse('not base64url of UTF-8 text');
  const slash = decoded.indexOf('/');
  const key = { namespace: decoded.slice(0, slash), name: decoded.slice(slash + 1) };
  if (slash < 0 || !/^[\x21-\x7e]+$/.test(key.name) || key.name.includes('/'))
    throw refuse('it names no namespace/name');
  if (key.namespace !== '' && !isDns1123Label(key.namespace)) throw refuse(`"${key.namespace}" is not a namespace`);
  if (namespace !== null && key.namespace !== namespace)
    throw refuse(`it continues a list of namespace "${key.namespace}", not of "${namespace}"`);
  return key;
}

/** The paging part of an /api/v1 list's query. */
export interface PageQuery {
  limit?: string;
  continue?: string;
}

/** The page an /api/v1 list asks for; `namespace`: the list's, which a continue token must be of. */
export function pageRequestOf(query: PageQuery, namespace: string | null): PageRequest {
  return {
    limit: pageLimitOf(query.limit),
    after: query.continue ? parseContinue(query.continue, namespace) : null,
  };
}

/** A list answer's metadata: the continue token when another page follows. */
export function listMetadata(next: PageKey | null): { continue?: string } {
  return next ? { continue: continueToken(next) } : {};
}

/**
 * An /api/v1 list of `kind` answered a page at a time: `read` takes the list's namespace (null:
 * every one) and the page asked for.
 */
export function pagedList<Row, Item>(
  kind: string,
  read: (namespace: string | null, page: PageRequest) => Promise<RowsPage<Row>>,
  present: (row: Row) => Item,
) {
  return async (namespace: string | null, query: PageQuery) => {
    const page = await read(namespace, pageRequestOf(query, namespace));
    return {
      apiVersion: API_VERSION,
      kind,
      metadata: listMetadata(page.next),
      items: page.rows.map((row) => present(row)),
    };
  };
}
