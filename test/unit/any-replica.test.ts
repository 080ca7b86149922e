import { describe, expect, it } from 'vitest';
import { ReplicaList, askReplicas, describeFetchFailure } from '../../src/net/any-replica.js';

describe('ReplicaList', () => {
  it('asks the one that answered last first, moves a failing first one to the end, and learns others behind the first', () => {
    const list = new ReplicaList(['a', 'b', 'c', 'a']);
    expect(list.all).toEqual(['a', 'b', 'c']);
    list.prefer('c');
    expect(list.all).toEqual(['c', 'a', 'b']);
    list.demoteFirst();
    expect(list.all).toEqual(['a', 'b', 'c']);
    list.learn(['d', 'b']);
    expect(list.all).toEqual(['a', 'd', 'b', 'c']);
  });

  it('needs at least one replica', () => {
    expect(() => new ReplicaList([])).toThrow(/no fencer server/);
  });
});

describe('askReplicas', () => {
  it('asks each replica once in order until one answers, and prefers it from then on', async () => {
    const list = new ReplicaList(['a', 'b', 'c']);
    const asked: string[] = [];
    const outcome = await askReplicas(list, async (server) => {
      asked.push(server);
      return server === 'b' ? { answer: 42 } : { next: `${server} is down` };
    });
    expect(outcome).toEqual({ answer: 42, server: 'b' });
    expect(asked).toEqual(['a', 'b']);
    expect(list.first).toBe('b');
  });

  it('says why each replica could not answer, and keeps the order when none did', async () => {
    const list = new ReplicaList(['a', 'b']);
    expect(await askReplicas(list, async (server) => ({ next: `${server}: timed out` }))).toEqual({
      failures: [
        { server: 'a', why: 'a: timed out' },
        { server: 'b', why: 'b: timed out' },
      ],
    });
    expect(list.all).toEqual(['a', 'b']);
  });

  it('stops at an answer every replica would repeat (ask throws)', async () => {
    const asked: string[] = [];
    const round = askReplicas(new ReplicaList(['a', 'b']), async (server) => {
      asked.push(server);
      throw new Error('404 no such job');
    });
    await expect(round).rejects.toThrow('404 no such job');
    expect(asked).toEqual(['a']);
  });
});

describe('describeFetchFailure', () => {
  it('names a timeout, the cause of a network error, or the message', () => {
    expect(describeFetchFailure(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('timed out');
    expect(
      describeFetchFailure(
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
      ),
    ).toBe('ECONNREFUSED');
    expect(describeFetchFailure(new Error('boom'))).toBe('boom');
  });
});
