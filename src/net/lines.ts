// NDJSON streams arrive in chunks that cut lines anywhere: this joins them back into lines.

/** Text in, whole lines out (trimmed, blank ones dropped); the part after the last newline waits for more. */
export class LineSplitter {
  private pending = '';

  push(text: string): string[] {
    this.pending += text;
    const lines: string[] = [];
    for (let nl = this.pending.indexOf('\n'); nl >= 0; nl = this.pending.indexOf('\n')) {
      const line = this.pending.slice(0, nl).trim();
      this.pending = this.pending.slice(nl + 1);
      if (line !== '') lines.push(line);
    }
    return lines;
  }

  /** The last line, when the stream ended without a newline after it (empty when none). */
  rest(): string {
    return this.pending.trim();
  }
}
