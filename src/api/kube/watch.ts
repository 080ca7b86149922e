// A watch as Kubernetes clients read it: one JSON event per line ({"type": "ADDED" | "MODIFIED" |
// "DELETED" | "BOOKMARK" | "ERROR", "object": …}), from a resourceVersion, on any replica. The
// events come from the watch feed (src/store/watch.ts) in watch order; each object is read as it
// is now but carries the event's resourceVersion, so a client resuming from what it last saw
// misses nothing (it may see a newer state twice). From no version (or "0"): every object
// ADDED first, then the changes after the list. A version no longer kept: an ERROR event with
// a 410 Status (Expired): the client lists again.
import type { FastifyReply } from 'fastify';
import type { Db } from '../../store/db.js';
import { eventsAfter, listVersion, positionOf, type WatchPosition } from '../../store/watch.js';
import { groupVersionOf, type KubeKind } from './kinds.js';
import type { KubeObjects, ObjectQuery } from './objects.js';
import { selectObjects } from './selectors.js';
import { toTable, type KubeObject } from './table.js';
import type { TableVersion } from './accept.js';
import { delay } from '../../lifecycle.js';

const POLL_MS = 100;
const BATCH = 500;
const BOOKMARK_EVERY_MS = 5_000;
const DEFAULT_TIMEOUT_S = 30 * 60;

export async function streamWatch(
  db: Db,
  objects: KubeObjects,
  reply: FastifyReply,
  kind: KubeKind,
  namespace: string | null,
  query: ObjectQuery,
  table: TableVersion | null,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
  res.flushHeaders(); // a client waits for the headers before it reads any event
  let open = true;
  openWatches++;
  res.on('close', () => (open = false));
  const send = (type: string, object: unknown) => open && res.write(`${JSON.stringify({ type, object })}\n`);
  const shown = (object: KubeObject) => (table ? toTable(kind, [object], { now: new Date(), version: table }) : object);
  const matches = (object: KubeObject) => selectObjects([object], { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector }).items.length === 1;
  const deadline = Date.now() + 1000 * (Number(query.timeoutSeconds) > 0 ? Number(query.timeoutSeconds) : DEFAULT_TIMEOUT_S);
  try {
    let position: WatchPosition;
    const from = query.resourceVersion ?? '';
    if (from === '' || from === '0') {
      const rv = await listVersion(db);
      for (const object of selectObjects(await objects.list(kind, namespace), { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector }).items) {
        send('ADDED', shown(object));
      }
      const found = await positionOf(db, rv);
      position = found === 'gone' ? { xid: '0', id: 0 } : found;
    } else {
      const found = /^\d+$/.test(from) ? await positionOf(db, Number(from)) : 'gone';
      if (found === 'gone') {
        send('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${from}` });
        return;
      }
      position = found;
    }
    let bookmarkAt = Date.now() + BOOKMARK_EVERY_MS;
    while (open && Date.now() < deadline) {
      const events = await eventsAfter(db, position, BATCH);
      for (const event of events) {
        position = { xid: event.xid, id: event.id };
        if (event.kind !== kind.kind || (namespace !== null && event.namespace !== namespace)) continue;
        let object: KubeObject | undefined;
        if (event.type === 'DELETED') {
          object = {
            apiVersion: groupVersionOf(kind),
            kind: kind.kind,
            metadata: { name: event.name, ...(event.namespace ? { namespace: event.namespace } : {}), uid: event.object?.uid, labels: event.object?.labels ?? {} },
          };
        } else {
          object = await objects.get(kind, event.namespace, event.name);
          if (!object) continue; // deleted since: its DELETED event follows
        }
        object = { ...object, metadata: { ...object.metadata, resourceVersion: String(event.id) } };
        if (matches(object)) send(event.type, shown(object));
      }
      if (query.allowWatchBookmarks === 'true' && Date.now() >= bookmarkAt) {
        send('BOOKMARK', { apiVersion: groupVersionOf(kind), kind: kind.kind, metadata: { resourceVersion: String(position.id) } });
        bookmarkAt = Date.now() + BOOKMARK_EVERY_MS;
      }
      if (events.length < BATCH) await delay(POLL_MS);
    }
  } finally {
    openWatches--;
    if (open) res.end();
  }
}

let openWatches = 0;

/** Kubernetes API watches this process is serving now (for /metrics). */
export function openKubeWatches(): number {
  return openWatches;
}
