// `fencer get TYPE -w`: the list, then a row for every change, as `kubectl get -w` prints them,
// through the Kubernetes API's watch (resumable from a resourceVersion on any replica): when a
// replica dies mid-stream the watch goes on from the last version seen on the next one, and a
// version too old to resume from (410) lists again.
import type { ApiClient } from '../net/api-client.js';
import { ApiError } from '../errors/api-error.js';
import { delay } from '../lifecycle.js';
import { LineSplitter } from '../net/lines.js';

/** Where an object of one of these kinds lives under /apis/fencer.dev/v1. */
const PLURALS = {
  job: 'jobs',
  workflow: 'workflows',
  cronjob: 'cronjobs',
  queue: 'queues',
  resourcequota: 'resourcequotas',
  node: 'nodes',
} as const;
export type WatchedKind = keyof typeof PLURALS;

export interface WatchTarget {
  kind: WatchedKind;
  /** null: every namespace (and for nodes, which have none). */
  namespace: string | null;
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchedObject {
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

/** How the caller prints: the whole table of a list, and one change's row against the objects seen. */
export interface WatchPrinter<T extends WatchedObject> {
  table(items: T[]): string;
  /** The row of `changed` laid out as it would be among `seen` (so its columns line up with theirs). */
  row(changed: T, seen: T[]): string;
}

const RECONNECT_MS = 250;

/** Prints the list, then every change, until `signal` is aborted. */
export async function watchObjects<T extends WatchedObject>(
  client: ApiClient,
  target: WatchTarget,
  printer: WatchPrinter<T>,
  write: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const seen = new Map<string, T>();
  const key = (o: T) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  const relist = async (): Promise<string> => {
    const list = await client.request<{ metadata: { resourceVersion: string }; items: T[] }>('GET', pathOf(target, {}));
    for (const item of list.items) seen.set(key(item), item);
    write(printer.table(list.items));
    return list.metadata.resourceVersion;
  };
  let version = await relist();
  while (!signal.aborted) {
    try {
      const { body } = await client.stream(
        pathOf(target, { watch: '1', allowWatchBookmarks: 'true', resourceVersion: version }),
        signal,
      );
      for await (const line of lines(body)) {
        const event = JSON.parse(line) as { type: string; object: T & { code?: number } };
        if (event.type === 'ERROR') {
          if (event.object.code === 410) version = await relist();
          break;
        }
        version = event.object.metadata.resourceVersion ?? version;
        if (event.type === 'BOOKMARK') continue;
        if (event.type === 'DELETED') seen.delete(key(event.object));
        else seen.set(key(event.object), event.object);
        write(printer.row(event.object, [...seen.values()]));
      }
    } catch (err) {
      if (signal.aborted) return;
      // A refusal every replica would repeat ends the watch; a replica gone is the next one's to serve.
      if (err instanceof ApiError && ![502, 503, 504].includes(err.status)) throw err;
    }
    await delay(RECONNECT_MS, signal);
  }
}

function pathOf(target: WatchTarget, extra: Record<string, string>): string {
  const plural = PLURALS[target.kind];
  const base =
    target.namespace === null || target.kind === 'node'
      ? `/apis/fencer.dev/v1/${plural}`
      : `/apis/fencer.dev/v1/namespaces/${encodeURIComponent(target.namespace)}/${plural}`;
  const query = new URLSearchParams(extra);
  const fields = [target.fieldSelector, target.name === undefined ? undefined : `metadata.name=${target.name}`].filter(
    (f): f is string => !!f,
  );
  if (fields.length > 0) query.set('fieldSelector', fields.join(','));
  if (target.labelSelector) query.set('labelSelector', target.labelSelector);
  const text = query.toString();
  return text ? `${base}?${text}` : base;
}

/** The lines of a byte stream, without their newlines (a last line without one too). */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>)
    yield* splitter.push(decoder.decode(chunk, { stream: true }));
  const last = splitter.rest();
  if (last) yield last;
}
