// A line chart as SVG text with a y axis of any range, linear or logarithmic, and shaded bands
// (a target): for results whose y is not a share of 0–1 (plot.ts draws those).
import { escape, niceStep } from './plot.js';

export interface XySeries {
  label: string;
  colour: string;
  points: Array<[number, number]>;
  dashed?: boolean;
}

export interface YAxis {
  label: string;
  min: number;
  max: number;
  log?: boolean;
  /** Values to label; default: powers of ten (log) or eight steps (linear). */
  ticks?: number[];
  format?: (v: number) => string;
}

export interface Band {
  from: number;
  to: number;
  colour: string;
  label: string;
}

const WIDTH = 860;
const HEIGHT = 380;
const LEFT = 70;
const RIGHT = 190;
const TOP = 30;
const BOTTOM = 40;

export function xyChart(title: string, xLabel: string, yAxis: YAxis, series: XySeries[], bands: Band[] = []): string {
  const maxX = Math.max(1, ...series.flatMap((s) => s.points.map(([x]) => x)));
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const scale = (v: number) => (yAxis.log ? Math.log10(Math.max(v, yAxis.min)) : v);
  const [lo, hi] = [scale(yAxis.min), scale(yAxis.max)];
  const x = (v: number) => (LEFT + (v / maxX) * plotW).toFixed(1);
  const y = (v: number) => (TOP + (1 - Math.max(0, Math.min(1, (scale(v) - lo) / (hi - lo)))) * plotH).toFixed(1);
  const format = yAxis.format ?? ((v: number) => String(v));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT}" y="18" font-size="14">${escape(title)}</text>`,
  ];
  for (const band of bands) {
    const top = Number(y(band.to));
    parts.push(
      `<rect x="${LEFT}" width="${plotW}" y="${top.toFixed(1)}" height="${(Number(y(band.from)) - top).toFixed(1)}" fill="${band.colour}" fill-opacity="0.25"/>`,
    );
  }
  for (const tick of yAxis.ticks ?? defaultTicks(yAxis)) {
    parts.push(`<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y(tick)}" y2="${y(tick)}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${LEFT - 6}" y="${y(tick)}" text-anchor="end" dominant-baseline="middle">${escape(format(tick))}</text>`,
    );
  }
  const step = niceStep(maxX);
  for (let v = 0; v <= maxX; v += step)
    parts.push(`<text x="${x(v)}" y="${TOP + plotH + 16}" text-anchor="middle">${v}</text>`);
  parts.push(`<text x="${LEFT + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">${escape(xLabel)}</text>`);
  parts.push(
    `<text transform="translate(14 ${TOP + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(yAxis.label)}</text>`,
  );
  const legend = [
    ...series.map((s) => ({ ...s, band: false })),
    ...bands.map((b) => ({ label: b.label, colour: b.colour, dashed: false, band: true })),
  ];
  series.forEach((s) => {
    const d = s.points.map(([px, py], j) => `${j === 0 ? 'M' : 'L'}${x(px)},${y(py)}`).join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="1.2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
  });
  legend.forEach((s, i) => {
    const ly = TOP + 10 + i * 18;
    parts.push(
      s.band
        ? `<rect x="${WIDTH - RIGHT + 12}" y="${ly - 5}" width="20" height="10" fill="${s.colour}" fill-opacity="0.25"/>`
        : `<line x1="${WIDTH - RIGHT + 12}" x2="${WIDTH - RIGHT + 32}" y1="${ly}" y2="${ly}" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/>`,
    );
    parts.push(`<text x="${WIDTH - RIGHT + 38}" y="${ly}" dominant-baseline="middle">${escape(s.label)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function defaultTicks(axis: YAxis): number[] {
  if (axis.log) {
    const ticks: number[] = [];
    for (let e = Math.ceil(Math.log10(axis.min)); e <= Math.floor(Math.log10(axis.max)); e++) ticks.push(10 ** e);
    return ticks;
  }
  return Array.from({ length: 9 }, (_, i) => axis.min + ((axis.max - axis.min) * i) / 8);
}
