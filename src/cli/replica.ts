// `fencer replica`: run one control-plane replica in this process.
import type { Command } from 'commander';
import { Replica } from '../replica.js';
import { timingsFromEnv } from '../config.js';
import { createLogger } from '../log.js';
import { onTerminate } from '../lifecycle.js';
import { DEFAULT_POLICY, parsePolicy, policyName } from '../scheduling/policies.js';

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
      '--placement-policy <ordering+fit>',
      'how placement orders pending jobs and picks nodes (default: $FENCER_PLACEMENT_POLICY, else ' +
        policyName(DEFAULT_POLICY).replace(' + ', '+') +
        ')',
    )
    .option(
      '--fair-share <on|off>',
      'queues share the cluster by weight (on), or one backlog in arrival order (off) (default: $FENCER_FAIR_SHARE, else on)',
    )
    .action(
      async (opts: {
        name: string;
        port: string;
        host: string;
        advertiseUrl?: string;
        databaseUrl?: string;
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
        const logger = createLogger({ replica: opts.name });
        const replica = new Replica({
          name: opts.name,
          host: opts.host,
          port,
          advertiseUrl,
          databaseUrl,
          timings: timingsFromEnv(),
          logger,
          placementPolicy,
          fairShare: fairShareText === 'on',
        });
        onTerminate(
          () => replica.stop(),
          (msg) => logger.info(msg),
        );
        await replica.start();
      },
    );
}
