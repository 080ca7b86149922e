// The campaign's table, as printed and as written to bench/results/.
import type { CampaignResult } from './campaign.js';
import { machine, percentile } from '../report/results.js';

function stats(values: number[]): string {
  if (values.length === 0) return 'n/a';
  const ms = (v: number | null) => (v === null ? 'n/a' : `${(v / 1000).toFixed(2)} s`);
  return `p50 ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}, max ${ms(Math.max(...values))} (${values.length})`;
}

export function campaignReport(result: CampaignResult, command: string, date = new Date()): string {
  const r = result.report;
  const faults =
    Object.entries(result.faults)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  const rows: Array<[string, string]> = [
    ['failovers: leader SIGKILLed', String(result.killMs.length)],
    ['failovers: leader SIGSTOPped', String(result.freezeMs.length)],
    ['other faults', faults],
    ['jobs placed on two nodes (history)', String(r.placedTwice.length)],
    ['jobs run on two nodes at overlapping times (node logs)', String(r.overlappingRuns.length)],
    ['nodes running more than they have, at any instant (node logs)', String(r.overcommitted.length)],
    ['jobs lost', String(r.lost.length)],
    ['jobs placed or started before due', String(r.early.length)],
    ['jobs placed before their needs succeeded', String(r.unmetNeeds.length)],
    ['instants a queue ran past its limits', String(r.overQueueLimit.length)],
    [
      'cron occurrences handled twice / fired early / missed / stuck; runs overlapping under Forbid or Replace',
      `${r.cronHandledTwice.length} / ${r.cronEarly.length} / ${r.cronMissed.length} / ${r.cronStuck.length}; ${r.cronOverlap.length} (of ${r.counts.cronFired} fired, ${r.counts.cronSkipped} skipped)`,
    ],
    [
      'jobs submitted (accepted) / finished',
      `${result.jobsAccepted} / ${Object.values(r.finished).reduce((a, b) => a + b, 0)} (${JSON.stringify(r.finished)})`,
    ],
    [
      'jobs and workflows unfinished when the flow stopped; until all ended',
      `${result.backlog.jobs}; ${(result.backlog.drainMs / 1000).toFixed(0)} s`,
    ],
    ['workflows among them, by how they closed', `${result.workflowsAccepted} (${JSON.stringify(result.workflows)})`],
    ['healthy nodes wrongly marked dead', String(result.wronglyDead.length)],
    ['old-leader writes the database rejected', String(result.rejectedOldLeaderWrites)],
    ['time to a new leader after a kill', stats(result.killMs)],
    ['time to a new leader after a freeze', stats(result.freezeMs)],
    ['killed node: until all its jobs run elsewhere', stats(result.nodeRecoveryMs)],
    ['PostgreSQL restarted: until the next decision', stats(result.databaseResumeMs)],
    ['HA primary killed, frozen or cut off: until a new Patroni primary', stats(result.postgresFailoverMs)],
    ['HA primary killed, frozen or cut off: until the next placement', stats(result.postgresDecisionMs)],
  ];
  return [
    `# Failover campaign, ${date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${command}\``,
    `- machine: ${machine()}`,
    `- date: ${date.toISOString()}; took ${(result.durationMs / 1000).toFixed(0)} s`,
    `- cluster: 3 replicas, ${result.options.nodes} nodes, ${result.options.runtime} runtime, lease ${result.leaseMs} ms, ${result.options.jobsPerSecond} jobs/s submitted, seed ${result.options.seed}, pace ${result.options.pace} (the next failover waits for ${result.options.pace === 'whole-cluster' ? 'every replica to be back' : 'a leader and one standby only'})`,
    "- the job and run counts come from the independent checker (chaos/check: the history table and the nodes' NDJSON logs)",
    '',
    '| | |',
    '|---|---|',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    '',
  ].join('\n');
}

export function campaignClean(result: CampaignResult): boolean {
  const r = result.report;
  return (
    r.placedTwice.length === 0 &&
    r.overlappingRuns.length === 0 &&
    r.overcommitted.length === 0 &&
    r.lost.length === 0 &&
    r.early.length === 0 &&
    r.unmetNeeds.length === 0 &&
    r.overQueueLimit.length === 0 &&
    r.cronHandledTwice.length === 0 &&
    r.cronEarly.length === 0 &&
    r.cronMissed.length === 0 &&
    r.cronOverlap.length === 0 &&
    r.cronStuck.length === 0 &&
    result.wronglyDead.length === 0
  );
}
