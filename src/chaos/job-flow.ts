// Jobs submitted continuously to whichever replica answers, at a steady rate, with sizes and
// durations drawn from a seeded generator so that a campaign can be replayed.
import { delay } from '../lifecycle.js';

export class JobFlow {
  accepted = 0;
  private submitted = 0;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly urls: () => string[],
    private readonly perSecond: number,
    private readonly random: () => number,
    private readonly prefix = 'c',
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    const gap = 1000 / this.perSecond;
    while (!this.stopped) {
      const name = `${this.prefix}-${this.submitted++}`;
      void this.submit(name);
      await delay(gap);
    }
  }

  private async submit(name: string): Promise<void> {
    const cpu = ['250m', '500m', '1'][Math.floor(this.random() * 3)]!;
    const memory = ['128Mi', '256Mi', '512Mi'][Math.floor(this.random() * 3)]!;
    const duration = `${1 + Math.floor(this.random() * 3)}s`;
    const body = `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\nspec:\n  resources: { cpu: "${cpu}", memory: ${memory} }\n  duration: ${duration}\n`;
    // Keep trying every replica until one accepts: a submission during a failover must not be
    // dropped by the client either (the server side guarantees the rest).
    for (let round = 0; round < 50 && !this.stopped; round++) {
      for (const url of this.urls()) {
        const res = await fetch(`${url}/api/v1/jobs`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/yaml' },
          signal: AbortSignal.timeout(2000),
        }).catch(() => null);
        // 200 means an earlier try of ours got through but its answer was lost: accepted too.
        if (res && (res.status === 201 || res.status === 200)) {
          this.accepted++;
          return;
        }
      }
      await delay(200);
    }
  }
}
