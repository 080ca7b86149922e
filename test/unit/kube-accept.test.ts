// Content negotiation: the Accept headers kubectl and client-go send, and what each gets.
import { describe, expect, it } from 'vitest';
import { acceptsJson, discoveryFormat, parseAccept, tableVersion } from '../../src/api/kube/accept.js';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const TABLE_V1BETA1 = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io';
const PROTOBUF_V2 = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

describe('parseAccept', () => {
  it('orders by q, keeping the client order on ties, and drops q=0', () => {
    const ranges = parseAccept(
      'text/plain;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml;q=0, */*;q=0.8',
    );
    expect(ranges.map((r) => `${r.type}/${r.subtype} ${r.q}`)).toEqual([
      'application/json 1',
      '*/* 0.8',
      'text/plain 0.5',
    ]);
    expect(ranges[0]?.params).toEqual({ as: 'Table', v: 'v1', g: 'meta.k8s.io' });
  });

  it('reads a missing or empty header as */*', () => {
    expect(parseAccept(undefined)).toEqual([{ type: '*', subtype: '*', params: {}, q: 1 }]);
    expect(parseAccept('  ')).toEqual([{ type: '*', subtype: '*', params: {}, q: 1 }]);
  });
});

describe('discoveryFormat', () => {
  it.each([
    {
      who: 'kubectl 1.32 (v2, v2beta1, then plain)',
      accept: `${V2},${V2BETA1},application/json`,
      format: 'aggregated-v2',
    },
    {
      who: 'kubectl 1.33+ (nopeer profile first)',
      accept: `${V2};profile=nopeer,${V2},${V2BETA1},application/json`,
      format: 'aggregated-v2',
    },
    {
      who: 'kubectl 1.26-1.29 (v2beta1, then plain)',
      accept: `${V2BETA1},application/json`,
      format: 'aggregated-v2beta1',
    },
    {
      who: 'a client with its parameters in another order',
      accept: 'application/json; as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io',
      format: 'aggregated-v2',
    },
    { who: 'a client that prefers plain JSON by q', accept: `${V2};q=0.5,application/json`, format: 'legacy' },
    { who: 'legacy discovery (UseLegacyDiscovery)', accept: 'application/json', format: 'legacy' },
    { who: 'curl', accept: '*/*', format: 'legacy' },
    { who: 'no Accept header', accept: undefined, format: 'legacy' },
    {
      who: 'an unknown discovery version, then plain',
      accept: 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json',
      format: 'legacy',
    },
    { who: 'protobuf only', accept: 'application/vnd.kubernetes.protobuf', format: null },
    {
      who: 'only an unknown discovery version',
      accept: 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList',
      format: null,
    },
  ])('$who gets $format', ({ accept, format }) => {
    expect(discoveryFormat(parseAccept(accept))).toBe(format);
  });
});

describe('tableVersion', () => {
  it.each([
    { who: 'kubectl get', accept: `${TABLE_V1},${TABLE_V1BETA1},application/json`, version: 'v1' },
    { who: 'an old kubectl get', accept: `${TABLE_V1BETA1},application/json`, version: 'v1beta1' },
    { who: 'kubectl get -o yaml', accept: 'application/json', version: null },
    { who: 'a client that ranks the object first', accept: `application/json,${TABLE_V1}`, version: null },
    { who: 'a client that ranks the Table first by q', accept: `application/json;q=0.9,${TABLE_V1}`, version: 'v1' },
    {
      who: 'a Table of another group, then plain',
      accept: 'application/json;as=Table;v=v1;g=example.com,application/json',
      version: null,
    },
    { who: 'no Accept header', accept: undefined, version: null },
  ])('$who: $version', ({ accept, version }) => {
    expect(tableVersion(parseAccept(accept))).toBe(version);
  });
});

describe('acceptsJson', () => {
  it.each([
    { who: 'kubectl asking /openapi/v2 as protobuf', accept: PROTOBUF_V2, json: false },
    { who: 'a JSON client', accept: 'application/json', json: true },
    { who: 'curl', accept: '*/*', json: true },
    { who: 'application/*', accept: 'application/*', json: true },
  ])('$who: $json', ({ accept, json }) => {
    expect(acceptsJson(parseAccept(accept))).toBe(json);
  });
});
