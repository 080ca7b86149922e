// `fencer token create`: a bearer token signed with the cluster's key, printed on stdout for
// kubectl (`--token`, or a kubeconfig's user), the dashboard and scripts. Whoever can read the
// signing key can mint any identity, system:masters included: the key stays in the cluster's
// home (mode 0600) or wherever --signing-key says, never on the replicas.
import type { Command } from 'commander';
import { parseDuration } from '../domain/duration.js';
import { fencerHome } from '../simulator/state.js';
import { fail } from './options.js';
import type { Db } from '../store/db.js';
import type { JoinToken } from '../domain/node-identity.js';

interface CreateOptions {
  user?: string;
  join?: boolean;
  node?: string;
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
    .option(
      '--node <name>',
      'with --join: the one node name the token registers (as cluster up makes one per node); default: any name',
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
      if (opts.node !== undefined && !opts.join) fail('--node: only with --join (a join token bound to one node)');
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

  // Join tokens are rows of the cluster's database, so an operator lists and withdraws them there
  // (as kubeadm token list / delete); a user's token is no row, so it is revoked by its id.
  token
    .command('list')
    .description(
      'the join tokens nodes register with (--join): id, the node it is bound to, TTL, expiry, description; never a secret',
    )
    .option('--join', 'join tokens (the only tokens stored: a user token is revoked by its id, fencer token revoke)')
    .option('--database-url <url>', "the cluster's PostgreSQL (default $DATABASE_URL, else the local cluster's)")
    .option('-o, --output <format>', 'json: every token as an object')
    .action(async (opts: DatabaseOptions & { join?: boolean; output?: string }) => {
      if (!opts.join) fail('list: pass --join (only join tokens are stored; user tokens are revoked by id)');
      if (opts.output !== undefined && opts.output !== 'json') fail(`--output: "${opts.output}" is not json`);
      const { listJoinTokens } = await import('../agent-protocol/nodes-store.js');
      const rows = await withClusterDatabase(opts, listJoinTokens);
      const now = Date.now();
      if (opts.output === 'json') {
        const items = rows.map((r) => ({
          id: r.id,
          description: r.description,
          node: r.node_name,
          createdAt: r.created_at.toISOString(),
          expiresAt: r.expires_at.toISOString(),
          expired: r.expired,
        }));
        process.stdout.write(`${JSON.stringify({ items })}
`);
        return;
      }
      const { renderTable } = await import('../report/table.js');
      const { humanDuration } = await import('../domain/duration.js');
      process.stdout.write(
        renderTable(
          ['ID', 'NODE', 'TTL', 'EXPIRES', 'DESCRIPTION'],
          rows.map((r) => [
            r.id,
            r.node_name ?? '<any>',
            r.expired ? '<expired>' : humanDuration(r.expires_at.getTime() - now),
            r.expires_at.toISOString(),
            r.description || '<none>',
          ]),
        ),
      );
    });

  token
    .command('delete')
    .description(
      'withdraw a join token (--join): no node registers with it any more; joined nodes keep their credentials',
    )
    .argument('<id>', "the join token's id, or the whole token (id.secret)")
    .option('--join', 'a join token (the only tokens stored)')
    .option('--database-url <url>', "the cluster's PostgreSQL (default $DATABASE_URL, else the local cluster's)")
    .action(async (given: string, opts: DatabaseOptions & { join?: boolean }) => {
      if (!opts.join) fail('delete: pass --join (a user token is revoked by its id: fencer token revoke JTI)');
      const id = given.split('.')[0]!;
      if (!/^[a-z0-9]{6}$/.test(id)) fail(`delete: "${given}" is no join token id (6 of [a-z0-9])`);
      const { deleteJoinToken } = await import('../agent-protocol/nodes-store.js');
      if (!(await withClusterDatabase(opts, (db) => deleteJoinToken(db, id)))) fail(`join token "${id}" not found`);
      process.stdout.write(`join token "${id}" deleted\n`);
    });

  token
    .command('revoke')
    .description(
      'refuse a user token from now on, by its id (its jti; fencer token create -o json prints it) or the token itself',
    )
    .argument('<jti|token>', "the token's id, or the whole token (its id and expiry are read from it)")
    .option('--reason <text>', 'why, kept with the revocation')
    .option('--database-url <url>', "the cluster's PostgreSQL (default $DATABASE_URL, else the local cluster's)")
    .action(async (given: string, opts: DatabaseOptions & { reason?: string }) => {
      const { revokeToken } = await import('../store/auth.js');
      const { MAX_TOKEN_TTL_MS } = await import('../auth/tokens/mint.js');
      const { userInfo } = await import('node:os');
      let jti = given;
      // Kept until the token could no longer verify: its own expiry, else the longest a token lives.
      let expiresAt = new Date(Date.now() + MAX_TOKEN_TTL_MS);
      if (given.split('.').length === 3) {
        const { decodeJwt } = await import('jose');
        let claims;
        try {
          claims = decodeJwt(given);
        } catch (err) {
          fail(`revoke: not a token: ${(err as Error).message}`);
        }
        if (typeof claims!.jti !== 'string' || claims!.jti === '') fail('revoke: the token has no jti');
        jti = claims!.jti!;
        if (typeof claims!.exp === 'number') expiresAt = new Date(claims!.exp * 1000);
      } else if (!/^[\x21-\x7e]{1,200}$/.test(given)) fail(`revoke: "${given}" is no token id`);
      const fresh = await withClusterDatabase(opts, (db) =>
        revokeToken(db, { jti, expiresAt, actor: `cli:${userInfo().username}`, reason: opts.reason ?? null }),
      );
      process.stdout.write(`token "${jti}" ${fresh ? 'revoked' : 'was already revoked'}\n`);
    });
}

interface DatabaseOptions {
  databaseUrl?: string;
}

/** `use` with a connection to the cluster's database: --database-url, $DATABASE_URL, else the local cluster's. */
async function withClusterDatabase<T>(opts: DatabaseOptions, use: (db: Db) => Promise<T>): Promise<T> {
  const { databaseUrlOf, readClusterState } = await import('../simulator/state.js');
  const { createPool } = await import('../store/db.js');
  const local = readClusterState();
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL ?? (local ? databaseUrlOf(local) : undefined);
  if (!databaseUrl) fail('no database (pass --database-url, set DATABASE_URL, or start a local cluster)');
  const db = createPool({ databaseUrl: databaseUrl!, replica: 'cli', max: 1 });
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}

/**
 * A join token stored (hashed, with its expiry) in the cluster's database: whoever holds the
 * database's credentials may let nodes in, as whoever holds the signing key may mint users.
 */
async function createJoinToken(opts: CreateOptions, ttlMs: number): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { parseJoinToken } = await import('../domain/node-identity.js');
  const store = await import('../agent-protocol/nodes-store.js');
  const { isDns1123Subdomain } = await import('../domain/names.js');
  if (ttlMs > 366 * 86_400_000) fail(`--ttl: ${opts.ttl} is longer than a year`);
  if (opts.node !== undefined && !isDns1123Subdomain(opts.node))
    fail(`--node: "${opts.node}" is not a node name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')`);
  let given: JoinToken | undefined;
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
  const made = await withClusterDatabase(opts, (db) =>
    store
      .createJoinToken(db, ttlMs, opts.description ?? '', given ?? undefined, opts.node ?? null)
      .catch((err: Error) => fail(`--join: ${err.message}`)),
  );
  // The same token stored again keeps what it was stored with (nothing new was written).
  if (made.node !== (opts.node ?? null))
    fail(
      `--node: join token ${made.id} is already stored for ${made.node === null ? 'any node' : `node "${made.node}"`}: delete it first (fencer token delete --join ${made.id})`,
    );
  process.stdout.write(
    opts.output === 'json'
      ? `${JSON.stringify({ token: made.token, id: made.id, node: made.node, expiresAt: made.expiresAt.toISOString() })}\n`
      : `${made.token}\n`,
  );
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
