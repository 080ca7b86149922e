// Content negotiation the way Kubernetes clients use it: the Accept header names not only a
// media type but, in its parameters, which object to send (`as=Table;v=v1;g=meta.k8s.io`,
// `as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io`). A client lists what it wants best
// first and ends with plain application/json, so a server that does not know a form falls
// back to the plain object; one that answers with a form says so in its Content-Type.

export interface MediaRange {
  type: string;
  subtype: string;
  /** Lower-cased names; q and the parameters that change nothing here are left out. */
  params: Record<string, string>;
  q: number;
}

// charset: fencer speaks UTF-8 only. profile=nopeer asks aggregated discovery to leave out
// what peer apiservers serve; fencer has no peers, so the document is the same.
const IGNORED_PARAMS = new Set(['q', 'charset', 'profile']);

/** The ranges of an Accept header, most preferred first (by q; ties keep the client's order). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const ranges: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const [mediaType = '', ...rawParams] = clause.split(';').map((part) => part.trim());
    const [type, subtype] = mediaType.toLowerCase().split('/');
    if (!type || !subtype) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const raw of rawParams) {
      const at = raw.indexOf('=');
      if (at <= 0) continue;
      const name = raw.slice(0, at).trim().toLowerCase();
      const value = raw
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (name === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
      else if (!IGNORED_PARAMS.has(name)) params[name] = value;
    }
    if (q > 0) ranges.push({ type, subtype, params, q });
  }
  return ranges.sort((a, b) => b.q - a.q); // stable: ties keep the client's order
}

interface Offer<T> {
  value: T;
  /** The parameters that make this form: a range must name exactly these (a bare range gets the plain object). */
  params: Record<string, string>;
}

/** The offer the most preferred acceptable range asks for, or null when none is acceptable (406). */
function negotiate<T>(accept: readonly MediaRange[], offers: readonly Offer<T>[]): T | null {
  for (const range of accept) {
    if (!isJson(range)) continue;
    const offer = offers.find((o) => sameParams(range.params, o.params));
    if (offer) return offer.value;
  }
  return null;
}

function isJson(range: MediaRange): boolean {
  return (range.type === 'application' || range.type === '*') && (range.subtype === 'json' || range.subtype === '*');
}

function sameParams(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

export type DiscoveryFormat = 'aggregated-v2' | 'aggregated-v2beta1' | 'legacy';

const DISCOVERY = { g: 'apidiscovery.k8s.io', as: 'APIGroupDiscoveryList' };

const DISCOVERY_OFFERS: readonly Offer<DiscoveryFormat>[] = [
  { value: 'aggregated-v2', params: { ...DISCOVERY, v: 'v2' } },
  { value: 'aggregated-v2beta1', params: { ...DISCOVERY, v: 'v2beta1' } },
  { value: 'legacy', params: {} },
];

/**
 * Which document GET /api and GET /apis answer with: an APIGroupDiscoveryList (every group
 * with its resources, in one request) or the legacy APIVersions / APIGroupList. Null: nothing
 * fencer can send is acceptable (406).
 */
export function discoveryFormat(accept: readonly MediaRange[]): DiscoveryFormat | null {
  return negotiate(accept, DISCOVERY_OFFERS);
}

/**
 * The Content-Type of each discovery answer. client-go decides how to read the body by it, so
 * an aggregated document sent as plain application/json would be read as a legacy one.
 */
export const DISCOVERY_CONTENT_TYPES: Readonly<Record<DiscoveryFormat, string>> = {
  'aggregated-v2': 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'aggregated-v2beta1': 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  legacy: 'application/json',
};

export type TableVersion = 'v1' | 'v1beta1';

const TABLE_OFFERS: readonly Offer<TableVersion | 'object'>[] = [
  { value: 'v1', params: { as: 'Table', g: 'meta.k8s.io', v: 'v1' } },
  { value: 'v1beta1', params: { as: 'Table', g: 'meta.k8s.io', v: 'v1beta1' } },
  { value: 'object', params: {} },
];

/**
 * The version of meta.k8s.io Table a GET or list asks for (kubectl get does, for its columns),
 * or null when the object itself is wanted, or nothing acceptable is asked for.
 */
export function tableVersion(accept: readonly MediaRange[]): TableVersion | null {
  const answer = negotiate(accept, TABLE_OFFERS);
  return answer === 'object' ? null : answer;
}

/**
 * Whether /openapi/v2 may answer in JSON. kubectl asks for it only as protobuf
 * (application/com.github.proto-openapi.spec.v2@v1.0+protobuf), which fencer does not
 * produce, and gets 406: explain and validation read /openapi/v3, and client-side apply
 * falls back to a JSON merge patch, as it does for any custom resource.
 */
export function acceptsJson(accept: readonly MediaRange[]): boolean {
  return negotiate(accept, [{ value: true, params: {} }]) === true;
}
