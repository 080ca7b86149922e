// The worker agent: one simulated node. It registers, heartbeats, keeps one watch stream open on
// some replica, runs what its snapshots assign (a job "runs" by holding its CPU and memory for
// its duration), reports start and finish, and writes every start and stop to its run log.
//
// Its one hard duty is never to run a job the control plane may give to another node
// (docs/architecture.md, promise 5), whatever is delayed:
// - an assignment runs only once its start is committed: the "started" report is the claim.
//   Until then the control plane may take the placement back (confirm timeout); after it, only
//   the node's death or the node's own report ends the assignment. A claim answered later than
//   the confirm timeout after it was sent is given up, not run, so a run always begins within
//   that long of its commit (job-reconcile relies on it to expire silent runs).
// - a node cut off from the control plane stops its jobs before the control plane may declare
//   it dead (self-fence, on exactly the clocks the death rule reads: its heartbeats and its
//   watch stream).
// Every local timing decision uses performance.now(): wall time can jump, the monotonic clock
// only moves forward (and keeps moving while frozen).

import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type {
  AssignmentMessage,
  HeartbeatResponse,
  RegisterRequest,
  RegisterResponse,
} from '../agent-protocol/messages.js';
import { FENCE_CHECK_MS, selfFenceRule, type SelfFenceRule, type Timings } from '../config.js';
import { isBroken } from '../testing/broken-guards.js';
import { newAcceptanceMemory, planSnapshot, type AcceptanceOptions } from './acceptance.js';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  ReplicaClient,
  ReplicaUnreachableError,
  WatchSilentError,
  type WatchStream,
} from './replica-client.js';
import { RunLog, readRunLog, type RejectReason, type RunLogLine, type StopReason } from './run-log.js';
import { agentHeartbeatSeconds, agentJobsRunning, agentRejected, agentRuns, agentSelfFences } from './metrics.js';
import { ReportBatcher, type Report } from './report-batcher.js';
import { delay } from '../lifecycle.js';
import { parseCpu, parseMemory } from '../domain/quantity.js';
import { DEFAULT_MAX_JOBS } from '../domain/resources.js';
import { NODE_ROUTES } from '../agent-protocol/routes.js';

export interface AgentOptions {
  name: string;
  cpu: string;
  memory: string;
  /** The most runs it holds at once (default DEFAULT_MAX_JOBS): the control plane places no more. */
  maxJobs?: number;
  labels: Record<string, string>;
  /** Images this node holds (advertised at registration). */
  images?: string[];
  replicas: string[];
  /**
   * The join token (`id.secret`, docs/security.md) this node registers with when it holds no
   * credential of its own; none: a replica without authentication.
   */
  joinToken?: string;
  /** The CA (PEM) an https replica's certificate is verified against; default the system's CAs. */
  ca?: string;
  logFile: string;
  timings: Timings;
  logger: Logger;
}

export type FenceCause = 'no-heartbeat' | 'no-watch';

/**
 * The self-fence rule (config.ts, selfFenceRule: the death rule on the node's clocks, earlier by
 * the margin), as a pure function of the local monotonic clock. `lastHeartbeat` is when the
 * newest heartbeat answered 2xx was SENT (an answer that lands after a freeze is old news);
 * `watchHeardAt` is when its watch stream last delivered anything (keepalives come every 500 ms):
 * the stream may have been closed at the replica's end from then on, for all the node knows (a
 * cut can stop what flows to the node before the node notices).
 * - 'no-heartbeat': no heartbeat for rule.silentMs;
 * - 'no-watch': the stream closed more than rule.disconnectedMs ago and heartbeats stopped too
 *   (rule.quietMs), or it has been closed for rule.silentMs.
 */
export function selfFenceCause(
  now: number,
  lastHeartbeat: number,
  watchHeardAt: number,
  rule: SelfFenceRule,
): FenceCause | null {
  if (now - lastHeartbeat > rule.silentMs) return 'no-heartbeat';
  if (
    now - watchHeardAt > rule.disconnectedMs &&
    (now - lastHeartbeat > rule.quietMs || now - watchHeardAt > rule.silentMs)
  ) {
    return 'no-watch';
  }
  return null;
}

type EndReport = Exclude<Report, { kind: 'started' }>;

