// Lists in pages, the pure parts: a request's limit, the continue token (what it names, what is
// refused), a client reading every page, and a selected list read in chunks (scanSelected, over a
// sorted array standing in for the store's keyset reads).
import { describe, expect, it } from 'vitest';
import { continueToken, kubeLimitOf, pageLimitOf, parseContinue } from '../../src/api/list-page.js';
import { DEFAULT_PER_PAGE, MOST_PER_PAGE, readAllPages, type Page } from '../../src/domain/list-pages.js';
import { HttpError } from '../../src/errors/http-error.js';
import { MOST_SCANNED_PER_PAGE, scanSelected } from '../../src/api/kube/selectors.js';
import type { KubeObject } from '../../src/api/kube/table.js';
import type { PageRequest, RowsPage } from '../../src/domain/list-pages.js';

const token = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('limit', () => {
  it.each([
    [undefined, DEFAULT_PER_PAGE],
    ['1', 1],
    ['999', 999],
    ['1000', MOST_PER_PAGE],
    ['1001', MOST_PER_PAGE],
    ['99999999999999999999999', MOST_PER_PAGE],
  ])('of GET /api/v1/jobs: %j is %i', (limit, served) => expect(pageLimitOf(limit)).toBe(served));

  it.each([[''], ['0'], ['-1'], ['1.5'], ['1e3'], [' 5'], ['0x10'], ['ten'], [['1', '2']]])(
    'of GET /api/v1/jobs: %j is refused',
    (limit: string | string[]) => {
      expect(() => pageLimitOf(limit)).toThrow(
        new HttpError(
          400,
          `limit: ${JSON.stringify(String(limit))} is not a positive whole number (a page holds at most ${MOST_PER_PAGE})`,
        ),
      );
    },
  );

  it.each([
    [undefined, DEFAULT_PER_PAGE],
    ['', DEFAULT_PER_PAGE],
    ['0', DEFAULT_PER_PAGE],
    ['500', 500],
    ['5000', MOST_PER_PAGE],
  ])('of a Kubernetes list: %j is %i (none or 0: a default page, never every object)', (limit, served) =>
    expect(kubeLimitOf(limit)).toBe(served),
  );

  it.each(['-1', 'all', '2.5'])('of a Kubernetes list: %j is refused', (limit) =>
    expect(() => kubeLimitOf(limit)).toThrow(/^limit: .* is not a whole number/),
  );
});

describe('continue', () => {
  it.each([
    { namespace: 'default', name: 'train' },
    { namespace: 'team-a', name: 'etl.0123456789abcdef' },
    { namespace: '', name: 'node-1' }, // a cluster-scoped kind's
  ])('names the key it was made from: %j', (key) => {
    expect(parseContinue(continueToken(key), null)).toEqual(key);
    if (key.namespace) expect(parseContinue(continueToken(key), key.namespace)).toEqual(key);
  });

  it.each([
    ['%%', 'not base64url'],
    ['a==', 'not base64url'],
    ['nope', 'not base64url of UTF-8 text'],
    ['a', 'not base64url of UTF-8 text'],
    ['A'.repeat(513), 'longer than any this server gives'],
    [token('train'), 'it names no namespace/name'],
    [token('default/'), 'it names no namespace/name'],
    [token('default/a b'), 'it names no namespace/name'],
    [token('default/a/b'), 'it names no namespace/name'],
    [token('Default/train'), '"Default" is not a namespace'],
    [token('team-a/train'), 'it continues a list of namespace "team-a", not of "default"'],
  ])('%j is refused: %s', (text, why) => {
    let refusal: unknown;
    try {
      parseContinue(text, 'default');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(HttpError);
    expect(refusal).toMatchObject({
      statusCode: 400,
      message: expect.stringMatching(/^continue: ".*" is not a continue token of this list/),
    });
    expect((refusal as HttpError).message).toContain(
      `(${why}); send the metadata.continue of the previous page as it came`,
    );
  });
});

describe('readAllPages', () => {
  it('asks with the largest limit, follows each continue token, and stops at the page without one', async () => {
    const served: Record<string, Page<number>> = {
      '/api/v1/jobs?namespace=a&limit=1000': { items: [1, 2], metadata: { continue: 'x/y' } },
      '/api/v1/jobs?namespace=a&limit=1000&continue=x%2Fy': { items: [3], metadata: { continue: 'z' } },
      '/api/v1/jobs?namespace=a&limit=1000&continue=z': { items: [4], metadata: {} },
    };
    const asked: string[] = [];
    const items = await readAllPages('/api/v1/jobs?namespace=a', async (path) => {
      asked.push(path);
      return served[path]!;
    });
    expect(items).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual(Object.keys(served));
  });

  it('reads a list that has no metadata (one page) once', async () => {
    expect(await readAllPages('/api/v1/jobs', async (path) => ({ items: [path] }))).toEqual([
      '/api/v1/jobs?limit=1000',
    ]);
  });
});

describe('a selected list, read in chunks', () => {
  // n objects in one namespace, in the store's order; every tenth labelled hit=yes.
  const store = (n: number) => {
    const objects: KubeObject[] = Array.from({ length: n }, (_, i) => ({
      metadata: { namespace: 'a', name: `o${String(i).padStart(6, '0')}`, labels: i % 10 === 0 ? { hit: 'yes' } : {} },
    }));
    const reads: PageRequest[] = [];
    const read = async (page: PageRequest): Promise<RowsPage<KubeObject>> => {
      reads.push(page);
      const from = page.after ? objects.findIndex((o) => o.metadata!.name! > page.after!.name) : 0;
      const rest = from < 0 ? [] : objects.slice(from);
      const rows = rest.slice(0, page.limit);
      return { rows, next: rest.length > page.limit ? { namespace: 'a', name: rows.at(-1)!.metadata!.name! } : null };
    };
    return { objects, reads, read };
  };
  const names = (items: KubeObject[]) => items.map((o) => o.metadata!.name);

  it('stops at the limit, and the continue token picks up after the last one served', async () => {
    const { objects, read } = store(5_000);
    const first = await scanSelected(read, { labelSelector: 'hit=yes', limit: '30' }, 'a');
    expect(names(first.items)).toEqual(names(objects.filter((_, i) => i % 10 === 0).slice(0, 30)));
    const second = await scanSelected(read, { labelSelector: 'hit=yes', limit: '30', continue: first.continue }, 'a');
    expect(names(second.items)).toEqual(names(objects.filter((_, i) => i % 10 === 0).slice(30, 60)));
  });

  it('reads at most MOST_SCANNED_PER_PAGE objects for one page, which then ends early with a continue token', async () => {
    const { read, reads } = store(MOST_SCANNED_PER_PAGE * 2 + 500);
    const none = { labelSelector: 'hit=never' };
    const served: string[] = [];
    let page = await scanSelected(read, none, 'a');
    let requests = 1;
    expect(page.items).toEqual([]);
    expect(reads.reduce((n, r) => n + r.limit, 0)).toBeLessThanOrEqual(MOST_SCANNED_PER_PAGE);
    while (page.continue) {
      page = await scanSelected(read, { ...none, continue: page.continue }, 'a');
      served.push(...names(page.items).map(String));
      requests++;
    }
    expect(served).toEqual([]);
    expect(requests).toBe(3);
  });

  it('ends without a continue token when the last object read is the last there is', async () => {
    const { read } = store(91); // the tenth hit, o000090, is the last object
    const page = await scanSelected(read, { labelSelector: 'hit=yes', limit: '10' }, 'a');
    expect(page.items).toHaveLength(10);
    expect(page.continue).toBeUndefined();
  });
});
