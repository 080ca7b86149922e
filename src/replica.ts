// A control-plane replica: serves the API (always), and runs the controllers while it holds
// the lease. One lifecycle: start(), stop() returning its stored promise.
import { Backlog } from './api/backlog.js';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import {
  maxPendingJobs,
  maxUnclaimedPerNode,
  overdueSlackMs,
  undeliveredMs,
  replicaGoneMs,
  type Timings,
} from './config.js';
import { createPool, type Pool } from './store/db.js';
import { migrate } from './store/migrate.js';
import { sql } from './store/sql.js';
import { Listener } from './store/listener.js';
import { WorkflowController } from './workflows/controller.js';
import { CronController } from './cron/controller.js';
import { WatchEventsPrune } from './controllers/watch-events/watch-events.js';
import { Lease } from './lease/lease.js';
import { Controller, type Reconciler } from './controllers/controller.js';
import { recordClusterEvent } from './store/cluster-events.js';
import { ChangeFeed } from './api/change-feed.js';
import { ReplicaOrigins } from './api/origins.js';
import { edgeOptionsFromEnv, type EdgeOptions } from './api/edge/options.js';
import { Placement } from './placement/controller.js';
import { followPending, PendingSet } from './placement/pending-set.js';
import { NodeHealth, deathRule } from './node-health/controller.js';
import { JobReconcile } from './job-reconcile/controller.js';
import { WatchHub } from './api/watch-hub.js';
import { buildServer } from './api/server.js';
import { epochGauge, leaderGauge } from './metrics/registry.js';
import { exportClusterState } from './store/cluster-metrics.js';
import { openKubeWatches } from './api/kube/object-watch.js';
import { isBroken } from './testing/broken-guards.js';
import { blockLoopOnFault, exhaustPoolOnFault } from './testing/overload-faults.js';
import { DecisionThread } from './lifecycle.js';
import type { Policy } from './placement/policies.js';
import { AccessControl } from './auth/access-control.js';
import { NodeCredentials } from './auth/node-credentials.js';
import type { TokenIssuer } from './auth/tokens/verify.js';
import type { Gatekeeper } from './api/auth-gate.js';
import type { ServingCert } from './api/dual-protocol.js';

/**
 * How long an API request may wait for a database connection. Nodes give up on a replica after
 * 500 ms and users' commands after a few seconds; a request still queued past this is answered
 * 503 rather than done for nobody.
 */
const API_WAIT_MS = 2000;

/** Placement only uses nodes whose last heartbeat is at most this many intervals old. */
const FRESH_HEARTBEATS = 2;

/** How long node-health holds off while most nodes are quiet at once (see src/node-health/controller.ts). */
const MASS_QUIET_HOLD_MS = 30_000;

export interface ReplicaOptions {
  name: string;
  host: string;
  port: number;
  /** The URL others reach this replica by (status, discovery); default: the listening address. */
  advertiseUrl?: string;
  databaseUrl: string;
  /**
   * A pooler in transaction mode (PgBouncer) in front of the same database, for the API's
   * statements (the api pool). The lease, the LISTEN connection, the migrator, the leader's
   * decisions and the nodes' heartbeats and watch opens (the liveness pool) stay on databaseUrl:
   * they hold session state (an advisory lock, LISTEN, statement_timeout) or must not queue
   * behind API traffic in a shared pool (docs/connections.md).
   */
  pooledDatabaseUrl?: string;
  timings: Timings;
  logger: Logger;
  /** How placement orders and fits jobs (default: DEFAULT_POLICY). */
  placementPolicy?: Policy;
  /** Queues share the cluster by weight (default), or one backlog in arrival order. */
  fairShare?: boolean;
  /**
   * Whose tokens the API trusts (docs/security.md), or 'insecure-no-auth': no token asked, every
   * request allowed (the CLI allows it on a loopback address only).
   */
  auth: { issuers: readonly TokenIssuer[] } | 'insecure-no-auth';
  /**
   * A certificate: the port then answers HTTPS, and plain HTTP only from loopback addresses unless
   * `tls.plainHttp` is 'anywhere' (docs/security.md, TLS). Without one, plain HTTP only.
   */
  tls?: ServingCert;
  /** Names, front proxies and limits at the API's edge (default: from the environment). */
  edge?: EdgeOptions;
}