interface RunningJob {
  assignment: AssignmentMessage;
  startedAt: number;
  timer: NodeJS.Timeout;
}

/** An assignment whose start (the claim) was sent and not yet answered. */
interface Claim {
  assignment: AssignmentMessage;
  /** Local monotonic time the claim was first queued: the run must begin within the confirm timeout of it. */
  sentAt: number;
}

const RETRY_MS = 100; // between rounds when no replica answered
const REGISTER_BACKOFF_MAX_MS = 1000;
// A registration's answer is worth having however late (it counts from its sending), and one
// given up at 500 ms is still done by the replica: when a thousand nodes register at once, giving
// up and asking again (over a new TLS connection) only multiplied the replicas' work.
const REGISTER_TIMEOUT_MS = 10_000;
const REPORT_BACKOFF_MAX_MS = 1000;
const REPORT_DRAIN_MS = 2000; // how long stop() lets unanswered finish reports keep trying
const PREDECESSOR_REPORT_WAIT_MS = 2000; // how long registration waits for the previous process's outcomes
const PREDECESSOR_WINDOW_MS = 10 * 60_000; // outcomes older than this are of no use to anyone

export class Agent {
  private readonly client: ReplicaClient;
  private readonly log: Logger;
  /** The guards broken on purpose in this process (none in production). */
  private readonly guards: Required<AcceptanceOptions> & {
    selfFenceBroken: boolean;
    claimFirstBroken: boolean;
    fenceOnHeartbeatsBroken: boolean;
  };
  private readonly lifetime = new AbortController(); // loops, watch, heartbeats
  private readonly reportsLifetime = new AbortController(); // outlives `lifetime` by the drain
  private readonly memory = newAcceptanceMemory();
  private readonly jobs = new Map<string, RunningJob>();
  private readonly claims = new Map<string, Claim>();
  /** How each run that ended here ended, until the control plane stops listing it as active. */
  private readonly outcomes = new Map<string, EndReport>();
  /** Assignments with an end report queued or in flight (so a snapshot does not queue another). */
  private readonly endsInFlight = new Set<string>();
  private readonly reportsInFlight = new Set<Promise<void>>();
  private readonly reports: ReportBatcher;
  private runLog: RunLog | null = null;
  private starting: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private loops: Promise<void>[] = [];
  private fenceTimer: NodeJS.Timeout | null = null;
  private watch: WatchStream | null = null;
  private lastHeartbeat = Number.NEGATIVE_INFINITY;
  private readonly fenceRule: SelfFenceRule;
  /** When the last watch stream, if closed, last delivered anything (or when the node registered). */
  private watchClosedAt: number | null = null;
  private fenced = false;
  /** This process's identity: re-registering under it keeps our jobs; a new process gets a new one. */
  private readonly incarnation = randomUUID();
  /** This process's place in the node's sequence of processes (nextGeneration), set at start. */
  private generation = 0;
  private watchAttempts = 0;
  /** This process's node credential (its registration's answer, renewed with heartbeats), once registered. */
  private credential: string | null = null;

  constructor(private readonly options: AgentOptions) {
    this.log = options.logger;
    // Broken on purpose (src/testing/broken-guards.ts): each read once, here.
    this.guards = {
      epochCheckBroken: isBroken('node-epoch-check'),
      dedupeBroken: isBroken('node-dedupe'),
      selfFenceBroken: isBroken('self-fence'),
      claimFirstBroken: isBroken('claim-first'),
      fenceOnHeartbeatsBroken: isBroken('fence-on-heartbeats'),
    };
    this.fenceRule = selfFenceRule(options.timings);
    this.client = new ReplicaClient({ replicas: options.replicas, spreadKey: options.name, ca: options.ca });

    // Half the confirm timeout: a claim answered later than that is given back anyway.
    const reportTimeoutMs = Math.max(DEFAULT_REQUEST_TIMEOUT_MS, options.timings.confirmTimeoutMs / 2);
    this.reports = new ReportBatcher(
      this.client,
      options.name,
      this.log,
      this.reportsLifetime.signal,
      (round) => backoffMs(round, REPORT_BACKOFF_MAX_MS),
      reportTimeoutMs,
      (sentAt) => {
        // Broken on purpose (src/testing/broken-guards.ts, fence-on-heartbeats): an answered report counts as a heartbeat.
        if (this.guards.fenceOnHeartbeatsBroken) this.heardBack(sentAt);
      },
    );
  }

