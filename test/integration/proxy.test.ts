// The simulator's network: a node reaches the replicas through its own proxy process, and a
// partition is that process frozen. These tests run the real `fencer proxy` binary under the
// process runtime over real TCP, so they also cover the runtime's start/freeze/resume/kill/stop.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net/free-port.js';
import { projectRoot } from '../../src/paths.js';
import { ProcessRuntime } from '../../src/simulator/process-runtime.js';
import type { ExitEvent } from '../../src/simulator/runtime.js';

const root = projectRoot();
const binary = join(root, 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'fencer-proxy-test-'));
const runtime = new ProcessRuntime(binary);
const servers: Server[] = [];
const clients: Socket[] = [];

beforeAll(() => {
  // The proxy runs as its own process from the built binary; build it if it is missing or older
  // than the proxy's sources.
  const sources = ['src/simulator/proxy.ts', 'src/cli/proxy.ts'].map((file) => statSync(join(root, file)).mtimeMs);
  if (!existsSync(binary) || statSync(binary).mtimeMs < Math.max(...sources)) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  }
}, 120_000);

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await Promise.all(runtime.names().map((name) => runtime.stop(name, 2000)));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

/** An upstream that answers every chunk with the same bytes, like a tiny replica. */
async function echoServer(): Promise<number> {
  const server = createServer((socket) => socket.pipe(socket));
  servers.push(server);
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return port;
}

async function startProxy(name: string, routes: Array<[number, number]>): Promise<void> {
  const listen = routes.map(([from, to]) => `${from}:${to}`).join(',');
  await runtime.start({ name, args: ['proxy', '--listen', listen], env: {}, logFile: join(dir, `${name}.log`) });
  for (const [port] of routes) await eventually(() => canConnect(port));
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A client connection that collects what it receives and notes when it closes. */
async function client(port: number): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const socket = connect(port, '127.0.0.1');
  clients.push(socket);
  let data = '';
  let closed = false;
  socket.on('data', (chunk) => (data += chunk.toString()));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => data, closed: () => closed };
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

describe('fencer proxy', () => {
  it('forwards each listening port to its target', async () => {
    const [a, b] = [await echoServer(), await echoServer()];
    const [pa, pb] = [await freePort(), await freePort()];
    await startProxy('node-1-proxy', [
      [pa, a],
      [pb, b],
    ]);

    const first = await client(pa);
    const second = await client(pb);
    first.socket.write('to replica a');
    second.socket.write('to replica b');
    await eventually(() => first.received() === 'to replica a' && second.received() === 'to replica b');
  });

  it('passes nothing while frozen, keeps the connection open, and delivers once resumed', async () => {
    const upstream = await echoServer();
    const port = await freePort();
    await startProxy('node-2-proxy', [[port, upstream]]);
    const conn = await client(port);
    conn.socket.write('before;');
    await eventually(() => conn.received() === 'before;');

    await runtime.freeze('node-2-proxy');
    await eventually(() => procState(runtime.pid('node-2-proxy')!) === 'T'); // signals arrive asynchronously
    conn.socket.write('during;');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(conn.received()).toBe('before;'); // a partition: nothing flows …
    expect(conn.closed()).toBe(false); // … and nobody is told

    // A new connection while frozen completes (the kernel accepts it) but carries nothing either.
    const late = await client(port);
    late.socket.write('late;');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(late.received()).toBe('');

    await runtime.resume('node-2-proxy');
    await eventually(() => conn.received() === 'before;during;' && late.received() === 'late;');
    expect(conn.closed()).toBe(false);
  });

  it('closes its connections when killed, which is why a partition freezes it instead', async () => {
    const upstream = await echoServer();
    const port = await freePort();
    await startProxy('node-3-proxy', [[port, upstream]]);
    const conn = await client(port);
    const exits: ExitEvent[] = [];
    const unsubscribe = runtime.onExit((event) => exits.push(event));

    await runtime.kill('node-3-proxy');
    await eventually(() => conn.closed() && exits.length === 1);
    unsubscribe();
    expect(exits[0]).toMatchObject({ name: 'node-3-proxy', signal: 'SIGKILL' });
    expect(runtime.isRunning('node-3-proxy')).toBe(false);
  });

  it('closes the client side when the target refuses, as a dead replica would', async () => {
    const nobody = await freePort();
    const port = await freePort();
    await startProxy('node-4-proxy', [[port, nobody]]);
    const conn = await client(port);
    await eventually(() => conn.closed());
  });
});

describe('process runtime', () => {
  it('stops a frozen process gracefully, and forcefully when it ignores SIGTERM', async () => {
    // A stubborn child: ignores SIGTERM, so only the SIGKILL after the timeout ends it.
    const stubborn = join(dir, 'stubborn.mjs');
    writeFileSync(stubborn, "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);\n");
    const stubbornRuntime = new ProcessRuntime(stubborn);
    const exits: ExitEvent[] = [];
    stubbornRuntime.onExit((event) => exits.push(event));
    const logFile = join(dir, 'stubborn.log');
    await stubbornRuntime.start({ name: 'stubborn', args: [], env: {}, logFile });
    await eventually(() => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('ready'));
    const started = Date.now();
    await stubbornRuntime.stop('stubborn', 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(exits[0]).toMatchObject({ name: 'stubborn', signal: 'SIGKILL' });

    // A frozen proxy still gets its SIGTERM (the runtime resumes it to deliver it).
    const port = await freePort();
    await startProxy('node-5-proxy', [[port, await echoServer()]]);
    await runtime.freeze('node-5-proxy');
    await runtime.stop('node-5-proxy', 5000);
    expect(runtime.isRunning('node-5-proxy')).toBe(false);
  });

  it('appends a restarted process to the same log and refuses a second process of one name', async () => {
    const noisy = join(dir, 'noisy.mjs');
    writeFileSync(
      noisy,
      "console.log('hello from', process.argv[2], process.env.GREETING); setInterval(() => {}, 1000);\n",
    );
    const noisyRuntime = new ProcessRuntime(noisy);
    const spec = { name: 'noisy', args: ['noisy'], env: { GREETING: 'hi' }, logFile: join(dir, 'logs', 'noisy.log') };
    const first = await noisyRuntime.start(spec);
    await expect(noisyRuntime.start(spec)).rejects.toThrow(/already running/);
    await eventually(() => existsSync(spec.logFile) && readFileSync(spec.logFile, 'utf8').includes('hi'));
    await noisyRuntime.kill('noisy');
    await eventually(() => !noisyRuntime.isRunning('noisy'));
    const second = await noisyRuntime.start(spec);
    expect(second.pid).not.toBe(first.pid);
    await eventually(() => readFileSync(spec.logFile, 'utf8').split('hello from noisy hi').length === 3);
    await noisyRuntime.stop('noisy');
  });
});
