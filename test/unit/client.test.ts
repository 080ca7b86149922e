import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SERVER, resolveServers } from '../../src/cli/client.js';
import { ApiClient } from '../../src/net/api-client.js';
import { ApiError } from '../../src/errors/api-error.js';
import { UnreachableError } from '../../src/errors/unreachable-error.js';

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

interface Replica {
  url: string;
  seen: Seen[];
}

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise<void>((resolve) => s.close(() => resolve()));
    }),
  );
});

/** A real HTTP server on 127.0.0.1 that records each request and answers with `respond`. */
async function replica(respond: (req: Seen, res: ServerResponse) => void): Promise<Replica> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'], body };
      seen.push(request);
      respond(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A URL where nothing listens: a port the kernel just handed out and that we closed again. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('ApiClient', () => {
  it('fails over from an unreachable replica to a live one, and stays with the live one', async () => {
    const live = await replica((_req, res) => json(res, 200, { leader: 'replica-2', epoch: 7 }));
    const dead = await deadUrl();
    const client = new ApiClient([dead, live.url]);

    await expect(client.request('GET', '/api/v1/status')).resolves.toEqual({ leader: 'replica-2', epoch: 7 });
    const second = await client.exchange('GET', '/api/v1/status');

    expect(second.server).toBe(live.url);
    expect(live.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/v1/status', 'GET /api/v1/status']);
  });

  it('fails over from a replica that accepts but never answers (frozen) after the timeout', async () => {
    const frozen = await replica(() => {
      /* never answers, like a SIGSTOPped process */
    });
    const live = await replica((_req, res) => json(res, 200, { ok: true }));
    const client = new ApiClient([frozen.url, live.url], { timeoutMs: 200 });

    await expect(client.request('GET', '/healthz')).resolves.toEqual({ ok: true });
    expect(frozen.seen).toHaveLength(1);
  });

  it('throws ApiError with the status, message and details of a 400, without trying another replica', async () => {
    const details = [{ path: 'spec.resources.cpu', message: '"abc" is not a CPU quantity', line: 7 }];
    const refusing = await replica((_req, res) => json(res, 400, { error: { message: 'invalid Job', details } }));
    const other = await replica((_req, res) => json(res, 201, {}));
    const client = new ApiClient([refusing.url, other.url]);

    const error = await client.request('POST', '/api/v1/jobs', 'kind: Job\n').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, serverMessage: 'invalid Job', details, server: refusing.url });
    expect((error as ApiError).message).toBe('invalid Job\n  spec.resources.cpu: "abc" is not a CPU quantity (line 7)');
    expect(other.seen).toHaveLength(0);
  });

  it('tries the next replica on 503 and reports the refusal when every replica refuses so', async () => {
    const unavailable = await replica((_req, res) => json(res, 503, { error: { message: 'no database' } }));
    const live = await replica((_req, res) => json(res, 200, { items: [] }));

    await expect(new ApiClient([unavailable.url, live.url]).request('GET', '/api/v1/nodes')).resolves.toEqual({
      items: [],
    });
    await expect(new ApiClient([unavailable.url]).request('GET', '/api/v1/nodes')).rejects.toMatchObject({
      name: 'ApiError',
      status: 503,
      serverMessage: 'no database',
    });
  });

  it('says what it got when the answer is not a fencer error body', async () => {
    const proxy = await replica((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
    });
    await expect(new ApiClient([proxy.url]).request('GET', '/nope')).rejects.toMatchObject({
      status: 404,
      serverMessage: `HTTP 404 from ${proxy.url}: Not Found`,
    });
  });

  it('throws UnreachableError naming every replica it tried when nothing answers', async () => {
    const urls = [await deadUrl(), await deadUrl()];
    const error = await new ApiClient(urls).request('GET', '/api/v1/status').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnreachableError);
    expect((error as UnreachableError).tried).toEqual(urls);
    expect((error as UnreachableError).message).toBe(`cannot reach any fencer replica (tried ${urls.join(', ')})`);
    expect((error as UnreachableError).lastCause).toBe('ECONNREFUSED');
  });

  it('sends manifests as YAML text and objects as JSON, and reports 201 vs 200', async () => {
    const live = await replica((req, res) => json(res, req.body.includes('again') ? 200 : 201, { kind: 'Job' }));
    const client = new ApiClient([live.url]);

    const created = await client.exchange('POST', '/api/v1/jobs', 'kind: Job\n');
    const unchanged = await client.exchange('POST', '/api/v1/jobs', { kind: 'Job', again: true });

    expect([created.status, unchanged.status]).toEqual([201, 200]);
    expect(live.seen.map((r) => [r.contentType, r.body])).toEqual([
      ['application/yaml', 'kind: Job\n'],
      ['application/json', '{"kind":"Job","again":true}'],
    ]);
  });
  it('waits out a 429 for its Retry-After and sends the same request again, saying so', async () => {
    let answered = 0;
    const busy = await replica((_req, res) => {
      if (answered++ > 0) return json(res, 201, { kind: 'Job' });
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(JSON.stringify({ error: { message: 'too many pending jobs' } }));
    });
    const waits: Array<[string, number]> = [];
    const client = new ApiClient([busy.url], { onRetry: (why, ms) => waits.push([why, ms]) });

    await expect(client.submitJobs({ kind: 'Job' })).resolves.toMatchObject({ status: 201 });
    expect(waits).toEqual([['too many pending jobs', 0]]);
    expect(busy.seen.map((r) => r.body)).toEqual(['{"kind":"Job"}', '{"kind":"Job"}']);
  });

  it('with rounds to spare, asks every replica again after a pause when none answered', async () => {
    let up = false;
    const late = await replica((_req, res) =>
      up ? json(res, 200, { ok: true }) : json(res, 503, { error: { message: 'starting' } }),
    );
    const dead = await deadUrl();
    const waits: string[] = [];
    const client = new ApiClient([dead, late.url], {
      rounds: 3,
      roundPauseMs: 10,
      onRetry: (why) => {
        waits.push(why);
        up = true;
      },
    });

    await expect(client.request('GET', '/healthz')).resolves.toEqual({ ok: true });
    expect(waits).toEqual(['starting']);
    // One round by default: the CLI says at once that nothing answered.
    await expect(new ApiClient([dead]).request('GET', '/healthz')).rejects.toBeInstanceOf(UnreachableError);
  });

  it('stops sending again once its signal aborts', async () => {
    const dead = await deadUrl();
    const stop = new AbortController();
    const client = new ApiClient([dead], {
      rounds: Infinity,
      roundPauseMs: 10_000,
      signal: stop.signal,
      onRetry: () => stop.abort(),
    });

    await expect(client.request('GET', '/healthz')).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('resolveServers', () => {
  const cluster = (): string[] => ['http://127.0.0.1:7101', 'http://127.0.0.1:7102'];
  const noCluster = (): string[] => [];

  it.each([
    [
      '--server wins',
      'http://a:1, http://b:2/',
      { FENCER_SERVER: 'http://env:3' },
      cluster,
      ['http://a:1', 'http://b:2'],
    ],
    [
      'then FENCER_SERVER',
      undefined,
      { FENCER_SERVER: 'http://env:3,http://env:4' },
      cluster,
      ['http://env:3', 'http://env:4'],
    ],
    ['then the local cluster', undefined, {}, cluster, cluster()],
    ['then the default', undefined, {}, noCluster, [DEFAULT_SERVER]],
    ['an empty option counts as none', ' , ', {}, noCluster, [DEFAULT_SERVER]],
    ['a bare host:port gets http://', '127.0.0.1:7070', {}, noCluster, ['http://127.0.0.1:7070']],
  ])('%s', (_name, opt, env, replicas, expected) => {
    expect(resolveServers(opt, env, replicas)).toEqual(expected);
  });
});