  /** Ids of the assignments running now. */
  get running(): string[] {
    return [...this.jobs.keys()];
  }

  /** Registers (retrying until some replica answers), then runs until stop(). */
  start(): Promise<void> {
    this.starting ??= this.run();
    return this.starting;
  }

  /** Stops every job (reason `shutdown`), closes the stream, lets finish reports drain. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async run(): Promise<void> {
    if (this.stopping) return;
    this.generation = nextGeneration(this.options.logFile);
    const predecessor = completedByPredecessor(this.options.logFile);
    this.runLog = new RunLog(this.options.logFile, this.options.name, {
      cpuMillis: parseCpu(this.options.cpu) ?? 0,
      memoryBytes: parseMemory(this.options.memory) ?? 0,
      maxJobs: this.options.maxJobs ?? DEFAULT_MAX_JOBS,
    });
    const guardsBroken = Object.entries(this.guards)
      .filter(([, broken]) => broken)
      .map(([name]) => name);
    if (guardsBroken.length > 0) this.log.warn({ guardsBroken }, 'test-only guard switches are on');
    // The previous process's outcomes go with its own credential, which stays the node's until
    // this process registers (if it has not expired); after that, with this one's.
    this.client.setToken(readCredential(this.options.logFile));
    await this.deliverOutcomes(predecessor);
    if (!(await this.register()) || this.lifetime.signal.aborted) return;
    this.watchClosedAt = performance.now(); // not open yet: the disconnected clock runs from here
    this.fenceTimer = setInterval(() => this.checkFence(), FENCE_CHECK_MS);
    this.loops = [this.loop('heartbeat', () => this.heartbeatLoop()), this.loop('watch', () => this.watchLoop())];
  }

  private async shutdown(): Promise<void> {
    this.lifetime.abort();
    this.watch?.close();
    this.stopAll('shutdown');
    await this.starting?.catch(() => undefined);
    if (this.fenceTimer) clearInterval(this.fenceTimer);
    await Promise.allSettled(this.loops);
    if (this.reportsInFlight.size > 0) {
      const drained = Promise.allSettled([...this.reportsInFlight]);
      await Promise.race([drained, delay(REPORT_DRAIN_MS)]);
      this.reportsLifetime.abort();
      await drained;
    }
    this.reportsLifetime.abort();
    this.runLog?.close();
    this.log.info('agent stopped');
  }

  /**
   * Runs the previous process of this node completed whose outcome may never have reached the
   * control plane (it was killed first): say how they ended, before registering (a new
   * incarnation ends what the old one held as Lost). Given a little while; what is not answered
   * by then goes on trying (an outcome is still taken while its job was not placed again).
   */
  private async deliverOutcomes(assignments: string[]): Promise<void> {
    if (assignments.length === 0) return;
    this.log.info({ runs: assignments.length }, 'reporting the outcomes of the previous process of this node');
    const delivered = Promise.all(
      assignments.map((id) => this.track(this.reportEnd({ kind: 'finished', id, outcome: 'Succeeded' }))),
    );
    await Promise.race([delivered, delay(PREDECESSOR_REPORT_WAIT_MS, this.lifetime.signal)]);
  }

