// A list's query as Kubernetes clients send it: labelSelector (k=v, k==v, k!=v, k, !k, k in (a,b),
// k notin (a,b)), fieldSelector (metadata.name, metadata.namespace, status.phase and any other
// dotted path, with = == !=), and limit/continue pagination (the continue token is the last
// name served: a list is sorted by namespace and name, so the next page starts after it; the
// token is list-page.ts's, as when the store pages a Jobs list).
import { HttpError } from '../../errors/http-error.js';
import { continueToken, kubeLimitOf, parseContinue } from '../list-page.js';
import { MOST_PER_PAGE, type PageKey, type PageRequest, type RowsPage } from '../../domain/list-pages.js';
import { evaluateJsonPath, type KubeObject } from './table.js';

/** The query parameters of a list (this module reads them). */
export interface ObjectQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: string;
  continue?: string;
  includeObject?: string;
  watch?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: string;
  timeoutSeconds?: string;
}

type Requirement = (labels: Record<string, string>) => boolean;

export function parseLabelSelector(selector: string): Requirement[] {
  const parts = selector.match(/(?:[^,(]|\([^)]*\))+/g) ?? [];
  return parts.map((raw) => {
    const part = raw.trim();
    let m = /^([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (m) {
      const values = new Set(m[3]!.split(',').map((v) => v.trim()));
      const [key, op] = [m[1]!, m[2]!];
      return (labels) =>
        op === 'in' ? key in labels && values.has(labels[key]!) : !(key in labels) || !values.has(labels[key]!);
    }
    m = /^([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)$/.exec(part);
    if (m) {
      const [key, op, value] = [m[1]!, m[2]!, m[3]!];
      return (labels) => (op === '!=' ? labels[key] !== value : labels[key] === value);
    }
    m = /^(!?)([A-Za-z0-9_./-]+)$/.exec(part);
    if (m) {
      const [not, key] = [m[1] === '!', m[2]!];
      return (labels) => key in labels !== not;
    }
    throw new HttpError(400, `unable to parse requirement "${part}" of labelSelector "${selector}"`);
  });
}

export function parseFieldSelector(selector: string): Array<(object: KubeObject) => boolean> {
  return selector
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((raw) => {
      const m = /^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
      if (!m) throw new HttpError(400, `invalid field selector "${raw}": want field=value or field!=value`);
      const [field, op, value] = [m[1]!, m[2]!, m[3]!];
      return (object) => {
        const found = evaluateJsonPath(object, `.${field}`);
        const text = found === undefined || found === null ? '' : String(found);
        return op === '!=' ? text !== value : text === value;
      };
    });
}

/** Whether an object is one the query's label and field selectors pick (400 for a selector that does not parse). */
export function selectorOf(query: ObjectQuery): (object: KubeObject) => boolean {
  const labels = query.labelSelector ? parseLabelSelector(query.labelSelector) : [];
  const fields = query.fieldSelector ? parseFieldSelector(query.fieldSelector) : [];
  return (o) =>
    labels.every((r) => r((o.metadata?.labels ?? {}) as Record<string, string>)) && fields.every((f) => f(o));
}

/**
 * The most objects one selected list reads from the store for a request. Past it the page ends
 * early (perhaps empty) with a continue token, as a Kubernetes client pages on: what one request
 * costs stays bounded however few objects the selector picks.
 */
export const MOST_SCANNED_PER_PAGE = 10 * MOST_PER_PAGE;

/**
 * A page of the objects the query's selectors pick, read from the store in chunks (keyset on
 * namespace and name), each filtered as it comes, stopping at `limit` picked or
 * MOST_SCANNED_PER_PAGE read; the continue token names the last object read. `namespace`: the
 * list's, which a continue token must be of.
 */
export async function scanSelected(
  read: (page: PageRequest) => Promise<RowsPage<KubeObject>>,
  query: ObjectQuery,
  namespace: string | null,
): Promise<{ items: KubeObject[]; continue?: string }> {
  const picks = selectorOf(query);
  const limit = kubeLimitOf(query.limit);
  let after = query.continue ? parseContinue(query.continue, namespace) : null;
  const items: KubeObject[] = [];
  for (let scanned = 0; ;) {
    const chunk = await read({ after, limit: MOST_PER_PAGE });
    for (const [i, object] of chunk.rows.entries()) {
      if (!picks(object)) continue;
      items.push(object);
      if (items.length === limit) {
        const more = i < chunk.rows.length - 1 || chunk.next !== null;
        return more ? { items, continue: continueToken(keyOfObject(object)) } : { items };
      }
    }
    scanned += chunk.rows.length;
    if (chunk.next === null) return { items };
    after = chunk.next;
    if (scanned >= MOST_SCANNED_PER_PAGE) return { items, continue: continueToken(after) };
  }
}

function keyOfObject(object: KubeObject): PageKey {
  return { namespace: String(object.metadata?.namespace ?? ''), name: object.metadata?.name ?? '' };
}

/** The objects the query selects, a page of them with a limit. `namespace`: the list's, which a continue token must be of. */
export function selectObjects<T extends KubeObject>(
  objects: T[],
  query: ObjectQuery,
  namespace: string | null = null,
): { items: T[]; continue?: string; remaining?: number } {
  const picks = selectorOf(query);
  const key = (o: T) => `${String(o.metadata?.namespace ?? '')}/${o.metadata?.name ?? ''}`;
  let items = objects.filter(picks).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if (query.continue) {
    const from = parseContinue(query.continue, namespace);
    const after = `${from.namespace}/${from.name}`;
    items = items.filter((o) => key(o) > after);
  }
  const limit = kubeLimitOf(query.limit);
  if (limit === 0 || items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page.at(-1)!;
  return {
    items: page,
    continue: continueToken({ namespace: String(last.metadata?.namespace ?? ''), name: last.metadata?.name ?? '' }),
    remaining: items.length - limit,
  };
}
