// Why each waiting job waits, as last written: a round asks for every job of its backlog, so
// the question builds nothing (no string per job) and a job whose reason stands costs no write.

/** Forgotten all at once past this many jobs: a reason written again is only a wasted write. */
const MOST_MARKS = 100_000;

interface Mark {
  reason: string;
  message: string;
}

export class ReasonMarks {
  private readonly marks = new Map<string, Mark>();
  /** One object per distinct reason and message: thousands of jobs wait for the same one. */
  private readonly shared = new Map<string, Mark>();

  has(uid: string, reason: string, message: string): boolean {
    const m = this.marks.get(uid);
    return m !== undefined && m.reason === reason && m.message === message;
  }

  /** Call once they are written. */
  mark(written: ReadonlyArray<{ jobUid: string; reason: string; message: string }>): void {
    for (const w of written) {
      const key = `${w.reason}\n${w.message}`;
      let mark = this.shared.get(key);
      if (!mark) this.shared.set(key, (mark = { reason: w.reason, message: w.message }));
      this.marks.set(w.jobUid, mark);
    }
    if (this.marks.size > MOST_MARKS) {
      this.marks.clear();
      this.shared.clear();
    }
  }
}
