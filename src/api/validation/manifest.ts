// Submitted text (YAML, possibly several `---` documents, or JSON) into manifests that still
// know where each of their fields was written, so every validation error can name its line.
import { isAlias, isMap, isSeq, LineCounter, parseAllDocuments, parseDocument, type Document, type Node } from 'yaml';
import { ValidationError, type ValidationDetail } from '../../errors/validation-error.js';
import { aliasRefusal, checkDepth, checkNesting, MAX_YAML_ALIASES } from './yaml-bounds.js';

export type ManifestPath = Array<string | number>;

export interface Manifest {
  object: unknown;
  /** The 1-based line of the deepest part of `path` that exists in the text (a missing field points at its parent). */
  lineOf(path: ManifestPath): number | undefined;
}

export function parseManifests(text: string, contentType?: string): Manifest[] {
  checkNesting(text);
  const manifests = looksLikeJson(text, contentType) ? parseJson(text) : parseYaml(text);
  if (manifests.length === 0)
    throw new ValidationError([{ path: '', message: 'no manifest in the input (it is empty)' }]);
  return manifests;
}

function looksLikeJson(text: string, contentType: string | undefined): boolean {
  if (contentType !== undefined && contentType.toLowerCase().includes('json')) return true;
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

function parseYaml(text: string): Manifest[] {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const errors: ValidationDetail[] = documents.flatMap((doc) =>
    doc.errors.map((error) => ({
      path: '',
      message: `invalid YAML: ${error.message}`,
      line: lineCounter.linePos(error.pos[0]).line,
    })),
  );
  if (errors.length > 0) throw new ValidationError(errors);
  // A `---` with nothing (or only comments) after it is no manifest, as with kubectl.
  return documents
    .map((doc) => ({ object: boundedJs(doc), lineOf: (path: ManifestPath) => lineIn(doc, lineCounter, path) }))
    .filter((manifest) => manifest.object !== null && manifest.object !== undefined);
}

function boundedJs(doc: Document): unknown {
  let object: unknown;
  try {
    object = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    throw aliasRefusal(error) ?? error;
  }
  checkDepth(object);
  return object;
}

/** The 1-based line of a character of the text. */
function lineAt(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

/** A JSON object is one manifest; a JSON array is one manifest per item. */
function parseJson(text: string): Manifest[] {
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch (error) {
    const offset = jsonErrorOffset(text);
    const message = `invalid JSON: ${jsonMessage(error)}`;
    if (offset < 0) throw new ValidationError([{ path: '', message }]);
    throw new ValidationError([{ path: '', message, line: lineAt(text, offset) }]);
  }
  // JSON.parse lets a key written twice through silently (the last one wins): refuse it, as the
  // YAML reader does, with yaml's own words and line.
  const duplicate = firstDuplicateKeyOffset(text);
  if (duplicate >= 0) {
    const { doc, lineCounter } = positionsOf(text);
    const duplicates = doc.errors.filter((error) => error.code === 'DUPLICATE_KEY');
    // yaml does not take a lone CR for a line break, as JSON does, and may not see the duplicate.
    if (duplicates.length === 0)
      throw new ValidationError([
        {
          path: '',
          message: 'invalid JSON: Map keys must be unique',
          line: lineAt(text, duplicate),
        },
      ]);
    throw new ValidationError(
      duplicates.map((error) => ({
        path: '',
        message: `invalid JSON: ${error.message}`,
        line: lineCounter.linePos(error.pos[0]).line,
      })),
    );
  }
  // JSON is YAML, so the yaml parser gives the positions JSON.parse does not keep; only an
  // invalid manifest asks for one. The parse costs a hundred times JSON.parse's time and memory
  // (a batch of 1,000 jobs: ~130 ms and tens of MB on the worker), so a valid batch never pays it.
  let positions: ReturnType<typeof positionsOf> | undefined;
  const lineOf = (path: ManifestPath) => {
    positions ??= positionsOf(text);
    return lineIn(positions.doc, positions.lineCounter, path);
  };
  if (!Array.isArray(object)) return [{ object, lineOf }];
  return object.map((item, index) => ({ object: item, lineOf: (path) => lineOf([index, ...path]) }));
}

function positionsOf(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  return { doc: parseDocument(text, { lineCounter, prettyErrors: false }), lineCounter };
}

/**
 * Where the first key written twice in one object of `text` starts, else -1. `text` is valid JSON
 * (JSON.parse took it): a scan of its strings and brackets, a key compared by its value.
 */
export function firstDuplicateKeyOffset(text: string): number {
  // One entry per open bracket: the keys of an object so far, or null for an array.
  const open: Array<Set<string> | null> = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          i++;
        } else if (d === QUOTE) break;
      }
      const keys = open[open.length - 1];
      if (keyNext && keys) {
        const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
        if (keys.has(key)) return start;
        keys.add(key);
        keyNext = false;
      }
    } else if (c === OPEN_BRACE) {
      open.push(new Set());
      keyNext = true;
    } else if (c === OPEN_BRACKET) {
      open.push(null);
      keyNext = false;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      open.pop();
      keyNext = false;
    } else if (c === COMMA) {
      keyNext = open[open.length - 1] != null;
    }
  }
  return -1;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function lineIn(doc: Document, lineCounter: LineCounter, path: ManifestPath): number | undefined {
  let node: unknown = doc.contents;
  let offset = startOf(node);
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => String(scalarValue(item.key)) === String(segment));
      if (!pair) break;
      offset = startOf(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) break;
      offset = startOf(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

function startOf(node: unknown): number | undefined {
  return (node as Node | null | undefined)?.range?.[0];
}

function scalarValue(key: unknown): unknown {
  return key !== null && typeof key === 'object' && 'value' in key ? key.value : key;
}

/** V8's message without the parts that repeat the input or count characters. */
function jsonMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/ \(line \d+ column \d+\)$/, '');
}

