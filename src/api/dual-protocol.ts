// One port, HTTP and HTTPS: a replica given a certificate answers TLS connections on the same
// port as plain ones, telling them apart by the first byte (22, a TLS handshake record). kubectl
// sends a bearer token only over TLS (client-go merges a kubeconfig's credentials only for an
// https server), so kubectl and client libraries use https://HOST:PORT, while fencer's own
// clients on the same machine (agents, the CLI, the dashboard) keep http://HOST:PORT.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';

export interface ServingCert {
  /** PEM: the certificate (and its chain). */
  cert: string;
  /** PEM: its private key. */
  key: string;
}

const TLS_HANDSHAKE = 22;

/** A fastify serverFactory: an http.Server that hands TLS connections to an https.Server sharing its handler. */
export function dualProtocolServer(tls: ServingCert) {
  return (handler: http.RequestListener): http.Server => {
    const plain = http.createServer(handler);
    const secure = https.createServer({ cert: tls.cert, key: tls.key }, handler);
    const onPlain = plain.listeners('connection') as Array<(socket: Socket) => void>;
    plain.removeAllListeners('connection');
    // Every connection, including one that has not spoken yet (neither server knows it then).
    const open = new Set<Socket>();
    plain.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.once('data', (first: Buffer) => {
        if (first[0] === TLS_HANDSHAKE) return void secure.emit('connection', streamOf(socket, first));
        socket.pause();
        socket.unshift(first);
        for (const listener of onPlain) listener.call(plain, socket);
        socket.resume();
      });
    });
    // A closing replica (fastify's forceCloseConnections) ends every connection, of either protocol.
    plain.closeAllConnections = () => {
      for (const socket of open) socket.destroy();
    };
    return plain;
  };
}

/**
 * The connection as a plain stream that starts with the bytes already read: TLS over a socket
 * reads its handle directly and would miss them, over a stream it reads what the stream gives.
 */
function streamOf(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => socket.resume(),
    write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
    final: (done) => {
      socket.end();
      done();
    },
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  socket.on('error', (err) => stream.destroy(err));
  return stream;
}
