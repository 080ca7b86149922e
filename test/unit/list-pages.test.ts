// Lists in pages, the pure parts: a request's limit, the continue token (what it names, what is
// refused), and a client reading every page.
import { describe, expect, it } from 'vitest';
import { continueToken, kubeLimitOf, pageLimitOf, parseContinue } from '../../src/api/list-page.js';
import { DEFAULT_PER_PAGE, MOST_PER_PAGE, readAllPages, type Page } from '../../src/domain/list-pages.js';
import { HttpError } from '../../src/errors/http-error.js';

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
