import { describe, expect, it } from 'vitest';
import { ReplicaClient } from '../../src/agent/replica-client.js';

describe('ReplicaClient', () => {
  const replicas = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'];

  it('starts every agent on the first replica without a spread key', () => {
    expect(new ReplicaClient({ replicas }).current).toBe(replicas[0]);
  });

  it('spreads agents over the replicas by name, the same name always on the same one', () => {
    const first = (name: string) => new ReplicaClient({ replicas, spreadKey: name }).current;
    const names = Array.from({ length: 30 }, (_, i) => `node-${i + 1}`);
    expect(names.map(first)).toEqual(names.map(first));
    const counts = replicas.map((r) => names.filter((n) => first(n) === r).length);
    for (const count of counts) expect(count).toBeGreaterThan(3);
  });
});