  /** Registers on the first replica that answers; false when stopped first. */
  private async register(): Promise<boolean> {
    const request: RegisterRequest = {
      name: this.options.name,
      capacity: {
        cpu: this.options.cpu,
        memory: this.options.memory,
        ...(this.options.maxJobs === undefined ? {} : { jobs: this.options.maxJobs }),
      },
      labels: this.options.labels,
      images: this.options.images ?? [],
      incarnation: this.incarnation,
      generation: this.generation,
    };
    const signal = this.lifetime.signal;
    // This process's own credential first (a registration again after the node was declared
    // dead), then the join token; nothing at all for a replica without authentication.
    const authorities: Array<string | undefined> = [this.credential ?? undefined, this.options.joinToken].filter(
      (a) => a !== undefined,
    );
    if (authorities.length === 0) authorities.push(undefined);
    for (let round = 0, tried = 0; !signal.aborted; round++) {
      try {
        const reply = await this.client.request<RegisterResponse>(
          'POST',
          NODE_ROUTES.register.path(),
          request,
          signal,
          REGISTER_TIMEOUT_MS,
          authorities[tried],
        );
        if ((reply.status === 401 || reply.status === 403) && tried + 1 < authorities.length) {
          tried++;
          continue;
        }
        if (reply.status >= 300)
          throw new Error(`registration refused: HTTP ${reply.status} ${errorMessage(reply.body)}`);
        this.heardBack(reply.sentAt); // a registration records a heartbeat
        if (reply.body?.credential) this.renewCredential(reply.body.credential);
        this.log.info({ replica: reply.replica, heartbeatIntervalMs: reply.body?.heartbeatIntervalMs }, 'registered');
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        if (!(err instanceof ReplicaUnreachableError)) throw err;
        if (round % 20 === 0) this.log.warn({ err: err.message }, 'no replica answered the registration; retrying');
        await delay(backoffMs(round, REGISTER_BACKOFF_MAX_MS), signal);
      }
    }
    return false;
  }

  /** Sends `credential` from now on, and keeps it beside the run log for the next process's outcomes. */
  private renewCredential(credential: string): void {
    this.credential = credential;
    this.client.setToken(credential);
    writeCredential(this.options.logFile, credential);
  }