/**
 * Where JSON.parse gave up, for its messages that do not say (Node 20: "Unexpected token").
 * A minimal JSON recognizer; -1 when it finds nothing wrong.
 */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  };
  const literal = (word: string): boolean => {
    if (!text.startsWith(word, i)) return false;
    i += word.length;
    return true;
  };
  const number = (): boolean => {
    const pattern = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (!match) return false;
    i += match[0].length;
    return true;
  };
  const string = (): boolean => {
    if (text[i] !== '"') return false;
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined || c < ' ') return false;
      if (c === '"') {
        i++;
        return true;
      }
      if (c !== '\\') {
        i++;
        continue;
      }
      i++;
      if (text[i] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) i += 5;
      else if ('"\\/bfnrt'.includes(text[i] ?? 'x')) i++;
      else return false;
    }
  };
  const members = (close: string, member: () => boolean): boolean => {
    i++;
    skipSpace();
    if (text[i] === close) {
      i++;
      return true;
    }
    for (;;) {
      skipSpace();
      if (!member()) return false;
      skipSpace();
      if (text[i] === ',') i++;
      else if (text[i] === close) {
        i++;
        return true;
      } else return false;
    }
  };
  const value = (): boolean => {
    skipSpace();
    switch (text[i]) {
      case '{':
        return members('}', () => {
          if (!string()) return false;
          skipSpace();
          if (text[i] !== ':') return false;
          i++;
          return value();
        });
      case '[':
        return members(']', value);
      case '"':
        return string();
      case 't':
        return literal('true');
      case 'f':
        return literal('false');
      case 'n':
        return literal('null');
      default:
        return number();
    }
  };
  if (!value()) return Math.min(i, text.length);
  skipSpace();
  return i < text.length ? i : -1;
}

/** A path as people read it: `spec.resources.cpu`, `status.conditions[0]`, `metadata.labels[app.kubernetes.io/name]`. */
export function formatPath(path: ManifestPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number' || !/^[A-Za-z_$][\w$-]*$/.test(segment)) text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}
