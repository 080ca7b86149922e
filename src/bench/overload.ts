// The overload run of issue 10, as a user would try it: 3 replicas and 5 nodes take 2,000 short
// jobs (0.5-2 s) while 16 clients list every job on every replica in a loop, starving the API
// pools. Before claims, 4 assignments came back Unconfirmed although their nodes had run them,
// and those jobs ran again. The verdict is the checker's, over the history and the node logs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { createPool } from '../store/db.js';
import { delay } from '../lifecycle.js';
import { ApiClient, bearer, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import { seededRandom } from '../seeded-random.js';
import { check, verdictOf, type Verdict } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import { unfinishedCount } from '../store/jobs.js';
import { MOST_PER_PAGE, type Page } from '../domain/list-pages.js';

export interface OverloadOptions {
  jobs: number;
  listers: number;
  listSeconds: number;
  seed: number;
  log: (line: string) => void;
}

export interface OverloadResult {
  options: Omit<OverloadOptions, 'log'>;
  verdict: Verdict;
  /** GET /api/v1/jobs answered, and answered 503 (busy) */
  lists: { ok: number; busy: number; failed: number };
  /** assignments that ended Unconfirmed although their node's log shows them started */
  unconfirmedButRan: number;
  /** assignments ended Unconfirmed in all */
  unconfirmed: number;
  /** jobs with more than one start in the node logs */
  ranMoreThanOnce: number;
  /** claims the control plane refused (run log reject claim-refused / claim-late) */
  claimsRefused: number;
  finishMs: number;
}

export async function runOverloadBench(opts: OverloadOptions): Promise<OverloadResult> {
  const random = seededRandom(opts.seed);
  const home = mkdtempSync(join(tmpdir(), 'fencer-overload-'));
  opts.log(`starting 3 replicas and 5 nodes (home ${home})`);
  const cluster = await Cluster.start({ replicas: 3, nodes: 5, home, timings: DEFAULT_TIMINGS });
  // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
  cluster.exportClientEnv();
  const db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'bench', max: 2 });
  const lists = { ok: 0, busy: 0, failed: 0 };
  try {
    const started = Date.now();
    // Each lister reads every job, the largest page at a time, and starts over at the end.
    const listing = Array.from({ length: opts.listers }, async (_, i) => {
      let token: string | undefined;
      for (let n = 0; Date.now() - started < opts.listSeconds * 1000; n++) {
        const url = cluster.replicaUrls[(i + n) % cluster.replicaUrls.length]!;
        const query = `limit=${MOST_PER_PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
        const res = await cluster
          .fetch(`${url}/api/v1/jobs?${query}`, {
            headers: bearer(),
            signal: AbortSignal.timeout(10_000),
          })
          .catch(() => null);
        if (res === null) lists.failed++;
        else if (res.status === 503) lists.busy++;
        else lists.ok++;
        if (res?.ok) token = ((await res.json().catch(() => ({}))) as Page<unknown>).metadata?.continue;
        else await res?.arrayBuffer().catch(() => undefined);
      }
    });
    const jobs = Array.from({ length: opts.jobs }, (_, i) => ({
      apiVersion: 'fencer.dev/v1',
      kind: 'Job',
      metadata: { name: `ov-${i}` },
      spec: { resources: { cpu: '500m', memory: '256Mi' }, duration: `${500 + Math.round(random() * 1500)}ms` },
    }));
    opts.log(`submitting ${opts.jobs} jobs while ${opts.listers} clients list every job for ${opts.listSeconds} s`);
    for (let first = 0; first < jobs.length; first += 100) {
      // Each batch starts on the next replica, and is sent again until one takes it: a 429 (the
      // backlog is full, as it should be under this load) like a replica that does not answer.
      const k = (first / 100) % cluster.replicaUrls.length;
      const replicas = [...cluster.replicaUrls.slice(k), ...cluster.replicaUrls.slice(0, k)];
      await new ApiClient(replicas, {
        timeoutMs: 10_000,
        retryLaterForMs: 0,
        tryNextStatuses: [429, ...TRY_NEXT_AFTER_500],
        rounds: Infinity,
        roundPauseMs: 200,
      }).submitJobs(jobs.slice(first, first + 100));
    }
    await Promise.all(listing);
    for (;;) {
      const left = await unfinishedCount(db);
      if (left === 0) break;
      await delay(500);
    }
    const finishMs = Date.now() - started;
    const input = await readCheckInput(db, [join(home, 'nodes')]);
    const { history, runs } = input;
    const verdict = verdictOf(check(input));
    const startedIds = new Set(runs.filter((l) => l.event === 'start').map((l) => l.assignment));
    const unconfirmedIds = history
      .filter((r) => r.entity === 'assignment' && r.toState === 'Unconfirmed')
      .map((r) => r.assignment);
    const startsPerJob = new Map<string, number>();
    for (const l of runs) if (l.event === 'start') startsPerJob.set(l.jobUid, (startsPerJob.get(l.jobUid) ?? 0) + 1);
    return {
      options: { jobs: opts.jobs, listers: opts.listers, listSeconds: opts.listSeconds, seed: opts.seed },
      verdict,
      lists,
      unconfirmed: unconfirmedIds.length,
      unconfirmedButRan: unconfirmedIds.filter((id) => id !== null && startedIds.has(id)).length,
      ranMoreThanOnce: [...startsPerJob.values()].filter((n) => n > 1).length,
      claimsRefused: runs.filter(
        (l) => l.event === 'reject' && (l.reason === 'claim-refused' || l.reason === 'claim-late'),
      ).length,
      finishMs,
    };
  } finally {
    await db.end();
    await cluster.stop();
    if (process.env.FENCER_KEEP_BENCH_HOME) opts.log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
}