  private async heartbeatLoop(): Promise<void> {
    const signal = this.lifetime.signal;
    const path = NODE_ROUTES.heartbeat.path(this.options.name);
    let next = performance.now() + this.options.timings.heartbeatMs;
    while (!signal.aborted) {
      await delay(next - performance.now(), signal);
      if (signal.aborted) return;
      next = performance.now() + this.options.timings.heartbeatMs;
      this.checkFence();
      let status: number;
      try {
        // Hedged, not abandoned: under load a heartbeat's answer can take longer than a request
        // timeout, and it still counts (from its sending). An answer later than the silence
        // window could not keep the node from fencing itself.
        const reply = await this.client.hedged<HeartbeatResponse>('POST', path, {}, this.fenceRule.silentMs, signal);
        status = reply.status;
        if (status < 300) {
          this.heardBack(reply.sentAt);
          if (reply.body?.credential) this.renewCredential(reply.body.credential);
          agentHeartbeatSeconds.observe((performance.now() - reply.sentAt) / 1000);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.log.warn({ err: (err as Error).message }, 'heartbeat reached no replica');
        continue;
      }
      if (status === 410) {
        // Declared dead: its jobs are being given to other nodes right now. Stop them first.
        this.log.warn('control plane declared this node dead; stopping its jobs and registering again');
        this.stopAll('node-dead');
        if (!(await this.register())) return;
      } else if (status === 404) {
        this.log.warn('control plane does not know this node; registering again');
        if (!(await this.register())) return;
      } else if (status === 401) {
        // The credential expired (the node was cut off longer than its life) or its key is gone.
        this.log.warn('node credential refused; registering again');
        this.credential = null;
        if (!(await this.register())) return;
      } else if (status === 403) {
        this.log.warn('refused: another process of this node registered since; this one no longer speaks for it');
      } else if (status >= 300) {
        this.log.warn({ status }, 'heartbeat refused');
      }
    }
  }

  private async watchLoop(): Promise<void> {
    const signal = this.lifetime.signal;
    while (!signal.aborted) {
      let stream: WatchStream;
      try {
        // Numbered, so that an attempt that reaches the database late cannot replace a newer one.
        const path = NODE_ROUTES.watch.path(this.options.name, {
          incarnation: this.incarnation,
          attempt: ++this.watchAttempts,
        });
        stream = await this.client.openWatch(path, this.options.timings.watchSilenceMs, signal);
      } catch (err) {
        if (signal.aborted) return;
        this.log.debug({ err: (err as Error).message }, 'no replica opened a watch stream; retrying');
        await delay(RETRY_MS, signal);
        continue;
      }
      this.watch = stream;
      this.watchClosedAt = null;
      this.log.info({ replica: stream.replica }, 'watch stream open');
      try {
        for await (const message of stream.messages()) {
          if (signal.aborted) break;
          if (message.type === 'snapshot') this.onSnapshot(message.assignments);
        }
        if (!signal.aborted) this.log.info({ replica: stream.replica }, 'watch stream ended; moving on');
      } catch (err) {
        if (!signal.aborted) {
          const level = err instanceof WatchSilentError ? 'warn' : 'info';
          this.log[level]({ replica: stream.replica, err: (err as Error).message }, 'watch stream broken; moving on');
        }
      } finally {
        this.watch = null;
        this.watchClosedAt = stream.lastDeliveryAt;
        this.client.demote(stream.replica);
      }
      this.checkFence();
    }
  }

  private onSnapshot(assignments: AssignmentMessage[]): void {
    // Cut off means the control plane may already count this node as gone: a snapshot that
    // was sitting in the socket during a freeze is not something to act on.
    if (this.checkFence()) return;
    const local = new Set([...this.jobs.keys(), ...this.claims.keys()]);
    const plan = planSnapshot(this.memory, local, assignments, this.guards);
    for (const id of plan.withdraw) {
      this.dropClaim(id); // ended before its claim was answered: it will not run
      this.stopJob(id, 'withdrawn');
    }
    for (const assignment of plan.reject) {
      this.reject(assignment, 'stale-epoch');
      this.log.warn(
        { assignment: assignment.id, epoch: assignment.epoch, newestEpoch: this.memory.newestEpoch },
        'rejected an assignment from an older epoch',
      );
    }
    for (const assignment of plan.start) this.claim(assignment);
    this.settleForgotten(assignments);
  }

  /**
   * A claimed (Running) assignment the node does not run: its claim's answer was lost, or its
   * end report was. Say again how it ended (or that it was given up), so it never stays
   * active for nothing; the snapshots repeat until the control plane agrees.
   */
  private settleForgotten(assignments: readonly AssignmentMessage[]): void {
    const listed = new Set<string>();
    for (const a of assignments) {
      listed.add(a.id);
      if (a.state !== 'Running' || this.jobs.has(a.id) || this.claims.has(a.id) || this.endsInFlight.has(a.id))
        continue;
      const report: EndReport = this.outcomes.get(a.id) ?? { kind: 'abandoned', id: a.id, reason: 'not-running' };
      this.log.info(
        { assignment: a.id, what: report.kind },
        'the control plane still counts an assignment this node does not run; reporting how it ended',
      );
      this.track(this.reportEnd(report));
    }
    for (const id of this.outcomes.keys()) if (!listed.has(id)) this.outcomes.delete(id);
  }

  /** Claims an assignment (reports it started) and runs it once the claim is committed. */
  private claim(assignment: AssignmentMessage): void {
    const claim: Claim = { assignment, sentAt: performance.now() };
    this.claims.set(assignment.id, claim);
    this.track(this.claimThenRun(claim));
  }

  private dropClaim(id: string): void {
    const claim = this.claims.get(id);
    if (!claim) return;
    this.claims.delete(id);
    this.reject(claim.assignment, 'unclaimed');
  }

  private async claimThenRun(claim: Claim): Promise<void> {
    const { id } = claim.assignment;
    if (this.guards.claimFirstBroken) return this.runThenClaim(claim);
    const wanted = () => this.claims.get(id) === claim && !this.lifetime.signal.aborted;
    const outcome = await this.reports.send({ kind: 'started', id }, wanted);
    const stillWanted = wanted();
    if (this.claims.get(id) === claim) this.claims.delete(id);
    if (outcome === 'not-active') {
      // Taken back before the claim got in (or never ours): someone else's now, or no one's.
      this.reject(claim.assignment, 'claim-refused');
      this.log.warn({ assignment: id }, 'claim refused: the assignment is no longer active');
      return;
    }
    if (outcome === undefined) return; // dropped unsent or unanswered: a snapshot settles it
    const late = performance.now() - claim.sentAt > this.options.timings.confirmTimeoutMs;
    if (!stillWanted || late || this.checkFence()) {
      // Committed, but the node may no longer run it: give it back at once.
      if (late) this.reject(claim.assignment, 'claim-late');
      this.log.warn({ assignment: id, late }, 'claimed an assignment the node will not run; giving it back');
      await this.reportEnd({ kind: 'abandoned', id, reason: late ? 'claim-late' : 'not-running' });
      return;
    }
    this.startJob(claim.assignment);
  }

  /** Broken on purpose (src/testing/broken-guards.ts, claim-first): runs at once, claims afterwards. */
  private async runThenClaim(claim: Claim): Promise<void> {
    const { id } = claim.assignment;
    this.claims.delete(id);
    this.startJob(claim.assignment);
    const job = this.jobs.get(id);
    const outcome = await this.reports.send({ kind: 'started', id }, () => this.jobs.get(id) === job);
    if (outcome === 'not-active') this.stopJob(id, 'stale');
  }

  private startJob(assignment: AssignmentMessage): void {
    if (!this.runLog) return;
    this.runLog.start(assignment);
    agentJobsRunning.inc({ node: this.options.name });
    const job: RunningJob = {
      assignment,
      startedAt: performance.now(),
      timer: setTimeout(() => this.onJobTimer(job), runMs(assignment)),
    };
    this.jobs.set(assignment.id, job);
    this.log.info(
      { assignment: assignment.id, job: assignment.job, epoch: assignment.epoch, durationMs: assignment.durationMs },
      'job started',
    );
  }

  private onJobTimer(job: RunningJob): void {
    if (this.checkFence()) return; // a timer that fires after a freeze must not report success
    if (this.jobs.get(job.assignment.id) !== job) return;
    const remaining = runMs(job.assignment) - (performance.now() - job.startedAt);
    if (remaining > 0) {
      job.timer = setTimeout(() => this.onJobTimer(job), Math.ceil(remaining));
      return;
    }
    const { failExitCode } = job.assignment;
    if (failExitCode !== undefined) {
      this.stopJob(job.assignment.id, 'failed');
      this.track(
        this.reportEnd({
          kind: 'finished',
          id: job.assignment.id,
          outcome: 'Failed',
          message: `exit code ${failExitCode}`,
        }),
      );
      return;
    }
    this.stopJob(job.assignment.id, 'completed');
    this.track(this.reportEnd({ kind: 'finished', id: job.assignment.id, outcome: 'Succeeded' }));
  }

  /** An assignment this node will not run, in its run log and its metrics. */
  private reject(assignment: AssignmentMessage, reason: RejectReason): void {
    this.runLog?.reject(assignment, reason);
    agentRejected.inc({ node: this.options.name, reason });
  }

  private stopJob(id: string, reason: StopReason): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    clearTimeout(job.timer);
    this.runLog?.stop(job.assignment, reason);
    agentJobsRunning.dec({ node: this.options.name });
    agentRuns.inc({ node: this.options.name, reason });
    this.log.info({ assignment: id, job: job.assignment.job, reason }, 'job stopped');
    // A job the node stopped on its own is still active for the control plane until told:
    // say so as soon as a replica answers, so the job is retried rather than left Running. One
    // stopped because its assignment ended (a cancel): say so too, so that what the cancelled
    // run held is free now instead of when it could at the latest have ended.
    if (reason === 'self-fence' || reason === 'shutdown' || reason === 'withdrawn')
      this.track(this.reportEnd({ kind: 'abandoned', id, reason }));
  }

