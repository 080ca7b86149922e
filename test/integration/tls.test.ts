// TLS between fencer's clients and its replicas (docs/security.md, TLS): a cluster serves https
// with a certificate its own CA signed, and every client verifies it; a client given another CA
// cannot connect (an agent never registers); plain HTTP is answered from loopback only (or with
// --insecure-http), and a replica refuses to listen off loopback without a certificate. A renewed
// certificate (its files rewritten, as kubelet writes a Secret cert-manager renewed) is served to
// new connections with no restart; files that do not load leave the old one serving.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import YAML from 'yaml';
import { ReplicaClient, ReplicaUnreachableError } from '../../src/agent/replica-client.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import type { List, NodeResource } from '../../src/domain/resources.js';
import { ApiClient } from '../../src/net/api-client.js';
import { UnreachableError } from '../../src/errors/unreachable-error.js';
import { freePort } from '../../src/net/free-port.js';
import { projectRoot } from '../../src/paths.js';
import { Replica } from '../../src/replica.js';
import { dualProtocolServer, type ServingCert } from '../../src/api/dual-protocol.js';
import { ensureClusterTls } from '../../src/simulator/cluster-tls.js';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { TEST_ISSUERS, TEST_TLS } from '../helpers/auth.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { startReplica } from '../helpers/replica.js';
import { KUBECTL, run } from '../helpers/kubectl.js';

const MAIN = join(projectRoot(), 'dist/cli/main.js');
const withOpenssl = inject('caCert') ? describe : describe.skip;

/** Another CA, which signed nothing a replica serves. */
function foreignCa(dir: string): string {
  return readFileSync(ensureClusterTls(join(dir, 'foreign'), null)!.ca, 'utf8');
}

