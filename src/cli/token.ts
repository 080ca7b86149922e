// `fencer token create`: a bearer token signed with the cluster's key, printed on stdout for
// kubectl (`--token`, or a kubeconfig's user), the dashboard and scripts. Whoever can read the
// signing key can mint any identity, system:masters included: the key stays in the cluster's
// home (mode 0600) or wherever --signing-key says, never on the replicas.
import type { Command } from 'commander';
import { parseDuration } from '../domain/duration.js';
import { fencerHome } from '../simulator/state.js';
import { fail } from './options.js';

interface CreateOptions {
  user?: string;
  join?: boolean;
  description?: string;
  tokenFile?: string;
  databaseUrl?: string;
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
    .description('print a new token for a user and groups (or, with --join, a join token for nodes), valid for --ttl')
    .option('--user <name>', 'the user the token stands for (its sub; RBAC subjects of kind User name it)')
    .option(
      '--join',
      'a join token (id.secret) that agents register with, stored hashed in the database (needs --database-url, $DATABASE_URL or a local cluster)',
    )
    .option('--description <text>', 'with --join: what the join token is for')
    .option('--token-file <file>', "with --join: store this join token (e.g. a Secret's) instead of making a new one")
    .option(
      '--database-url <url>',
      "with --join: the cluster's PostgreSQL (default $DATABASE_URL, else the local cluster's)",
    )
    .option('--group <name>', 'a group of the user (repeatable; system:masters is cluster-admin)', collect, [])
    .option('--ttl <duration>', 'how long it is valid, e.g. 1h, 30m, 720h (at most a year)', '24h')
    .option('--signing-key <file>', "the private signing key (a JWK or PKCS#8 PEM; default: the cluster home's)")
    .option('--issuer <iss>', 'the issuer the replicas trust', process.env.FENCER_TOKEN_ISSUER ?? 'fencer')
    .option('-o, --output <format>', 'json: the token with its id and expiry')
    .action(async (opts: CreateOptions) => {
      const ttlMs = parseDuration(opts.ttl);
      if (ttlMs === null || ttlMs === 0) fail(`--ttl: "${opts.ttl}" is not a positive duration (use 30m, 24h)`);
      if (opts.output !== undefined && opts.output !== 'json') fail(`--output: "${opts.output}" is not json`);
      if (opts.join) return createJoinToken(opts, ttlMs!);
      if (opts.user === undefined || opts.user === '') fail('--user is required (or --join for a join token)');
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
      const minted = await mintToken(key, { issuer: opts.issuer, user: opts.user!, groups: opts.group, ttlMs: ttlMs! });
      process.stdout.write(
        opts.output === 'json'
          ? `${JSON.stringify({ token: minted.token, jti: minted.jti, expiresAt: minted.expiresAt.toISOString() })}\n`
          : `${minted.token}\n`,
      );
    });
}

/**
 * A join token stored (hashed, with its expiry) in the cluster's database: whoever holds the
 * database's credentials may let nodes in, as whoever holds the signing key may mint users.
 */
async function createJoinToken(opts: CreateOptions, ttlMs: number): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { parseJoinToken } = await import('../domain/node-identity.js');
  const { databaseUrlOf, readClusterState } = await import('../simulator/state.js');
  const { createPool } = await import('../store/db.js');
  const store = await import('../store/nodes.js');
  if (ttlMs > 366 * 86_400_000) fail(`--ttl: ${opts.ttl} is longer than a year`);
  const local = readClusterState();
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL ?? (local ? databaseUrlOf(local) : undefined);
  if (!databaseUrl) fail('--join: no database (pass --database-url, set DATABASE_URL, or start a local cluster)');
  let given;
  if (opts.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.tokenFile, 'utf8').trim();
    } catch (err) {
      fail(`--token-file: cannot read ${opts.tokenFile}: ${(err as Error).message}`);
    }
    given =
      parseJoinToken(text!) ??
      fail(`--token-file: ${opts.tokenFile} does not hold a join token (id.secret: 6 and 16 of [a-z0-9])`);
  }
  const db = createPool({ databaseUrl: databaseUrl!, replica: 'cli', max: 1 });
  try {
    const made = await store
      .createJoinToken(db, ttlMs, opts.description ?? '', given ?? undefined)
      .catch((err: Error) => fail(`--join: ${err.message}`));
    process.stdout.write(
      opts.output === 'json'
        ? `${JSON.stringify({ token: made.token, id: made.id, expiresAt: made.expiresAt.toISOString() })}\n`
        : `${made.token}\n`,
    );
  } finally {
    await db.end();
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