  /** Stops every job and drops every unanswered claim (one that got in is given back when answered). */
  private stopAll(reason: StopReason): void {
    for (const id of [...this.claims.keys()]) this.dropClaim(id);
    for (const id of [...this.jobs.keys()]) this.stopJob(id, reason);
  }

  private async reportEnd(report: EndReport): Promise<void> {
    this.outcomes.set(report.id, report);
    this.endsInFlight.add(report.id);
    try {
      const outcome = await this.reports.send(report);
      if (outcome === 'not-active')
        this.log.info(
          { assignment: report.id, what: report.kind },
          'report came too late: assignment no longer active',
        );
      else if (outcome === undefined)
        this.log.warn(
          { assignment: report.id, what: report.kind },
          'report not delivered (refused, or given up at shutdown)',
        );
    } finally {
      this.endsInFlight.delete(report.id);
    }
  }

  /**
   * Applies the self-fence rule now; true while the node is cut off (and has stopped its jobs).
   * Called every FENCE_CHECK_MS and first thing in every other timer and stream callback, so
   * that after a freeze the node fences itself before it acts on anything else.
   */
  private checkFence(): boolean {
    if (this.guards.selfFenceBroken || this.lifetime.signal.aborted) return false;
    const watchHeardAt = this.watch?.lastDeliveryAt ?? this.watchClosedAt ?? performance.now();
    const cause = selfFenceCause(performance.now(), this.lastHeartbeat, watchHeardAt, this.fenceRule);
    if (cause === null) {
      if (this.fenced) this.log.info('control plane reachable again; accepting assignments');
      this.fenced = false;
      return false;
    }
    const running = this.jobs.size;
    this.stopAll('self-fence'); // first: every millisecond counts against the dead timeout
    if (!this.fenced) {
      this.fenced = true;
      agentSelfFences.inc({ node: this.options.name });
      this.log.warn({ cause, stopped: running }, 'cut off from the control plane: fencing this node');
      // A fresh stream, opened after this moment, is the only one whose snapshots count.
      this.watch?.close();
    }
    return true;
  }

