// Health, readiness, cluster status and metrics: any replica.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import type { ClusterStatus } from '../../domain/resources.js';
import { readLease } from '../../lease/lease.js';
import { sql } from '../../store/sql.js';
import { listNodes } from '../../agent-protocol/nodes-store.js';
import { registry } from '../../metrics/registry.js';
import { replicaGoneMs } from '../../config.js';
import { pathAccess, PUBLIC, type Access } from '../auth-gate.js';
import { FENCER_GROUP } from '../../auth/rbac/builtin.js';

const clusterNodesList = (): Access => ({ verb: 'list', apiGroup: FENCER_GROUP, resource: 'nodes' });

export function statusRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get('/healthz', { config: { access: PUBLIC } }, async () => ({ ok: true, replica: ctx.replica }));

  app.get('/readyz', { config: { access: PUBLIC } }, async (_request, reply) => {
    try {
      await ctx.db.query(sql('status/ping'));
      return { ok: true, replica: ctx.replica, leader: ctx.lease.isLeader() };
    } catch (err) {
      reply.code(503);
      return { error: { message: `database unreachable: ${(err as Error).message}` } };
    }
  });

  // It lists every node: as GET /api/v1/nodes, a list of nodes at cluster scope.
  app.get('/api/v1/status', { config: { access: clusterNodesList } }, async () => {
    const [lease, replicas, nodes] = await Promise.all([
      readLease(ctx.db),
      ctx.db.query<{ name: string; url: string; seen_at: Date; alive: boolean }>(sql('replicas/list'), [
        replicaGoneMs(ctx.timings),
      ]),
      listNodes(ctx.db),
    ]);
    // Live by the database's clock, as every decision and the dashboard's change feed judge it.
    const leader = lease.free ? null : lease.holder;
    const status: ClusterStatus = {
      replica: ctx.replica,
      leader,
      epoch: lease.epoch,
      leaseExpiresAt: lease.expires_at?.toISOString() ?? null,
      leaderSince: leader ? (lease.acquired_at?.toISOString() ?? null) : null,
      replicas: replicas.rows.map((r) => ({
        name: r.name,
        url: r.url,
        alive: r.alive,
        leader: r.name === leader,
        lastSeen: r.seen_at.toISOString(),
      })),
      nodes: nodes.map((n) => ({
        name: n.name,
        phase: n.state,
        connected: n.watch_session !== null && n.disconnected_at === null,
        jobs: n.jobs ?? 0,
      })),
    };
    return status;
  });

  app.get('/metrics', { config: { access: pathAccess() } }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}
