import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A port found free is closed again before its user (a replica, a proxy, PostgreSQL) listens on
// it, often a second later, in a child process. Another process looking for a free port in that
// second may be given the same one by the kernel (it picks at random among ~14,000), and then two
// clusters share a port: one process fails to listen, and the other cluster's clients reach it.
// So every port handed out is also reserved, for as long as the process that asked lives, in a
// directory every fencer process of the user looks at (another user's could not be written); a
// port reserved by a live process is never handed out again.
const RESERVED = join(tmpdir(), `fencer-ports-${process.getuid?.() ?? 'user'}`);
const mine = new Set<number>();
/** Ports offered by the kernel and found reserved before freePort gives up (the range is used up). */
const MOST_TRIES = 1000;

/** A TCP port on 127.0.0.1 that nothing listens on right now and no other live process was given. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < MOST_TRIES; tries++) {
    const port = await unboundPort();
    if (reserved(port)) return port;
  }
  throw new Error(`no free port in ${MOST_TRIES} tries: every one the kernel offered was reserved (${RESERVED})`);
}

/** Reserved for this process; a machine where nothing can be written there gets the port unreserved. */
function reserved(port: number): boolean {
  try {
    return reservePort(port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC') return true;
    throw err;
  }
}

/**
 * Reserves a port for this process: false when a live process (this one included) holds it.
 * Each reservation is a file of its own (port.pid): two processes reserving one port at once each
 * see the other's file, and both give it up; neither takes it twice. A dead process's file is removed.
 */
export function reservePort(port: number): boolean {
  if (mine.has(port)) return false;
  const dir = RESERVED;
  // The owner's alone: another user could otherwise plant or remove reservations in it.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const own = `${port}.${process.pid}`;
  writeFileSync(join(dir, own), '');
  // The first time in a process, every dead process's reservation goes (a killed one leaves its own).
  const sweep = mine.size === 0;
  for (const name of readdirSync(dir)) {
    const [held, pid] = name.split('.').map(Number);
    if (name === own || (held !== port && !sweep)) continue;
    if (held === port && alive(pid!)) {
      unlink(join(dir, own));
      return false;
    }
    if (!alive(pid!)) unlink(join(dir, name));
  }
  remember(port);
  return true;
}

function unboundPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function remember(port: number): void {
  if (mine.size === 0) process.once('exit', release);
  mine.add(port);
}

/** At exit, this process's reservations go (a killed process's are taken over when next met). */
function release(): void {
  for (const port of mine) unlink(join(RESERVED, `${port}.${process.pid}`));
}

function unlink(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    // Another process removed a dead one's file first, or the directory was cleaned.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
