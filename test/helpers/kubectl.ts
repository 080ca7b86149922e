// The real kubectl, for the tests that drive it: where it is (undefined: those tests skip and say
// why), and a runner against one server with a fresh discovery cache and no kubeconfig.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';

export const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));

export interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

/** A command's output and exit code, a failure included (not execFileSync: the server answering may run in this process). */
export async function run(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code ?? 1 };
  }
}

/**
 * kubectl against `server()` (read at each call), discovery cached under `home`, as the suite's
 * admin (FENCER_TOKEN, test/helpers/setup-auth.ts) unless given another token.
 */
export function kubectlAgainst(
  server: () => string,
  home: () => string,
  token: () => string | undefined = () => process.env.FENCER_TOKEN,
): (...args: string[]) => Promise<Run> {
  return (...args) =>
    run(KUBECTL!, [...serverArgs(server(), token()), '--cache-dir', join(home(), 'cache'), ...args], {
      ...process.env,
      KUBECONFIG: join(home(), 'none'),
    });
}

/**
 * How kubectl reaches a replica with a token: over TLS (kubectl sends no credentials to an http
 * server; a replica's port answers https), its certificate verified against the run's CA.
 */
export function serverArgs(server: string, token: string | undefined = process.env.FENCER_TOKEN): string[] {
  return [
    '--server',
    server.replace(/^http:/, 'https:'),
    '--certificate-authority',
    inject('caCert'),
    ...(token ? ['--token', token] : []),
  ];
}
