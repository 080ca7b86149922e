// `fencer replica`: run one control-plane replica in this process.
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { fencerHome } from '../simulator/state.js';
import { Replica } from '../replica.js';
import { timingsFromEnv } from '../config.js';
import { createLogger } from '../log.js';
import { onTerminate } from '../lifecycle.js';
import { edgeOptionsFromEnv, listOf } from '../api/edge/options.js';
import { DEFAULT_POLICY, parsePolicy, policyName } from '../placement/policies.js';

/** Whether a replica listening here is reached from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

async function trustedIssuers(opts: { jwks?: string; issuer?: string }) {
  const { keySetFrom, DEFAULT_ISSUER } = await import('../auth/tokens/verify.js');
  const { authFiles } = await import('../auth/tokens/keys.js');
  const source = opts.jwks ?? process.env.FENCER_JWKS ?? authFiles(fencerHome()).jwks;
  if (!/^https?:\/\//i.test(source) && !existsSync(source))
    throw new Error(
      `--jwks: no key set at ${source} (start the cluster with \`fencer cluster up\`, which makes one, or pass --jwks; --insecure-no-auth on loopback only)`,
    );
  const issuer = opts.issuer ?? process.env.FENCER_TOKEN_ISSUER ?? DEFAULT_ISSUER;
  return { issuers: [{ issuer, keys: keySetFrom(source) }] };
}

function readPem(file: string, option: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${option}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

export function registerReplicaCommand(program: Command): void {
  program
    .command('replica')
    .description('run a control-plane replica (API on any replica; controllers while it leads)')
    .requiredOption('--name <name>', 'replica name, unique in the cluster')
    .option('--port <port>', 'HTTP port', '7070')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--advertise-url <url>',
      'URL other machines reach this replica by, shown by `fencer cluster status` (default: $FENCER_ADVERTISE_URL, else http://HOST:PORT)',
    )
    .option('--database-url <url>', 'PostgreSQL URL (default: $DATABASE_URL)')
    .option(
      '--pooled-database-url <url>',
      "a PgBouncer in transaction mode before the same database, for API and node traffic; the lease, LISTEN and the leader's decisions stay on --database-url (default: $FENCER_POOLED_DATABASE_URL, else none)",
    )
    .option(
      '--placement-policy <ordering+fit>',
      'how placement orders pending jobs and picks nodes (default: $FENCER_PLACEMENT_POLICY, else ' +
        policyName(DEFAULT_POLICY).replace(' + ', '+') +
        ')',
    )
    .option(
      '--fair-share <on|off>',
      'queues share the cluster by weight (on), or one backlog in arrival order (off) (default: $FENCER_FAIR_SHARE, else on)',
    )
    .option(
      '--jwks <file|url>',
      "the public keys tokens are verified with (default: $FENCER_JWKS, else the cluster home's auth/jwks.json)",
    )
    .option('--issuer <iss>', 'the issuer of the tokens trusted (default: $FENCER_TOKEN_ISSUER, else fencer)')
    .option(
      '--tls-cert <file>',
      'a PEM certificate (and chain): the port answers HTTPS, and plain HTTP from loopback addresses only',
    )
    .option('--tls-key <file>', "the certificate's PEM private key")
    .option(
      '--allowed-hosts <names>',
      "host names clients may reach the replicas by besides their advertised URLs' (a Service, a proxy), comma-separated (default: $FENCER_ALLOWED_HOSTS)",
    )
    .option(
      '--front-proxies <names>',
      'users or groups whose X-Remote-User the history believes (an authenticating proxy), comma-separated (default: $FENCER_FRONT_PROXIES, else none)',
    )
    .option(
      '--insecure-http',
      'answer plain HTTP from any address: with --tls-cert beside HTTPS, without it off loopback (tokens then cross the network in clear: only behind a proxy or mesh that encrypts)',
    )
    .option('--insecure-no-auth', 'no tokens, no RBAC: anyone who reaches the replica may do anything (loopback only)')
    .action(
      async (opts: {
        jwks?: string;
        issuer?: string;
        insecureNoAuth?: boolean;
        allowedHosts?: string;
        frontProxies?: string;
        insecureHttp?: boolean;
        tlsCert?: string;
        tlsKey?: string;
        name: string;
        port: string;
        host: string;
        advertiseUrl?: string;
        databaseUrl?: string;
        pooledDatabaseUrl?: string;
        placementPolicy?: string;
        fairShare?: string;
      }) => {
        const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL;
        if (!databaseUrl) throw new Error('--database-url or DATABASE_URL is required');
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port <= 0 || port > 65535)
          throw new Error(`--port: "${opts.port}" is not a TCP port`);
        const advertiseUrl = opts.advertiseUrl ?? process.env.FENCER_ADVERTISE_URL;
        if (advertiseUrl !== undefined && !/^https?:\/\/[^/]+$/.test(advertiseUrl))
          throw new Error(`--advertise-url: "${advertiseUrl}" is not an http(s)://host[:port] URL`);
        process.env.FENCER_REPLICA_NAME = opts.name; // for the test-only hook in lease/fenced.ts
        const policyText = opts.placementPolicy ?? process.env.FENCER_PLACEMENT_POLICY;
        const placementPolicy = policyText ? parsePolicy(policyText) : DEFAULT_POLICY;
        const fairShareText = opts.fairShare ?? process.env.FENCER_FAIR_SHARE ?? 'on';
        if (fairShareText !== 'on' && fairShareText !== 'off')
          throw new Error(`--fair-share: "${fairShareText}" is not on or off`);
        if (opts.insecureNoAuth && !isLoopbackHost(opts.host))
          throw new Error(
            `--insecure-no-auth: refused on ${opts.host}, which is not a loopback address (127.0.0.1, ::1, localhost): without authentication anyone who reaches the replica may do anything`,
          );
        if (!opts.tlsCert && !opts.insecureHttp && !isLoopbackHost(opts.host))
          throw new Error(
            `--tls-cert: required to listen on ${opts.host}, which is not a loopback address: a token sent over plain HTTP is a token stolen (--insecure-http only behind a proxy or mesh that encrypts)`,
          );
        const logger = createLogger({ replica: opts.name });
        const auth = opts.insecureNoAuth ? ('insecure-no-auth' as const) : await trustedIssuers(opts);
        if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined))
          throw new Error('--tls-cert and --tls-key go together');
        const tls =
          opts.tlsCert && opts.tlsKey
            ? {
                cert: readPem(opts.tlsCert, '--tls-cert'),
                key: readPem(opts.tlsKey, '--tls-key'),
                plainHttp: opts.insecureHttp ? ('anywhere' as const) : ('loopback' as const),
                files: {
                  cert: opts.tlsCert,
                  key: opts.tlsKey,
                  onReload: (error: Error | null) =>
                    error
                      ? logger.warn({ err: error }, 'the TLS certificate changed but does not load: the old one serves')
                      : logger.info('TLS certificate read again (it changed)'),
                },
              }
            : undefined;
        if (opts.insecureHttp)
          logger.warn(
            'PLAIN HTTP FROM ANY ADDRESS (--insecure-http): tokens cross the network in clear unless something else encrypts it',
          );
        const replica = new Replica({
          name: opts.name,
          host: opts.host,
          port,
          advertiseUrl,
          databaseUrl,
          pooledDatabaseUrl: opts.pooledDatabaseUrl ?? (process.env.FENCER_POOLED_DATABASE_URL || undefined),
          timings: timingsFromEnv(),
          logger,
          placementPolicy,
          fairShare: fairShareText === 'on',
          auth,
          tls,
          edge: {
            ...edgeOptionsFromEnv(),
            ...(opts.allowedHosts === undefined ? {} : { allowedHosts: listOf(opts.allowedHosts) }),
            ...(opts.frontProxies === undefined ? {} : { frontProxies: listOf(opts.frontProxies) }),
          },
        });
        onTerminate(
          () => replica.stop(),
          (msg) => logger.info(msg),
        );
        await replica.start();
      },
    );
}