  /** A heartbeat sent at `sentAt` (local monotonic time) was recorded. */
  private heardBack(sentAt: number): void {
    this.lastHeartbeat = Math.max(this.lastHeartbeat, sentAt);
  }

  private loop(name: string, body: () => Promise<void>): Promise<void> {
    return body().catch((err: unknown) => {
      this.log.error({ err, loop: name }, 'agent loop failed');
    });
  }

  private track(report: Promise<void>): Promise<void> {
    const tracked = report.catch((err: unknown) => this.log.error({ err }, 'report failed'));
    this.reportsInFlight.add(tracked);
    void tracked.finally(() => this.reportsInFlight.delete(tracked));
    return tracked;
  }
}

/**
 * Backing off, with jitter: a hundred nodes starting at once, or all retrying their reports
 * after an outage, must not keep a busy control plane too busy to answer any of them.
 */
function backoffMs(round: number, maxMs: number): number {
  return Math.min(maxMs, RETRY_MS * 2 ** Math.min(round, 5)) * (0.5 + Math.random() / 2);
}

function errorMessage(body: unknown): string {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : '';
}

/**
 * The assignments the previous process of this node (the newest pid in its run log) ran to
 * completion lately. Some of their finish reports may not have got through before it died.
 */
function completedByPredecessor(logFile: string): string[] {
  let lines: RunLogLine[];
  try {
    lines = readRunLog(logFile);
  } catch {
    return []; // no log yet: a new node
  }
  const predecessor = lines.at(-1)?.pid;
  const since = Date.now() - PREDECESSOR_WINDOW_MS;
  return lines
    .filter((l) => l.pid === predecessor && l.event === 'stop' && l.reason === 'completed' && l.wallMs >= since)
    .map((l) => l.assignment);
}

/** The node credential the last process of this node kept beside its run log (mode 0600), if any. */
function readCredential(logFile: string): string | undefined {
  try {
    return readFileSync(`${logFile}.credential`, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function writeCredential(logFile: string, credential: string): void {
  const file = `${logFile}.credential`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${credential}\n`, { mode: 0o600 });
  chmodSync(`${file}.tmp`, 0o600);
  renameSync(`${file}.tmp`, file);
}

/**
 * Numbers this node's agent processes, in a file beside its run log: each start takes a larger
 * number, so a registration from an older process that reaches a replica late is told apart
 * (and refused) by the control plane. The number is at least the wall clock in milliseconds, so
 * a node whose file was lost (re-imaged under the same name) still outnumbers its old processes;
 * the file keeps it growing when the clock steps back.
 */
export function nextGeneration(logFile: string, now: number = Date.now()): number {
  const file = `${logFile}.generation`;
  let previous = 0;
  try {
    previous = Number.parseInt(readFileSync(file, 'utf8'), 10) || 0;
  } catch {
    // first start of this node here
  }
  const next = Math.max(previous + 1, now);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, String(next));
  renameSync(`${file}.tmp`, file);
  return next;
}

/** How long a run holds its resources: its duration, or until its simulated failure. */
function runMs(assignment: AssignmentMessage): number {
  return assignment.failExitCode === undefined
    ? assignment.durationMs
    : Math.min(assignment.durationMs, assignment.failAfterMs ?? assignment.durationMs);
}
