// One port, HTTPS and (from this machine) HTTP: a replica given a certificate answers TLS
// connections, telling them apart from plain ones by the first byte (22, a TLS handshake record).
// Every client that crosses a network uses https (kubectl, agents, the CLI: docs/security.md,
// TLS). Plain HTTP is still answered from a loopback address, where no network sees the token,
// so that a browser opens the dashboard on this machine without a certificate warning; from
// anywhere else only with --insecure-http, and otherwise refused as Go's servers refuse it.
// Given the files it came from, the certificate is read again when they change (a renewal by
// cert-manager, which kubelet writes into the mounted Secret), with no restart: new connections
// get the new one, open ones keep theirs.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { isLoopbackAddress } from '../net/tls.js';
import { isBroken } from '../testing/broken-guards.js';

export interface ServingCert {
  /** PEM: the certificate (and its chain). */
  cert: string;
  /** PEM: its private key. */
  key: string;
  /** Where plain HTTP is still answered (default loopback only). */
  plainHttp?: PlainHttp;
  /**
   * How long a request's headers may take over TLS, and how often that is checked (Node's
   * `headersTimeout` and `connectionsCheckingInterval`; its defaults, 60 s and 30 s, when unset).
   */
  headers?: { timeoutMs: number; checkEveryMs: number };
  /** The files cert and key were read from: read again when either changes. */
  files?: { cert: string; key: string; everyMs?: number; onReload?: (error: Error | null) => void };
}

/** How often the certificate's files are looked at (their stat; kubelet updates a Secret within a minute anyway). */
export const CERT_RELOAD_MS = 10_000;

const TLS_HANDSHAKE = 22;

/** How long a new connection may stay silent before its first byte (Node's headersTimeout is a minute). */
export const FIRST_BYTE_TIMEOUT_MS = 60_000;

/** How long a refused plain-HTTP connection is given to read its 400 before it is closed. */
export const REFUSED_LINGER_MS = 1000;

/** Where plain HTTP is answered beside HTTPS: from loopback addresses, or (--insecure-http) anywhere. */
export type PlainHttp = 'loopback' | 'anywhere';

const PLAIN_REFUSED =
  'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\r\n' +
  'Client sent an HTTP request to an HTTPS server.\n';

/** A fastify serverFactory: an http.Server that hands TLS connections to an https.Server sharing its handler. */
export function dualProtocolServer(tls: ServingCert) {
  const plainHttp = tls.plainHttp ?? 'loopback';
  return (handler: http.RequestListener): http.Server => {
    const plain = http.createServer(handler);
    const secure = https.createServer(
      {
        cert: tls.cert,
        key: tls.key,
        ...(tls.headers
          ? { headersTimeout: tls.headers.timeoutMs, connectionsCheckingInterval: tls.headers.checkEveryMs }
          : {}),
      },
      handler,
    );
    // Node checks a request's header and body timeouts only on a server that listens, and this
    // one never does itself (the plain server owns the port): start its checks with the port's.
    // fastify sets its timeouts and limits on the server it was given, after this factory returns
    // and before it listens: TLS connections get the same, not Node's defaults (a 5 s keep-alive).
    plain.on('listening', () => {
      secure.keepAliveTimeout = plain.keepAliveTimeout;
      secure.requestTimeout = plain.requestTimeout;
      secure.maxRequestsPerSocket = plain.maxRequestsPerSocket;
      secure.timeout = plain.timeout;
      secure.emit('listening');
    });
    plain.on('close', () => secure.close());
    if (tls.files) reloadOnChange(secure, tls.files, plain);
    const onPlain = plain.listeners('connection') as Array<(socket: Socket) => void>;
    plain.removeAllListeners('connection');
    // Every connection, including one that has not spoken yet (neither server knows it then).
    const open = new Set<Socket>();
    plain.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      // Until its first byte no server owns the socket, so nothing else ends it: a client that
      // hangs up first (the plain server is half-open, so the socket would stay in CLOSE-WAIT)
      // or says nothing for FIRST_BYTE_TIMEOUT_MS is closed here.
      const hungUp = () => socket.destroy();
      socket.once('end', hungUp);
      socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, hungUp);
      // Nor does any server listen for its errors yet: a reset before the first byte (or after a
      // refusal) would otherwise be an unhandled 'error' event, and the replica would exit.
      // Broken on purpose (src/testing/broken-guards.ts, port-socket-error).
      if (!isBroken('port-socket-error')) socket.on('error', hungUp);
      socket.once('data', (first: Buffer) => {
        socket.off('end', hungUp);
        socket.setTimeout(0);
        const tls = first[0] === TLS_HANDSHAKE;
        if (!tls && plainHttp === 'loopback' && !isLoopbackAddress(socket.remoteAddress)) {
          // Answered and closed, as Go's servers do; a client that keeps its side open is not
          // waited for (broken on purpose: refused-linger).
          socket.end(PLAIN_REFUSED);
          if (!isBroken('refused-linger')) socket.setTimeout(REFUSED_LINGER_MS, hungUp);
          return;
        }
        // From here a server owns the socket and its errors (http's socketOnError, or the TLS
        // socket's listener on it).
        socket.off('error', hungUp);
        // The byte read goes back, and the socket itself to its server: a TLS socket over a net
        // socket takes its handle (native reads and writes) and first takes in what the socket had
        // buffered. (Over a JS stream, as before, every read and write crossed JavaScript.) It
        // takes the socket's allowHalfOpen too: false, as an https server's own sockets have it,
        // so a client that hangs up mid-handshake is closed at once.
        socket.pause();
        socket.unshift(first);
        if (tls) {
          // Broken on purpose (src/testing/broken-guards.ts, tls-half-open): the port's half-open setting stays.
          if (!isBroken('tls-half-open')) socket.allowHalfOpen = false;
          return void secure.emit('connection', socket);
        }
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
 * Reads the certificate and key again whenever either file changes. A pair that does not go
 * together (one file written, the other not yet) is kept out: the old context serves until the
 * next change makes a whole pair.
 */
function reloadOnChange(secure: https.Server, files: NonNullable<ServingCert['files']>, plain: http.Server): void {
  const reload = () => {
    try {
      const cert = readFileSync(files.cert, 'utf8');
      const key = readFileSync(files.key, 'utf8');
      // setSecureContext takes a key of another type than the certificate's (an EC key beside an
      // RSA certificate), and every handshake would then fail: check the pair first.
      if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key)))
        throw new Error(`${files.key} is not the key of the certificate in ${files.cert}`);
      secure.setSecureContext({ cert, key });
      files.onReload?.(null);
    } catch (err) {
      files.onReload?.(err as Error);
    }
  };
  const options = { interval: files.everyMs ?? CERT_RELOAD_MS, persistent: false };
  watchFile(files.cert, options, reload);
  watchFile(files.key, options, reload);
  plain.on('close', () => {
    unwatchFile(files.cert, reload);
    unwatchFile(files.key, reload);
  });
}
