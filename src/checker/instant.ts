// An instant as the checker's reports show it.

/** ms since the Unix epoch and ISO-8601 (null: never). */
export interface Instant {
  ms: number;
  iso: string;
}

export function instant(ms: number): Instant {
  return { ms, iso: new Date(ms).toISOString() };
}
