// Wakeup: the sleep of every controller loop, cut short by a nudge (NOTIFY on submit). A nudge
// must never be lost, whether it comes during a sleep, between two, or after one that ended by
// its timer.
import { describe, expect, it } from 'vitest';
import { Wakeup } from '../../src/lifecycle.js';

/** Whether the sleep ended within `withinMs` (it would otherwise last an hour). */
async function endsSoon(sleep: Promise<void>, withinMs = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)));
  const ended = await Promise.race([sleep.then(() => true as const), late]);
  clearTimeout(timer);
  return ended;
}

describe('Wakeup', () => {
  it('is cut short by a nudge during the sleep', async () => {
    const w = new Wakeup();
    const sleep = w.sleep(3_600_000);
    w.nudge();
    expect(await endsSoon(sleep)).toBe(true);
  });

  it('keeps a nudge that comes between two sleeps', async () => {
    const w = new Wakeup();
    w.nudge();
    expect(await endsSoon(w.sleep(3_600_000))).toBe(true);
  });

  it('keeps a nudge that comes after a sleep that ended by its timer', async () => {
    const w = new Wakeup();
    await w.sleep(5);
    w.nudge();
    expect(await endsSoon(w.sleep(3_600_000))).toBe(true);
  });

  it('keeps one nudge for one sleep only', async () => {
    const w = new Wakeup();
    w.nudge();
    w.nudge();
    await w.sleep(3_600_000);
    expect(await endsSoon(w.sleep(3_600_000), 50)).toBe(false);
  });
});
