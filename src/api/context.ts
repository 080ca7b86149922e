// What every route handler may use. Routes never touch the lease directly: any replica
// answers them, leader or not.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Timings } from '../config.js';
import type { WatchHub } from './watch-hub.js';
import type { Lease } from '../lease/lease.js';
import type { ChangeFeed } from './change-feed.js';
import type { ReplicaOrigins } from './origins.js';
import type { Backlog } from './backlog.js';
import type { Gatekeeper } from './auth-gate.js';
import type { EdgeOptions } from './edge/options.js';
import type { NodeCredentials } from '../auth/node-credentials.js';

export interface ApiContext {
  replica: string;
  url: string;
  db: Db;
  /**
   * Node liveness only (heartbeats, opening and closing watch streams; not registrations, nor the
   * streams' snapshots, which come in bursts): its own connections, so a flood of reports, user
   * requests or registrations queued on `db` never holds a heartbeat past the node's timeout.
   */
  liveness: Db;
  timings: Timings;
  watches: WatchHub;
  /** What the dashboard pages are pushed. */
  changes: ChangeFeed;
  /** Web origins whose pages may read answers (CORS). */
  origins: ReplicaOrigins;
  lease: Lease;
  /** Backpressure on submissions (FENCER_MAX_PENDING). */
  backlog: Backlog;
  logger: Logger;
  /** Who may do what (the policy an RBAC write is checked against), or no checks at all. */
  gate: Gatekeeper;
  /** Names, front proxies and limits at the edge (src/api/edge/). */
  edge: EdgeOptions;
  /** Mints the credentials a node's registration and heartbeats answer. */
  nodeCredentials: NodeCredentials;
}
