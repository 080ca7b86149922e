// Waiting for a process we started to listen on its loopback port.
import { connect } from 'node:net';
import { delay } from '../lifecycle.js';

/** Resolves once 127.0.0.1:port accepts a connection; throws when `alive()` turns false or after timeoutMs. */
export async function waitListening(
  port: number,
  name: string,
  alive: () => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!alive()) throw new Error(`${name} exited before listening on ${port}`);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`${name} does not listen on ${port} after ${timeoutMs / 1000} s`);
    await delay(50);
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
