// freePort's reservations: a port handed to one live process is never handed to another (test
// files run side by side, each starting clusters whose processes listen a second after the port
// was found free), and a dead process's reservation is taken over.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort, reservePort } from '../../src/net/free-port.js';
import { projectRoot } from '../../src/paths.js';

/** Another process that asks for a port and holds its reservation until killed. */
async function holder(): Promise<{ port: number; pid: number; kill: () => Promise<void> }> {
  const module = pathToFileURL(join(projectRoot(), 'dist/net/free-port.js')).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { freePort } = await import('${module}'); console.log(await freePort()); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return {
    port: Number(chunk.toString().trim()),
    pid: child.pid!,
    kill: async () => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

const dir = join(tmpdir(), `fencer-ports-${process.getuid?.() ?? 'user'}`);

describe('freePort', () => {
  it("never hands out a port another live process was given, and takes over a dead one's", async () => {
    const other = await holder();
    expect(reservePort(other.port)).toBe(false);
    // Given up, its own file is gone: the holder's reservation is the only one.
    expect(readdirSync(dir).filter((name) => name.startsWith(`${other.port}.`))).toEqual([
      `${other.port}.${other.pid}`,
    ]);
    // Killed: its exit handler never ran, so its reservation is still there, and is taken over.
    await other.kill();
    expect(reservePort(other.port)).toBe(true);
    expect(reservePort(other.port)).toBe(false);
  });

  it('hands one process distinct ports, even asked many times at once', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
  });
});
