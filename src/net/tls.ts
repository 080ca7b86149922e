// How fencer's own clients trust a replica (docs/security.md, TLS): a replica's certificate is
// verified against a CA the client is given (--ca, FENCER_CA, a kubeconfig's
// certificate-authority-data), or the system's CAs when none is; it is never skipped. The
// cluster's CA is usually private (`fencer cluster up` makes one), so it is passed to one client's
// connections, not added to the process's trust.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';

/** The PEM of a CA file, with an error naming the option or variable it came from. */
export function readCa(file: string, from = '--ca'): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${from}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${from}: ${file} holds no PEM certificate`);
  return pem;
}

/** FENCER_CA's certificate(s), or undefined when it is not set. */
export function caFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.FENCER_CA ? readCa(env.FENCER_CA, 'FENCER_CA') : undefined;
}

/**
 * A fetch over connections kept alive that verify a replica's certificate against `ca` (PEM);
 * the global fetch (the system's CAs) without one.
 */
export function fetchTrusting(ca: string | undefined): typeof fetch {
  if (ca === undefined) return fetch;
  const dispatcher = new Agent({ connect: { ca } });
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

/**
 * The plain-HTTP address of a replica on this machine (answered from loopback, and a browser
 * knows nothing of the cluster's CA: the dashboard's link); any other URL as it is.
 */
export function plainOnLoopback(url: string): string {
  const { protocol, hostname } = new URL(url);
  const loopback = hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
  return loopback && protocol === 'https:' ? url.replace(/^https:/, 'http:') : url;
}

/**
 * Whether a peer's address is this machine's: the one place a replica still answers plain HTTP
 * beside HTTPS (src/api/dual-protocol.ts), since loopback traffic crosses no network.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}