withOpenssl('a cluster over TLS', () => {
  let t: TestDatabase;
  let cluster: Cluster;
  let home: string;
  let intruder: ChildProcess | undefined;

  beforeAll(async () => {
    t = await freshDatabase('tls_cluster');
    home = mkdtempSync(join(tmpdir(), 'fencer-tls-'));
    cluster = await Cluster.start({ replicas: 1, nodes: 1, home, databaseUrl: t.url, timings: DEFAULT_TIMINGS });
  });

  afterAll(async () => {
    intruder?.kill('SIGKILL');
    await cluster?.stop();
    await t?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("serves https with its CA's certificate, which its agents verify (the node registered through its proxy)", async () => {
    expect(cluster.replicaUrls.every((url) => url.startsWith('https://127.0.0.1:'))).toBe(true);
    // The node's row is Ready before its log line is flushed.
    await eventually(() => readFileSync(cluster.processLogFile('node-1'), 'utf8').includes('registered'), {
      what: 'node-1 logs that it registered',
    });
    const nodes = await cluster.client({ timeoutMs: 10_000 }).request<List<NodeResource>>('GET', '/api/v1/nodes');
    expect(nodes.items.map((n) => n.metadata.name)).toEqual(['node-1']);
    // The serving key is the owner's alone (the CA's key is the run's, FENCER_CA_KEY).
    expect(statSync(join(home, 'auth', 'serving-key.pem')).mode & 0o077).toBe(0);
  });

  it('an agent given another CA cannot connect: it never registers', async () => {
    const dir = mkdtempSync(join(home, 'intruder-'));
    const wrongCa = join(dir, 'ca.pem');
    writeFileSync(wrongCa, foreignCa(dir));
    intruder = spawn(
      process.execPath,
      [
        MAIN,
        'agent',
        '--name',
        'intruder',
        '--cpu',
        '1',
        '--memory',
        '1Gi',
        '--replicas',
        cluster.replicaUrls.join(','),
        '--log-file',
        join(dir, 'run.ndjson'),
        '--ca',
        wrongCa,
      ],
      { env: { ...process.env, FENCER_CA: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    intruder.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    intruder.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await eventually(() => output.includes('no replica answered the registration'), {
      what: 'the intruder to fail its registration',
    });
    expect(output).toMatch(/certificate/);
    const nodes = await cluster.client({ timeoutMs: 10_000 }).request<List<NodeResource>>('GET', '/api/v1/nodes');
    expect(nodes.items.map((n) => n.metadata.name)).toEqual(['node-1']);
  });

  it("fencer's CLI and kubectl verify the replicas with the kubeconfig's CA, no verification skipped", async () => {
    const file = join(home, 'kubeconfig');
    const env = { ...process.env, KUBECONFIG: file, FENCER_SERVER: '', FENCER_CA: '', FENCER_HOME: home };
    await promisify(execFile)(process.execPath, [MAIN, 'kubeconfig', '-o', file], { env });
    const config = YAML.parse(readFileSync(file, 'utf8')) as {
      clusters: Array<{ cluster: Record<string, unknown> }>;
    };
    for (const { cluster: entry } of config.clusters) {
      expect(entry.server).toMatch(/^https:\/\//);
      expect(entry['certificate-authority-data']).toBeTruthy();
      expect(entry['insecure-skip-tls-verify']).toBeFalsy();
    }
    const { stdout } = await promisify(execFile)(process.execPath, [MAIN, 'get', 'nodes'], { env });
    expect(stdout).toMatch(/^node-1\s/m);
    if (KUBECTL) {
      const listed = await run(KUBECTL, ['--cache-dir', join(home, 'cache'), 'get', 'fno', '-o', 'name'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain('node-1');
      // The same kubeconfig with another CA: kubectl refuses the replica's certificate.
      const foreign = Buffer.from(foreignCa(mkdtempSync(join(home, 'kc-')))).toString('base64');
      for (const entry of config.clusters) entry.cluster['certificate-authority-data'] = foreign;
      writeFileSync(file, YAML.stringify(config), { mode: 0o600 });
      const refused = await run(KUBECTL, ['--cache-dir', join(home, 'cache3'), 'get', 'fno', '-o', 'name'], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/certificate/);
    }
  });
});

withOpenssl('a replica with a certificate', () => {
  let t: TestDatabase;
  let replica: Replica;
  let port: number;

  beforeAll(async () => {
    t = await freshDatabase('tls_replica');
    port = await freePort();
    // Every address, so that a connection can come from one that is not loopback.
    replica = new Replica({
      name: 'replica-tls',
      host: '0.0.0.0',
      port,
      databaseUrl: t.url,
      timings: DEFAULT_TIMINGS,
      logger: pino({ level: 'silent' }),
      auth: { issuers: TEST_ISSUERS },
      tls: TEST_TLS,
    });
    await replica.start();
  });

  afterAll(async () => {
    await replica?.stop();
    await t?.close();
  });

  it('answers https to a client trusting its CA, and a client trusting another CA or none cannot connect', async () => {
    const ca = readFileSync(inject('caCert'), 'utf8');
    const url = `https://127.0.0.1:${port}`;
    const trusting = new ReplicaClient({ replicas: [url], ca, timeoutMs: 5000 });
    expect((await trusting.request('GET', '/healthz')).status).toBe(200);
    expect((await new ApiClient([url], { ca }).status()).replica).toBe('replica-tls');
    const dir = mkdtempSync(join(tmpdir(), 'fencer-foreign-'));
    try {
      for (const other of [foreignCa(dir), undefined]) {
        const refused = new ReplicaClient({ replicas: [url], ca: other, timeoutMs: 5000 });
        const err = await refused.request('GET', '/healthz').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ReplicaUnreachableError);
        expect((err as Error).message).toMatch(/certificate/);
      }
      const unverified = await new ApiClient([url], { ca: foreignCa(dir) }).status().catch((e: unknown) => e);
      expect(unverified).toBeInstanceOf(UnreachableError);
      expect((unverified as UnreachableError).lastCause).toMatch(/VERIFY|CERT|certificate/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('closes a connection whose client hung up before its first byte (no descriptor held in CLOSE-WAIT)', async () => {
    expect(await closedByServer(port, null)).toBe('closed');
  });

  it('answers plain HTTP from loopback only: from another address it says to use https', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const own = ownAddress();
    if (!own) return; // no address but loopback here: nothing else can connect
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, own, () => socket.write(`GET /healthz HTTP/1.1\r\nhost: ${own}\r\n\r\n`));
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('Client sent an HTTP request to an HTTPS server.');
  });

  it('a replica without a certificate refuses to listen off loopback (unless --insecure-http)', async () => {
    const error = await promisify(execFile)(
      process.execPath,
      [MAIN, 'replica', '--name', 'plain', '--host', '0.0.0.0', '--port', String(await freePort())],
      { env: { ...process.env, DATABASE_URL: t.url } },
    ).catch((e: { stderr?: string }) => e);
    expect((error as { stderr?: string }).stderr).toMatch(/--tls-cert: required to listen on 0\.0\.0\.0/);
  });
});

withOpenssl('a replica whose certificate is renewed', () => {
  let t: TestDatabase;
  let replica: Replica | undefined;
  let dir: string;

  beforeAll(async () => {
    t = await freshDatabase('tls_renewal');
    dir = mkdtempSync(join(tmpdir(), 'fencer-renewal-'));
  });

  afterAll(async () => {
    await replica?.stop();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the new certificate to new connections once its files change, with no restart', async () => {
    const files = ensureClusterTls(dir, null)!;
    const port = await freePort();
    const reloads: Array<Error | null> = [];
    replica = await startReplica(
      t.url,
      'replica-renewal',
      {},
      {
        port,
        tls: {
          cert: readFileSync(files.cert, 'utf8'),
          key: readFileSync(files.key, 'utf8'),
          files: { cert: files.cert, key: files.key, everyMs: 50, onReload: (error) => reloads.push(error) },
        },
      },
    );
    const ca = readFileSync(files.ca);
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () => {
          resolve(socket.getPeerX509Certificate()!.fingerprint256);
          socket.end();
        });
        socket.on('error', reject);
      });
    const fingerprintOf = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
    const first = fingerprintOf(files.cert);
    expect(await served()).toBe(first);

    // A certificate file that does not load: refused, the old one still serves.
    const original = readFileSync(files.cert, 'utf8');
    writeFileSync(files.cert, 'not a certificate\n');
    await eventually(() => reloads.some((e) => e !== null));
    expect(await served()).toBe(first);
    writeFileSync(files.cert, original);
    // A key of another type than the certificate's (TLS would take it, and every handshake fail): refused too.
    const before = reloads.length;
    const originalKey = readFileSync(files.key, 'utf8');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(files.key, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    await eventually(() => reloads.slice(before).some((e) => e?.message.includes('is not the key of the certificate')));
    expect(await served()).toBe(first);
    writeFileSync(files.key, originalKey);

    // Renewed: a new pair from the same CA, as cert-manager would write it.
    rmSync(files.cert);
    rmSync(files.key);
    ensureClusterTls(dir, null);
    const renewed = fingerprintOf(files.cert);
    expect(renewed).not.toBe(first);
    await eventually(async () => (await served()) === renewed);
  });
});

withOpenssl('the one port over TLS', () => {
  it('survives a client that resets its connection before its first byte (and, with the guard broken, exits on it)', async () => {
    const { server, port, tls, close } = await onePort();
    try {
      const accepted = new Promise<void>((resolve) => server.once('connection', () => resolve()));
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await accepted;
      socket.resetAndDestroy();
      // Still here, and still answering.
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
      // Broken on purpose, in a process of its own: the reset is an unhandled 'error' there.
      const broken = await resetInBrokenServer(tls);
      expect(broken.code).not.toBe(0);
      expect(broken.stderr).toMatch(/ECONNRESET/);
    } finally {
      close();
    }
  });

  it('closes a refused plain-HTTP connection whose client keeps its side open', async () => {
    const own = ownAddress();
    if (!own) return; // no address but loopback here: nothing is refused
    const { server, port, close } = await onePort({ host: own });
    // The client reads the 400 and the server's FIN and keeps its own side open: only the
    // server's side of the connection tells whether it let go.
    const refusedThenKeptOpen = async (): Promise<'closed' | 'still open'> => {
      const verdict = new Promise<'closed' | 'still open'>((resolve) =>
        server.once('connection', (socket: Socket) => {
          const timer = setTimeout(() => resolve('still open'), 5000);
          socket.once('close', () => {
            clearTimeout(timer);
            resolve('closed');
          });
        }),
      );
      const client = connect({ port, host: own, allowHalfOpen: true }, () =>
        client.write('GET / HTTP/1.1\r\nhost: fencer\r\n\r\n'),
      );
      client.on('error', () => {});
      client.resume();
      try {
        return await verdict;
      } finally {
        client.destroy();
      }
    };
    try {
      expect(await refusedThenKeptOpen()).toBe('closed');
      // Broken on purpose: the server waits for a client that never closes.
      process.env.FENCER_BREAK_GUARDS = 'refused-linger';
      try {
        expect(await refusedThenKeptOpen()).toBe('still open');
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
    } finally {
      close();
    }
  });

  it('closes a connection whose client hung up mid-handshake at once, not at the handshake timeout', async () => {
    const { port, close } = await onePort();
    const begun = Buffer.from([22, 3, 1]); // a TLS record begun, the handshake never finished
    try {
      expect(await closedByServer(port, begun)).toBe('closed');
      // Broken on purpose: the TLS socket keeps the port's half-open setting, and the connection
      // stays until Node's handshake timeout (120 s).
      process.env.FENCER_BREAK_GUARDS = 'tls-half-open';
      try {
        expect(await closedByServer(port, begun)).toBe('still open');
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
    } finally {
      close();
    }
  });

  it("cuts off a client that never finishes its request's headers (Node's headersTimeout, over TLS too)", async () => {
    const { port, ca, close } = await onePort({ headers: { timeoutMs: 300, checkEveryMs: 100 } });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () =>
          socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n'),
        );
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      close();
    }
  });

  it("gives TLS connections the keep-alive and limits fastify set on the port's server, not Node's defaults", async () => {
    // As fastify does to the server its factory returns, before it listens.
    const configure = (server: Server) => {
      server.keepAliveTimeout = 72_000;
      server.maxRequestsPerSocket = 2;
    };
    const { port, ca, close } = await onePort({ configure });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const request = 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n';
        const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () => socket.write(request + request));
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          // Both answered (each body is "ok"): the test does not wait for a close.
          if (text.split('HTTP/1.1 ').length === 3 && text.endsWith('ok')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const responses = answer.split(/(?=HTTP\/1\.1 )/);
      expect(responses).toHaveLength(2);
      expect(responses[0]).toMatch(/keep-alive: timeout=72/i);
      // The second request was the socket's last, and the server said so.
      expect(responses[1]).toMatch(/connection: close/i);
    } finally {
      close();
    }
  });
});

/**
 * The one port alone (no replica behind it: every request is answered "ok") on `host`, with a
 * certificate made for it; close() ends its connections, stops it and removes the files.
 */
async function onePort(
  opts: { host?: string; headers?: ServingCert['headers']; configure?: (server: Server) => void } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'fencer-one-port-'));
  const files = ensureClusterTls(dir, null)!;
  const tls = { cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
  const server = dualProtocolServer({ ...tls, ...(opts.headers ? { headers: opts.headers } : {}) })((_req, res) =>
    res.end('ok'),
  );
  opts.configure?.(server);
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as { port: number }).port,
    tls,
    ca: readFileSync(files.ca),
    close() {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A client half-closes (FIN) after sending `first` (nothing, or part of a handshake) and waits:
 * the server must close its side, or the socket stays half-open, one descriptor each. 'still open'
 * when it has not within 5 s (a closing server takes milliseconds; Node's handshake timeout is 120 s).
 */
function closedByServer(port: number, first: Buffer | null): Promise<'closed' | 'still open'> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      if (first) socket.write(first);
      socket.end();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('still open');
    }, 5000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
    socket.on('error', () => {}); // a reset is closed too
    socket.resume();
  });
}

/** This machine's first IPv4 address that is not loopback, if it has one. */
function ownAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

/**
 * The one port in a process of its own with FENCER_BREAK_GUARDS=port-socket-error; a client
 * connects and resets before its first byte. Its exit code and stderr.
 */
async function resetInBrokenServer(tls: {
  cert: string;
  key: string;
}): Promise<{ code: number | null; stderr: string }> {
  const module = pathToFileURL(join(projectRoot(), 'dist/api/dual-protocol.js')).href;
  const script = [
    `const { dualProtocolServer } = await import(${JSON.stringify(module)});`,
    'const server = dualProtocolServer({ cert: process.env.CERT, key: process.env.KEY })((_q, r) => r.end("ok"));',
    'server.on("connection", () => console.log("accepted"));',
    'server.listen(0, "127.0.0.1", () => console.log(server.address().port));',
    'setTimeout(() => process.exit(0), 20000);',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, FENCER_BREAK_GUARDS: 'port-socket-error', CERT: tls.cert, KEY: tls.key },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout });
  let socket: Socket | undefined;
  lines.on('line', (line) => {
    if (line === 'accepted') socket?.resetAndDestroy();
    else {
      socket = connect(Number(line), '127.0.0.1');
      socket.on('error', () => {});
    }
  });
  const code = await exited;
  return { code, stderr };
}