export class Replica {
  /** Where it listens: a URL for this machine. */
  readonly url: string;
  /** Where others reach it (`fencer cluster status`, discovery's serverAddress). */
  readonly advertisedUrl: string;
  private readonly api: Pool;
  private readonly liveness: Pool;
  private readonly decisions: Pool;
  private readonly lease: Lease;
  private readonly listener: Listener;
  private readonly pendingSet: PendingSet;
  private readonly watches: WatchHub;
  private readonly changes: ChangeFeed;
  private readonly gate: Gatekeeper;
  private readonly edge: EdgeOptions;
  private readonly nodeCredentials: NodeCredentials;
  private readonly controllers: Controller[];
  private readonly placement: Controller;
  private readonly jobReconcile: Controller;
  private readonly workflows: Controller;
  private server: FastifyInstance | undefined;
  private seenTimer: NodeJS.Timeout | undefined;
  private stopTestFaults: () => void = () => undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: ReplicaOptions) {
    const { name, databaseUrl, timings, logger } = opts;
    this.url = `http://${opts.host}:${opts.port}`;
    this.advertisedUrl = opts.advertiseUrl ?? this.url;
    this.edge = opts.edge ?? edgeOptionsFromEnv();
    // Every session dies when idle inside a transaction: a replica frozen mid-transaction must
    // not hold the lease row (FOR SHARE) or a job's or node's row lock for long, or it would
    // stall the leader's decisions and any takeover.
    const idleInTxTimeoutMs = isBroken('idle-in-tx-timeout') ? undefined : timings.idleInTxTimeoutMs;
    const serving = opts.pooledDatabaseUrl
      ? { databaseUrl: opts.pooledDatabaseUrl, pooled: true }
      : { databaseUrl, pooled: false };
    this.api = createPool({ ...serving, replica: name, max: 10, idleInTxTimeoutMs, waitMs: API_WAIT_MS });
    // Direct even beside a pooler: a node's death is judged on its heartbeats, which must not
    // wait behind API traffic for the pooler's server sessions.
    this.liveness = createPool({ databaseUrl, replica: name, max: 4, idleInTxTimeoutMs, waitMs: API_WAIT_MS });
    this.decisions = createPool({ databaseUrl, replica: name, max: 4, idleInTxTimeoutMs });
    const thread = new DecisionThread();
    this.lease = new Lease({
      databaseUrl,
      replica: name,
      leaseMs: timings.leaseMs,
      renewMs: timings.renewMs,
      standbyPollMs: timings.standbyPollMs,
      silentMs: timings.deadAfterSilentMs,
      idleInTxTimeoutMs,
      logger: logger.child({ part: 'lease' }),
    });
    this.listener = new Listener(databaseUrl, name, logger.child({ part: 'listener' }));
    this.pendingSet = new PendingSet(() => this.listener.listening);
    // Snapshots come in bursts (a placement round touches every node): they read through the
    // API pool, so that the liveness pool stays free for heartbeats and watch opens.
    this.watches = new WatchHub(this.api, logger.child({ part: 'watch' }), timings.confirmTimeoutMs);
    // Node credentials are the replicas' own tokens (src/auth/node-credentials.ts), trusted beside the configured issuers.
    this.nodeCredentials = new NodeCredentials(this.api);
    this.gate =
      opts.auth === 'insecure-no-auth'
        ? opts.auth
        : new AccessControl(this.api, { issuers: [...opts.auth.issuers, this.nodeCredentials.issuer] });
    this.changes = new ChangeFeed(this.api, replicaGoneMs(timings), logger.child({ part: 'dashboard' }));
    // A refused fenced transaction is recorded for `fencer get events` and the dashboard; the
    // refusal itself wrote nothing, and a failure to record it changes nothing either.
    const rejected = (controller: string, cause: 'epoch' | 'session', err: Error, epoch: number) =>
      void recordClusterEvent(this.api, {
        type: 'Warning',
        reason: 'FencedRejection',
        object: `replica/${name}`,
        epoch,
        replica: name,
        message: `${controller}: fenced transaction refused (${cause === 'epoch' ? err.message : `session ended: ${err.message}`})`,
      }).catch(() => undefined);
    const controller = (reconciler: Reconciler) => new Controller(reconciler, this.lease, logger, thread, rejected);
    this.placement = controller(
      new Placement(
        this.decisions,
        this.lease,
        timings.placementPassMs,
        maxUnclaimedPerNode(),
        FRESH_HEARTBEATS * timings.heartbeatMs,
        opts.placementPolicy,
        opts.fairShare ?? true,
        this.pendingSet,
      ),
    );
    this.jobReconcile = controller(
      new JobReconcile(
        this.decisions,
        this.lease,
        timings.reconcilePassMs,
        { confirmTimeoutMs: timings.confirmTimeoutMs, undeliveredMs: undeliveredMs(timings) },
        overdueSlackMs(timings),
      ),
    );
    this.workflows = controller(new WorkflowController(this.decisions, this.lease, timings.reconcilePassMs));
    this.controllers = [
      this.placement,
      controller(
        new NodeHealth(this.decisions, this.lease, timings.reconcilePassMs, deathRule(timings), {
          quietAfterMs: 2 * timings.heartbeatMs,
          holdMs: MASS_QUIET_HOLD_MS,
        }),
      ),
      this.jobReconcile,
      this.workflows,
      controller(new CronController(this.decisions, this.lease, timings.cronPassMs, overdueSlackMs(timings))),
      controller(new WatchEventsPrune(this.decisions, this.lease)),
    ];
  }

  async start(): Promise<void> {
    const { name, logger } = this.opts;
    // On the direct pool: the migrator's advisory lock is a session's, which a pooler would not keep.
    const client = await this.decisions.connect();
    const swallow = () => {}; // a failure surfaces from the query below; don't crash on the event
    client.on('error', swallow);
    try {
      const applied = await migrate(client);
      if (applied.length) logger.info({ applied }, 'migrated the database');
    } finally {
      client.off('error', swallow);
      client.release();
    }
    // Room freed (a claim, an ended run, a released hold) matters only to jobs that wait: during a
    // burst with nothing pending, each would otherwise wake a round that finds nothing to place.
    const roomFreed = () => {
      if (this.pendingSet.mayHaveWaiting()) this.placement.nudge();
    };
    this.listener.on('room', roomFreed);
    followPending(this.pendingSet, this.listener, () => this.placement.nudge());
    // For placement an assignment that ends is room freed. A failure to retry, or a need that a
    // workflow waits on, comes as an outcome (their jobs, once Pending again, wake placement by
    // fencer_pending).
    this.listener.on('assignments', (node) => {
      this.watches.changed(node);
      roomFreed();
    });
    this.listener.on('outcomes', () => {
      this.jobReconcile.nudge();
      this.workflows.nudge();
    });
    // Revocations and RBAC objects are held in memory (no database read per request): read again
    // on every change, and after a lost LISTEN connection, which may have lost a change's notice.
    const reloadPolicy = () => {
      if (this.gate !== 'insecure-no-auth')
        this.gate
          .reload()
          .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'reading the RBAC policy failed'));
    };
    this.listener.on('auth', reloadPolicy);
    this.listener.on('reconnected', () => {
      reloadPolicy();
      this.watches.refreshAll();
      this.placement.nudge();
    });
    this.lease.on('elected', (epoch) => {
      leaderGauge.set(1);
      epochGauge.set(epoch);
      for (const controller of this.controllers) controller.nudge();
    });
    this.lease.on('deposed', () => leaderGauge.set(0));
    this.listener.start();
    if (this.gate === 'insecure-no-auth')
      logger.warn('AUTHENTICATION IS OFF (--insecure-no-auth): anyone who reaches this replica may do anything');
    else await this.gate.reload();
    await this.nodeCredentials.load();
    exportClusterState({
      db: this.api,
      leading: () => this.lease.epoch() !== null,
      pools: { api: this.api, liveness: this.liveness, decisions: this.decisions },
      watchStreams: () => ({ node: this.watches.count(), kube: openKubeWatches(), dashboard: this.changes.count() }),
    });
    this.server = buildServer(
      {
        replica: name,
        url: this.advertisedUrl,
        db: this.api,
        liveness: this.liveness,
        timings: this.opts.timings,
        watches: this.watches,
        changes: this.changes,
        origins: new ReplicaOrigins(this.api, this.advertisedUrl, {
          allowedHosts: this.edge.allowedHosts,
          listenHost: this.opts.host,
        }),
        edge: this.edge,
        lease: this.lease,
        backlog: new Backlog(this.api, maxPendingJobs()),
        logger,
        gate: this.gate,
        nodeCredentials: this.nodeCredentials,
      },
      this.gate,
      this.opts.tls,
    );
    await this.server.listen({ host: this.opts.host, port: this.opts.port });
    await this.markSeen();
    this.seenTimer = setInterval(() => void this.markSeen(), this.opts.timings.heartbeatMs);
    // Test-only: nothing unless FENCER_TEST_FAULTS.
    const stopFaults = [exhaustPoolOnFault(this.api, name), blockLoopOnFault(name)];
    this.stopTestFaults = () => stopFaults.forEach((stop) => stop());
    this.lease.start();
    for (const controller of this.controllers) controller.start();
    logger.info({ url: this.url, advertised: this.advertisedUrl }, 'replica serving');
  }

  private async markSeen(): Promise<void> {
    await this.api.query(sql('replicas/seen'), [this.opts.name, this.advertisedUrl]).catch(() => {});
  }

  /** Graceful: finish the decision in flight, hand the lease over, then close connections. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.seenTimer);
      this.stopTestFaults();
      await Promise.all(this.controllers.map((c) => c.stop()));
      await this.lease.stop();
      this.watches.shutdown();
      await this.changes.stop();
      await this.server?.close();
      await this.listener.stop();
      await Promise.all([this.api.end(), this.liveness.end(), this.decisions.end()]);
    })();
    return this.stopping;
  }
}
