// A small element builder: text always goes in as text, never as HTML, since names, messages
// and labels come from users.
import { humanDuration } from '../domain/duration.js';

type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) element.setAttribute(name, value);
  for (const child of children)
    if (child !== null && child !== undefined && child !== false)
      element.append(typeof child === 'number' ? String(child) : child);
  return element;
}

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  ...children: Array<Node | string>
): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/** How long ago, or for how long, as kubectl prints ages ("45s", "3m10s", "2d"). */
export function age(from: string | undefined, now: number): string {
  const at = from === undefined ? NaN : Date.parse(from);
  return Number.isNaN(at) ? '' : humanDuration(now - at);
}

export function phaseBadge(phase: string): HTMLElement {
  return h('span', { class: 'phase', style: `background: var(--${phase}, #888)`, 'data-phase': phase }, phase);
}

/** A stable colour per job, so a job keeps its colour as the nodes fill and empty. */
export function colourOf(name: string): string {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return `hsl(${Math.abs(hash) % 360} 60% 52%)`;
}
