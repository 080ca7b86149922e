// A watch as Kubernetes clients read it: one JSON event per line ({"type": "ADDED" | "MODIFIED" |
// "DELETED" | "BOOKMARK" | "ERROR", "object": …}), from a resourceVersion, on any replica. The
// events come from the watch feed (src/store/watch-feed.ts) in watch order; each object is read as it
// is now but carries the event's resourceVersion, so a client resuming from what it last saw
// misses nothing (it may see a newer state twice). From no version (or "0"): every object
// ADDED first, then the changes after the list. A version no longer kept: an ERROR event with
// a 410 Status (Expired): the client lists again. openWatch is the framing every watch shares
// (the Events' too, events/watch.ts).
import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import type { Db } from '../../store/db.js';
import { eventsAfter, listVersion, positionOf, type WatchPosition } from '../../store/watch-feed.js';
import { groupVersionOf, type KubeKind } from './kinds.js';
import type { KubeObjects } from './objects.js';
import { selectorOf, type ObjectQuery } from './selectors.js';
import { toTable, type KubeObject } from './table.js';
import type { TableVersion } from './accept.js';
import { delay } from '../../lifecycle.js';

const POLL_MS = 100;
const BATCH = 500;
const BOOKMARK_EVERY_MS = 5_000;
const DEFAULT_TIMEOUT_S = 30 * 60;

/** A watch's answer: one JSON event per line, until the client goes, its timeoutSeconds pass, or end(). */
export interface WatchStream {
  /** The client still reads and the deadline has not passed. */
  live(): boolean;
  /** Aborts when the client goes: a wait between polls ends with it. */
  signal: AbortSignal;
  send(type: string, object: unknown): void;
  /**
   * Resolves once what was sent has gone out to the client (or the client went): a reader that
   * reads slowly holds the next read back, so a watch never buffers more than a batch.
   */
  drained(): Promise<void>;
  /** A BOOKMARK, when the client asked for them (allowWatchBookmarks) and one is due. */
  bookmark(object: () => unknown): void;
  end(): void;
}

export function openWatch(
  reply: FastifyReply,
  query: Pick<ObjectQuery, 'timeoutSeconds' | 'allowWatchBookmarks'>,
): WatchStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
  res.flushHeaders(); // a client waits for the headers before it reads any event
  let open = true;
  let ended = false;
  openWatches++;
  const gone = new AbortController();
  res.on('close', () => {
    open = false;
    gone.abort();
  });
  const deadline =
    Date.now() + 1000 * (Number(query.timeoutSeconds) > 0 ? Number(query.timeoutSeconds) : DEFAULT_TIMEOUT_S);
  let bookmarkAt = Date.now() + BOOKMARK_EVERY_MS;
  const send = (type: string, object: unknown) => void (open && res.write(`${JSON.stringify({ type, object })}\n`));
  return {
    live: () => open && Date.now() < deadline,
    signal: gone.signal,
    send,
    drained: async () => {
      if (!open || !res.writableNeedDrain) return;
      await once(res, 'drain', { signal: gone.signal }).catch(() => {});
    },
    bookmark: (object) => {
      if (query.allowWatchBookmarks !== 'true' || Date.now() < bookmarkAt) return;
      send('BOOKMARK', object());
      bookmarkAt = Date.now() + BOOKMARK_EVERY_MS;
    },
    end: () => {
      if (ended) return;
      ended = true;
      openWatches--;
      if (open) res.end();
    },
  };
}

/** The ERROR event's object for a resourceVersion no longer kept: the client lists again. */
export function expired(message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message };
}

export async function streamWatch(
  db: Db,
  objects: KubeObjects,
  reply: FastifyReply,
  kind: KubeKind,
  namespace: string | null,
  query: ObjectQuery,
  table: TableVersion | null,
): Promise<void> {
  const stream = openWatch(reply, query);
  const shown = (object: KubeObject) => (table ? toTable(kind, [object], { now: new Date(), version: table }) : object);
  const matches = selectorOf(query);
  try {
    let position: WatchPosition;
    const from = query.resourceVersion ?? '';
    if (from === '' || from === '0') {
      const rv = await listVersion(db);
      // In the store's order, a chunk at a time: memory stays one chunk's, however large the list.
      for await (const chunk of objects.chunks(kind, namespace)) {
        for (const object of chunk) if (matches(object)) stream.send('ADDED', shown(object));
        await stream.drained();
      }
      const found = await positionOf(db, rv);
      position = found === 'gone' ? { xid: '0', id: 0 } : found;
    } else {
      const found = /^\d+$/.test(from) ? await positionOf(db, Number(from)) : 'gone';
      if (found === 'gone') {
        stream.send('ERROR', expired(`too old resource version: ${from}`));
        return;
      }
      position = found;
    }
    while (stream.live()) {
      const events = await eventsAfter(db, position, BATCH);
      for (const event of events) {
        position = { xid: event.xid, id: event.id };
        if (event.kind !== kind.kind || (namespace !== null && event.namespace !== namespace)) continue;
        let object: KubeObject | undefined;
        if (event.type === 'DELETED') {
          object = {
            apiVersion: groupVersionOf(kind),
            kind: kind.kind,
            metadata: {
              name: event.name,
              ...(event.namespace ? { namespace: event.namespace } : {}),
              uid: event.object?.uid,
              labels: event.object?.labels ?? {},
            },
          };
        } else {
          object = await objects.get(kind, event.namespace, event.name);
          if (!object) continue; // deleted since: its DELETED event follows
        }
        object = { ...object, metadata: { ...object.metadata, resourceVersion: String(event.id) } };
        if (matches(object)) stream.send(event.type, shown(object));
      }
      await stream.drained();
      stream.bookmark(() => ({
        apiVersion: groupVersionOf(kind),
        kind: kind.kind,
        metadata: { resourceVersion: String(position.id) },
      }));
      if (events.length < BATCH) await delay(POLL_MS, stream.signal);
    }
  } finally {
    stream.end();
  }
}

let openWatches = 0;

/** Kubernetes API watches this process is serving now (for /metrics). */
export function openKubeWatches(): number {
  return openWatches;
}
