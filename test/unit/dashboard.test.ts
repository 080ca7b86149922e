// The dashboard's pure parts: where a workflow's jobs are drawn, and which files the page may load.
import { describe, expect, it } from 'vitest';
import { BOX, layoutDag } from '../../src/ui/dag.js';
import { assetPath } from '../../src/api/routes/ui.js';

describe('layoutDag', () => {
  it('puts each stage in a column, jobs of a stage in rows, and an edge per need', () => {
    const { boxes, edges, width, height } = layoutDag(
      [
        { name: 'load', stage: 2, phase: 'Pending' },
        { name: 'extract', stage: 0, phase: 'Succeeded' },
        { name: 'enrich', stage: 1, phase: 'Running' },
        { name: 'clean', stage: 1, phase: 'Running' },
      ],
      new Map([
        ['clean', ['extract']],
        ['enrich', ['extract']],
        ['load', ['clean', 'enrich']],
        ['extract', []],
      ]),
    );
    const at = Object.fromEntries(boxes.map((b) => [b.name, [b.x, b.y]]));
    const column = BOX.width + BOX.gapX;
    const row = BOX.height + BOX.gapY;
    expect(at).toEqual({ extract: [0, 0], clean: [column, 0], enrich: [column, row], load: [2 * column, 0] });
    expect(edges.map((e) => `${e.from.name}>${e.to.name}`).sort()).toEqual([
      'clean>load',
      'enrich>load',
      'extract>clean',
      'extract>enrich',
    ]);
    expect([width, height]).toEqual([2 * column + BOX.width, row + BOX.height]);
  });

  it('draws nothing for a workflow with no jobs yet, and skips a need it does not know', () => {
    expect(layoutDag([], new Map())).toEqual({ boxes: [], edges: [], width: 0, height: 0 });
    expect(layoutDag([{ name: 'a', stage: 0, phase: 'Pending' }], new Map([['a', ['gone']]])).edges).toEqual([]);
  });
});

describe('the files /ui serves', () => {
  it.each([
    ['', 'ui/index.html'],
    ['index.html', 'ui/index.html'],
    ['style.css', 'ui/style.css'],
    ['js/ui/app.js', 'ui/app.js'],
    ['js/domain/quantity.js', 'domain/quantity.js'],
    ['js/domain/duration.js', 'domain/duration.js'],
    ['js/domain/list-pages.js', 'domain/list-pages.js'],
    ['js/net/any-replica.js', 'net/any-replica.js'],
  ])('%j is %s', (url, file) => expect(assetPath(url)).toBe(file));

  it.each([
    'js/../../package.json',
    'js/ui/../../store/db.js',
    'js/store/db.js',
    'js/ui/app.js.map',
    '../dist/cli/main.js',
    'js/domain/names.js',
    'js/net/lines.js',
    '%2e%2e/package.json',
  ])('%j is not served', (url) => {
    expect(assetPath(url)).toBeNull();
  });
});
