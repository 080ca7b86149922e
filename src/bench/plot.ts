// A line chart as SVG text: shares (0–1) over time, for a benchmark's results page.

export interface Series {
  label: string;
  colour: string;
  points: Array<[number, number]>; // [seconds, share 0..1]
  dashed?: boolean;
}

const WIDTH = 800;
const HEIGHT = 360;
const LEFT = 50;
const RIGHT = 160;
const TOP = 30;
const BOTTOM = 40;

export function lineChart(title: string, xLabel: string, series: Series[]): string {
  const maxX = Math.max(1, ...series.flatMap((s) => s.points.map(([x]) => x)));
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const x = (v: number) => (LEFT + (v / maxX) * plotW).toFixed(1);
  const y = (v: number) => (TOP + (1 - Math.max(0, Math.min(1, v))) * plotH).toFixed(1);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT}" y="18" font-size="14">${escape(title)}</text>`,
  ];
  for (const share of [0, 0.25, 0.5, 0.75, 0.95, 1]) {
    parts.push(
      `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y(share)}" y2="${y(share)}" stroke="${share === 0.95 ? '#c66' : '#ddd'}"/>`,
    );
    parts.push(
      `<text x="${LEFT - 6}" y="${y(share)}" text-anchor="end" dominant-baseline="middle">${Math.round(share * 100)}%</text>`,
    );
  }
  const step = niceStep(maxX);
  for (let v = 0; v <= maxX; v += step) {
    parts.push(`<text x="${x(v)}" y="${TOP + plotH + 16}" text-anchor="middle">${v}</text>`);
  }
  parts.push(`<text x="${LEFT + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">${escape(xLabel)}</text>`);
  series.forEach((s, i) => {
    const d = s.points.map(([px, py], j) => `${j === 0 ? 'M' : 'L'}${x(px)},${y(py)}`).join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    const ly = TOP + 10 + i * 18;
    parts.push(
      `<line x1="${WIDTH - RIGHT + 12}" x2="${WIDTH - RIGHT + 32}" y1="${ly}" y2="${ly}" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    parts.push(`<text x="${WIDTH - RIGHT + 38}" y="${ly}" dominant-baseline="middle">${escape(s.label)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export function niceStep(max: number): number {
  const raw = max / 8;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
}

export function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
