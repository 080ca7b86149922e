// Column layout as kubectl prints it (a tabwriter with 3 spaces of padding): every column but the
// last is padded to its widest cell, so `awk '{print $1}'` and the eye both work.
const COLUMN_GAP = 3;

export function renderTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, col) => Math.max(...all.map((row) => (row[col] ?? '').length)));
  const lines = all.map((row) =>
    row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd((widths[col] ?? 0) + COLUMN_GAP))).join(''),
  );
  return lines.join('\n') + '\n';
}
