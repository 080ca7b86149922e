// Why each waiting job waits, as last written: a round asks for every job of its backlog, so
// the question builds nothing (no string per job) and a job whose reason stands costs no write.

/** Forgotten all at once past this many jobs: a reason written again is only a wasted write. */
const MOST_MARKS = 100_000;

export class ReasonMarks {
  private readonly marks = new Map<string, { reason: string; message: string }>();

  has(uid: string, reason: string, message: string): boolean {
    const m = this.marks.get(uid);
    return m !== undefined && m.reason === reason && m.message === message;
  }

  /** Call once they are written. */
  mark(written: ReadonlyArray<{ jobUid: string; reason: string; message: string }>): void {
    for (const w of written) this.marks.set(w.jobUid, { reason: w.reason, message: w.message });
    if (this.marks.size > MOST_MARKS) this.marks.clear();
  }
}
