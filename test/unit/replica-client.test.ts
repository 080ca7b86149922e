import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplicaClient, ReplicaUnreachableError, WatchSilentError } from '../../src/agent/replica-client.js';
import { eventually } from '../helpers/eventually.js';

describe('ReplicaClient', () => {
  const replicas = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'];

  it('starts every agent on the first replica without a spread key', () => {
    expect(new ReplicaClient({ replicas }).current).toBe(replicas[0]);
  });

  it('spreads agents over the replicas by name, the same name always on the same one', () => {
    const first = (name: string) => new ReplicaClient({ replicas, spreadKey: name }).current;
    const names = Array.from({ length: 30 }, (_, i) => `node-${i + 1}`);
    expect(names.map(first)).toEqual(names.map(first));
    const counts = replicas.map((r) => names.filter((n) => first(n) === r).length);
    for (const count of counts) expect(count).toBeGreaterThan(3);
  });
});

describe('ReplicaClient over HTTP', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function serve(handler: http.RequestListener): Promise<string> {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('moves past a replica that does not answer in time and remembers the one that did', async () => {
    const silent = await serve(() => undefined); // accepts, never answers
    const good = await serve((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => res.end(JSON.stringify({ echoed: JSON.parse(body) })));
    });
    const before = performance.now();
    const client = new ReplicaClient({ replicas: [silent, good], timeoutMs: 100 });
    const reply = await client.request<{ echoed: unknown }>('POST', '/x', { a: 1 });
    expect(reply).toMatchObject({ status: 200, replica: good, body: { echoed: { a: 1 } } });
    expect(client.current).toBe(good);
    expect(reply.sentAt).toBeGreaterThanOrEqual(before + 100); // sent to the second, after the first timed out
  });

  it('reuses one connection for many requests', async () => {
    const sockets = new Set<unknown>();
    const url = await serve((req, res) => {
      sockets.add(req.socket);
      res.end('{}');
    });
    const client = new ReplicaClient({ replicas: [url] });
    for (let i = 0; i < 5; i++) await client.request('POST', '/heartbeat', {});
    expect(sockets.size).toBe(1);
  });

  it('says which replicas failed and why when none answered', async () => {
    const failing = await serve((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const client = new ReplicaClient({ replicas: [failing, 'http://127.0.0.1:1'], timeoutMs: 200 });
    const error = await client.request('GET', '/x').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ReplicaUnreachableError);
    expect((error as Error).message).toMatch(/HTTP 503.*ECONNREFUSED/);
  });

  it('reads NDJSON messages split anywhere across chunks, then reports a silent stream', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const text = `${JSON.stringify({ type: 'keepalive' })}\n${JSON.stringify({ type: 'snapshot', assignments: [] })}\n`;
      res.write(text.slice(0, 7));
      setTimeout(() => res.write(text.slice(7, 30)), 20);
      setTimeout(() => res.write(text.slice(30)), 40); // then nothing: the stream goes silent
    });
    const client = new ReplicaClient({ replicas: [url] });
    const stream = await client.openWatch('/watch', 150);
    const seen: string[] = [];
    const outcome = await (async () => {
      for await (const message of stream.messages()) seen.push(message.type);
    })().catch((err: unknown) => err);
    expect(seen).toEqual(['keepalive', 'snapshot']);
    expect(outcome).toBeInstanceOf(WatchSilentError);
  });

  it('does not open a watch on a replica that refuses it', async () => {
    const refusing = await serve((_req, res) => {
      res.statusCode = 410;
      res.end('{"error":{"message":"dead"}}');
    });
    const client = new ReplicaClient({ replicas: [refusing] });
    await expect(client.openWatch('/watch', 1000)).rejects.toThrow(/HTTP 410/);
  });

  describe('hedged (a late answer still counts)', () => {
    /** Answers each request `afterMs` later (never, for Infinity); records what came and what was dropped. */
    async function slow(afterMs: number, status = 200) {
      const seen = { requests: 0, dropped: 0 };
      const url = await serve((req, res) => {
        seen.requests++;
        req.resume();
        res.on('close', () => {
          if (!res.writableFinished) seen.dropped++;
        });
        if (Number.isFinite(afterMs))
          setTimeout(() => {
            res.statusCode = status;
            res.end('{"ok":true}');
          }, afterMs);
      });
      return { url, seen };
    }

    it('takes an answer that lands after the request timeout, counted from its sending', async () => {
      const late = await slow(300);
      const silent = await slow(Infinity);
      const client = new ReplicaClient({ replicas: [late.url, silent.url], timeoutMs: 100 });
      const before = performance.now();
      const reply = await client.hedged<{ ok: boolean }>('POST', '/heartbeat', {}, 2000);
      expect(reply).toMatchObject({ status: 200, replica: late.url, body: { ok: true } });
      expect(reply.sentAt).toBeLessThan(before + 50); // the first sending, not the hedge's
      expect(silent.seen.requests).toBe(1); // hedged there after the timeout...
      await eventually(() => silent.seen.dropped === 1); // ...and dropped once the first answered
      // request() gives up on each replica at its timeout: the same answer is lost.
      await expect(client.request('POST', '/heartbeat', {})).rejects.toThrow(ReplicaUnreachableError);
    });

    it('moves on to the next replica when the first never answers, and remembers it', async () => {
      const silent = await slow(Infinity);
      const good = await slow(0);
      const client = new ReplicaClient({ replicas: [silent.url, good.url], timeoutMs: 100 });
      const reply = await client.hedged('POST', '/heartbeat', {}, 2000);
      expect(reply.replica).toBe(good.url);
      expect(client.current).toBe(good.url);
      await eventually(() => silent.seen.dropped === 1);
    });

    it('tries the next replica at once when every attempt so far failed', async () => {
      const failing = await slow(0, 503);
      const good = await slow(0);
      const client = new ReplicaClient({ replicas: [failing.url, good.url], timeoutMs: 60_000 });
      const reply = await client.hedged('POST', '/heartbeat', {}, 60_000);
      expect(reply.replica).toBe(good.url);
    });

    it('gives up on an answer later than its patience, and says why for each replica', async () => {
      const tooLate = await slow(400);
      const client = new ReplicaClient({ replicas: [tooLate.url, 'http://127.0.0.1:1'], timeoutMs: 50 });
      const error = await client.hedged('POST', '/heartbeat', {}, 200).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ReplicaUnreachableError);
      expect((error as Error).message).toMatch(
        /no answer within 200 ms.*ECONNREFUSED|ECONNREFUSED.*no answer within 200 ms/,
      );
    });

    it('stops when its signal aborts', async () => {
      const silent = await slow(Infinity);
      const client = new ReplicaClient({ replicas: [silent.url], timeoutMs: 50 });
      const abort = new AbortController();
      const reply = client.hedged('POST', '/heartbeat', {}, 60_000, abort.signal);
      await eventually(() => silent.seen.requests === 1);
      abort.abort(new Error('stopping'));
      await expect(reply).rejects.toThrow('stopping');
      await eventually(() => silent.seen.dropped === 1);
    });
  });
});
