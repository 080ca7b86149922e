// A watch of the Events (kubectl get events -w, kubectl events -w): each event written after the
// watch's position comes once, ADDED (events never change). From no resourceVersion (or "0"), the
// list first, every event ADDED, then what follows its cut. The cursor (feed.ts) is polled every
// POLL_MS; an event carries the position the watch stood at once it was streamed, from which a
// resume misses nothing (and may stream again what came above the low-water marks).
//
// 410 Expired, and the client lists again: a position older than what a list serves, or past
// the ids handed out; and a transaction held open while more than MOST_HELD events streamed
// past it (the ids a cursor keeps above its low-water are bounded).
import type { FastifyReply } from 'fastify';
import type { Db } from '../../../store/db.js';
import { resumeExpired } from '../../../store/events.js';
import type { TableVersion } from '../accept.js';
import type { ObjectQuery } from '../selectors.js';
import { selectObjects } from '../selectors.js';
import type { IncludeObject } from '../table.js';
import { expired, openWatch } from '../object-watch.js';
import { statusOf } from '../status.js';
import { delay } from '../../../lifecycle.js';
import { cursorAt, formatPosition, heldIds, parsePosition, positionOf, readOn, type EventCursor } from './feed.js';
import { fromClusterEvent, fromHistory, type KubeEvent } from './present.js';
import { EVENTS_WINDOW_SECONDS, listEvents, render, type EventShape } from './read.js';
import { eventTable } from './table.js';

const POLL_MS = 500;
const BATCH = 500;
const MOST_HELD = 10_000;

export async function streamEventWatch(
  db: Db,
  reply: FastifyReply,
  shape: EventShape,
  namespace: string | null,
  query: ObjectQuery,
  table: { version: TableVersion; includeObject: IncludeObject } | null,
): Promise<void> {
  const stream = openWatch(reply, query);
  const selection = { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector };
  const shown = (event: KubeEvent) => (table ? eventTable([event], { now: new Date(), ...table }) : event);
  const groupVersion = shape === 'core' ? 'v1' : 'events.k8s.io/v1';
  try {
    let cursor: EventCursor;
    const from = query.resourceVersion ?? '';
    if (from === '' || from === '0') {
      const list = await listEvents(db, shape, namespace, selection);
      for (const event of list.items) stream.send('ADDED', shown(event));
      await stream.drained();
      cursor = cursorAt(list.at);
    } else {
      const at = parsePosition(from);
      if (!at || (await resumeExpired(db, at, EVENTS_WINDOW_SECONDS))) {
        stream.send('ERROR', expired(`too old resource version: ${from}`));
        return;
      }
      cursor = cursorAt(at);
    }
    while (stream.live()) {
      const read = await readOn(db, cursor, BATCH);
      cursor = read.cursor;
      const resourceVersion = formatPosition(positionOf(cursor));
      const events = [...read.history.map(fromHistory), ...read.cluster.map(fromClusterEvent)].sort(
        (a, b) => a.at.getTime() - b.at.getTime(),
      );
      for (const event of events) {
        if (namespace !== null && event.namespace !== namespace) continue;
        const object = render(shape, event, resourceVersion);
        if (selectObjects([object], selection).items.length === 1) stream.send('ADDED', shown(object));
      }
      if (heldIds(cursor) > MOST_HELD) {
        stream.send(
          'ERROR',
          expired(
            `more than ${MOST_HELD} events streamed while a database transaction older than them stayed open; list again`,
          ),
        );
        return;
      }
      await stream.drained();
      stream.bookmark(() => ({ apiVersion: groupVersion, kind: 'Event', metadata: { resourceVersion } }));
      if (read.history.length < BATCH && read.cluster.length < BATCH) await delay(POLL_MS, stream.signal);
    }
  } catch (error) {
    // The answer has begun: a failure (a list's cut timed out, the database went) ends it with a Status.
    stream.send('ERROR', statusOf(error));
  } finally {
    stream.end();
  }
}
