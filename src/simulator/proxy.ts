// A plain TCP forwarder on 127.0.0.1: the network between one node and the replicas.
// Each node talks to every replica through its own proxy process, so the simulator can cut
// one node off by freezing that process (SIGSTOP): its connections stay open and nothing
// flows, as in a real partition. Killing the proxy would close them, which is not a partition.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Route {
  listenPort: number;
  targetPort: number;
}

/** Parses `PORT:TARGETPORT[,PORT:TARGETPORT...]`. */
export function parseRoutes(text: string): Route[] {
  return text.split(',').map((part) => {
    const match = /^\s*(\d+):(\d+)\s*$/.exec(part);
    if (!match) throw new Error(`"${part}" is not PORT:TARGETPORT`);
    return { listenPort: Number(match[1]), targetPort: Number(match[2]) };
  });
}

export function formatRoutes(routes: Route[]): string {
  return routes.map((r) => `${r.listenPort}:${r.targetPort}`).join(',');
}

export class TcpProxy {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private stopping: Promise<void> | undefined;

  constructor(private readonly routes: Route[]) {}

  async start(): Promise<void> {
    for (const route of this.routes) {
      const server = createServer((client) => this.forward(client, route.targetPort));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(route.listenPort, '127.0.0.1', () => resolve());
      });
      this.servers.push(server);
    }
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const socket of this.sockets) socket.destroy();
      await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    })();
    return this.stopping;
  }

  private forward(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    this.track(client);
    this.track(upstream);
    // A refused or reset upstream looks to the client like the replica went away: it did.
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}
