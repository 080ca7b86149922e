// Which web pages may read this API from another origin: only the replicas' own. A dashboard
// served by one replica reads from the others when that one dies; any other site an operator has
// open must not read the cluster through the operator's browser (the API has no authentication).
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';

/** The replicas' list is read again at most this often. */
const READ_EVERY_MS = 5_000;

export class ReplicaOrigins {
  private origins = new Set<string>();
  private readAt = 0;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    ownUrl: string,
  ) {
    this.origins.add(originOf(ownUrl));
  }

  /** Whether a page from `origin` may read answers. */
  async allows(origin: string): Promise<boolean> {
    if (this.origins.has(origin)) return true;
    if (Date.now() - this.readAt > READ_EVERY_MS) {
      this.reading ??= this.read().finally(() => (this.reading = undefined));
      await this.reading;
    }
    return this.origins.has(origin);
  }

  private async read(): Promise<void> {
    const { rows } = await this.db.query<{ url: string }>(sql('replicas/list'), [0]);
    for (const { url } of rows) this.origins.add(originOf(url));
    this.readAt = Date.now();
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
