// The node protocol's HTTP routes: the agent (src/agent/) calls them, every replica serves them
// (./nodes-server.ts, ./reports-server.ts). Both ends take the route from here, so the path of a
// registration, a heartbeat, a snapshot or a claim can be followed by imports. `route` is the
// pattern the server registers (`:name` is the node's name); `path` builds what a client sends.

const NODES = '/api/v1/nodes';

function nodePath(name: string): string {
  return `${NODES}/${encodeURIComponent(name)}`;
}

export const NODE_ROUTES = {
  /** POST a RegisterRequest; answered with a RegisterResponse (src/agent-protocol/messages.ts). */
  register: {
    route: `${NODES}/register`,
    path: (): string => `${NODES}/register`,
  },
  /** POST `{}`: the node is alive. 404 unknown, 410 declared dead. */
  heartbeat: {
    route: `${NODES}/:name/heartbeat`,
    path: (name: string): string => `${nodePath(name)}/heartbeat`,
  },
  /** GET: the node's NDJSON stream of WatchMessages (snapshots of its active assignments). */
  watch: {
    route: `${NODES}/:name/watch`,
    path: (name: string, query?: { incarnation: string; attempt: number }): string =>
      query
        ? `${nodePath(name)}/watch?incarnation=${encodeURIComponent(query.incarnation)}&attempt=${query.attempt}`
        : `${nodePath(name)}/watch`,
  },
  /** POST `{ reports: [...] }`: claims (`started`), `finished` and `abandoned`, answered `{ outcomes }` in order. */
  reports: {
    route: `${NODES}/:name/reports`,
    path: (name: string): string => `${nodePath(name)}/reports`,
  },
} as const;
