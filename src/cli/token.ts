// `fencer token create`: a bearer token signed with the cluster's key, printed on stdout for
// kubectl (`--token`, or a kubeconfig's user), the dashboard and scripts. Whoever can read the
// signing key can mint any identity, system:masters included: the key stays in the cluster's
// home (mode 0600) or wherever --signing-key says, never on the replicas.
import type { Command } from 'commander';
import { parseDuration } from '../domain/duration.js';
import { fencerHome } from '../simulator/state.js';
import { fail } from './options.js';

interface CreateOptions {
  user: string;
  group: string[];
  ttl: string;
  signingKey?: string;
  issuer: string;
  output?: string;
}

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('bearer tokens for the API (signed with the cluster key)');
  token
    .command('create')
    .description('print a new token for a user and groups, valid for --ttl')
    .requiredOption('--user <name>', 'the user the token stands for (its sub; RBAC subjects of kind User name it)')
    .option('--group <name>', 'a group of the user (repeatable; system:masters is cluster-admin)', collect, [])
    .option('--ttl <duration>', 'how long it is valid, e.g. 1h, 30m, 720h (at most a year)', '24h')
    .option('--signing-key <file>', "the private signing key (a JWK or PKCS#8 PEM; default: the cluster home's)")
    .option('--issuer <iss>', 'the issuer the replicas trust', process.env.FENCER_TOKEN_ISSUER ?? 'fencer')
    .option('-o, --output <format>', 'json: the token with its id and expiry')
    .action(async (opts: CreateOptions) => {
      const ttlMs = parseDuration(opts.ttl);
      if (ttlMs === null || ttlMs === 0) fail(`--ttl: "${opts.ttl}" is not a positive duration (use 30m, 24h)`);
      if (opts.output !== undefined && opts.output !== 'json') fail(`--output: "${opts.output}" is not json`);
      const { authFiles, readSigningKey } = await import('../auth/tokens/keys.js');
      const { mintToken, MAX_TOKEN_TTL_MS } = await import('../auth/tokens/mint.js');
      if (ttlMs > MAX_TOKEN_TTL_MS) fail(`--ttl: ${opts.ttl} is longer than a year`);
      const file = opts.signingKey ?? authFiles(fencerHome()).signingKey;
      const key = await readSigningKey(file).catch((err: NodeJS.ErrnoException) =>
        fail(
          err.code === 'ENOENT'
            ? `no signing key at ${file}: start a cluster (fencer cluster up) or pass --signing-key`
            : err.message,
        ),
      );
      const minted = await mintToken(key, { issuer: opts.issuer, user: opts.user, groups: opts.group, ttlMs });
      process.stdout.write(
        opts.output === 'json'
          ? `${JSON.stringify({ token: minted.token, jti: minted.jti, expiresAt: minted.expiresAt.toISOString() })}\n`
          : `${minted.token}\n`,
      );
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
