// Source positions of a large manifest without the `yaml` package, for locating its problems
// (that package needs seconds and hundreds of MB for a 10,000-tool catalog). indexBlockYaml():
// one pass over the lines of block-style YAML records where each block mapping key, its value
// and each block sequence item starts; indexJson(): one pass over JSON text records every key
// and value. Guarantees: every position given is the one the `yaml` package gives for that
// node (tests compare them on every manifest in the repository and on generated catalogs); in
// YAML, a node inside a one-line flow collection ({…} or […]) is located at that collection;
// for YAML it does not follow — a flow collection or a quoted scalar over several lines, a
// tag, an anchor, several documents, a key it cannot place — or text that is not JSON (or
// JSON nested more than JSON_MAX_NESTING deep), the index is undefined and the caller uses the
// `yaml` package.

type Path = readonly (string | number)[];
export interface Pos {
  line: number;
  col: number;
}

/** A node's key (when it is a mapping value) and where its value starts. */
interface Entry {
  key?: Pos;
  value?: Pos;
}

/**
 * An open container. `pending`: a key or item whose value starts on a later line, until that
 * line says whether it is a mapping or a sequence (or, by its column, that the value is empty).
 */
interface Frame {
  kind: 'map' | 'seq' | 'pending';
  /** map/seq: the column of its entries; pending: the column of the line that owns it. */
  col: number;
  path: Path;
  next: number;
  /** pending: whether a sequence at the owner's own column is its value (a key's, not an item's). */
  seqAtCol?: boolean;
  /** pending: where an empty value is located (the key, or the item's dash). */
  empty?: Pos;
}

const KEY = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#"'{}[\],&*!|>%@`-][^#]*?|-[^\s#][^#]*?)[ \t]*:(?=[ \t]|$)/;
const BLOCK_SCALAR = /^[|>][-+0-9]*[ \t]*(#.*)?$/;
const UNSURE = /^[&!*]/; // an anchor, a tag or an alias

const keyOf = (path: Path) => path.join('\u0001');

function unquote(k: string): string | undefined {
  if (k.startsWith('"')) {
    try {
      return JSON.parse(k) as string;
    } catch {
      return undefined;
    }
  }
  return k.startsWith("'") ? k.slice(1, -1).replaceAll("''", "'") : k;
}

/** Whether a one-line value leaves a flow collection or a quoted scalar open. */
function opens(v: string): boolean {
  if (v.startsWith('"')) return !/^"(?:[^"\\]|\\.)*"/.test(v);
  if (v.startsWith("'")) return !/^'(?:[^']|'')*'/.test(v);
  if (v[0] !== '{' && v[0] !== '[') return false;
  let depth = 0;
  let quote = '';
  let prev = ''; // the last character outside quotes that is not a space: a quote opens a scalar only after { [ , or :
  for (let i = 0; i < v.length; i++) {
    const ch = v[i]!;
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = '';
      continue;
    }
    if ((ch === '"' || ch === "'") && '{[,:'.includes(prev)) quote = ch;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === '#' && (v[i - 1] === ' ' || v[i - 1] === '\t')) break; // a comment
    if (ch !== ' ' && ch !== '\t') prev = ch;
  }
  return depth !== 0;
}

export interface PositionIndex {
  /** Where the node at `path` starts (`at: 'key'`: its key), else its nearest indexed ancestor; undefined: nothing indexed. */
  locate(path: Path, at?: 'value' | 'key'): Pos | undefined;
  /** Whether `path` itself is indexed (not inside a one-line flow collection). */
  has(path: Path): boolean;
}

/** The index of `text`, or undefined when the text is not block YAML this reads. */
export function indexBlockYaml(text: string): PositionIndex | undefined {
  const index = new Map<string, Entry>();
  const stack: Frame[] = [{ kind: 'pending', col: -1, path: [], next: 0 }];
  const lines = text.split('\n');
  let scalarOwner = -1; // while ≥ 0: inside a block scalar whose lines are indented deeper than this
  const entry = (path: Path) => {
    const k = keyOf(path);
    let e = index.get(k);
    if (!e) index.set(k, (e = {}));
    return e;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    let rest = line.trimStart();
    let col = line.length - rest.length;
    if (scalarOwner >= 0) {
      if (!rest || col > scalarOwner) continue;
      scalarOwner = -1;
    }
    if (!rest || rest.startsWith('#')) continue;
    if (rest.startsWith('---') || rest.startsWith('...') || rest.startsWith('%')) {
      if (i === 0 && /^---\s*(#.*)?$/.test(rest)) continue;
      return undefined;
    }
    const lineCol = col;
    const at = (c: number): Pos => ({ line: i + 1, col: c + 1 });
    const isItem = () => rest[0] === '-' && (rest.length === 1 || rest[1] === ' ' || rest[1] === '\t');
    // Close what this line's column ends: deeper containers, and a pending value this line is not part of.
    while (stack.length > 1) {
      const top = stack[stack.length - 1]!;
      if (top.kind === 'pending' ? col > top.col || (col === top.col && top.seqAtCol && isItem()) : col >= top.col) break;
      if (top.kind === 'pending') entry(top.path).value ??= top.empty;
      stack.pop();
    }
    let owner: Path | undefined; // the sequence item this line's content belongs to
    while (isItem()) {
      if (owner) return undefined; // "- - x": a sequence in an item on one line
      const top = stack[stack.length - 1]!;
      if (top.kind === 'pending') {
        entry(top.path).value ??= at(col);
        Object.assign(top, { kind: 'seq', col, next: 0 });
      } else if (top.kind !== 'seq' || top.col !== col) return undefined;
      owner = [...top.path, top.next++];
      const dash = at(col);
      const after = rest.slice(1).trimStart();
      if (!after || after.startsWith('#')) {
        stack.push({ kind: 'pending', col, path: owner, next: 0, empty: dash });
        rest = '';
        break;
      }
      col += rest.length - after.length;
      rest = after;
      entry(owner).value = at(col);
    }
    if (!rest || rest.startsWith('#')) continue;
    const m = KEY.exec(rest);
    if (!m) {
      if (UNSURE.test(rest) || (!owner && stack[stack.length - 1]!.kind === 'pending')) return undefined;
      if (BLOCK_SCALAR.test(rest)) scalarOwner = lineCol;
      else if (opens(rest)) return undefined;
      // Otherwise an item's scalar, or the continuation of a plain scalar on a deeper line.
      if (!owner && col <= stack[stack.length - 1]!.col) return undefined;
      continue;
    }
    const name = unquote(m[1]!);
    if (name === undefined) return undefined;
    let top = stack[stack.length - 1]!;
    if (owner) {
      stack.push((top = { kind: 'map', col, path: owner, next: 0 })); // "- key: value": the item is a mapping
    } else if (top.kind === 'pending') {
      entry(top.path).value ??= at(col);
      Object.assign(top, { kind: 'map', col, next: 0 });
    } else if (top.kind !== 'map' || top.col !== col) return undefined;
    const path = [...top.path, name];
    const e = entry(path);
    if (e.key) return undefined; // a duplicate key: the yaml package reports it
    e.key = at(col);
    const value = rest.slice(m[0].length).trimStart();
    if (!value || value.startsWith('#')) {
      stack.push({ kind: 'pending', col, path, next: 0, seqAtCol: true, empty: e.key });
      continue;
    }
    if (UNSURE.test(value)) return undefined;
    e.value = at(col + (rest.length - value.length));
    if (BLOCK_SCALAR.test(value)) scalarOwner = lineCol;
    else if (opens(value)) return undefined;
  }
  for (const f of stack) if (f.kind === 'pending' && f.path.length) entry(f.path).value ??= f.empty;
  return lookup(index);
}

function lookup(index: Map<string, Entry>): PositionIndex {
  return {
    locate(path, where = 'value') {
      for (let n = path.length; n >= 0; n--) {
        const e = index.get(keyOf(path.slice(0, n)));
        if (!e) continue;
        const p = where === 'key' && n === path.length && e.key ? e.key : e.value ?? e.key;
        if (p) return p;
      }
      return undefined;
    },
    has: (path) => index.has(keyOf(path)),
  };
}

const JSON_STRING = /"(?:[^"\\]|\\.)*"/y;
const JSON_SCALAR = /-?[0-9][0-9.eE+-]*|true|false|null/y;
/** Nodes this deep or shallower are indexed in the first pass; a deeper one is found by walking the text from its indexed ancestor. */
const JSON_DEPTH = 3;

/** Nesting this deep is not followed (the reader recurses): the index is undefined and the caller uses the `yaml` package. */
const JSON_MAX_NESTING = 1000;

/** A read position in JSON text, with its line. */
class JsonCursor {
  constructor(readonly text: string, public i = 0, public line = 1, public lineStart = 0) {}

  at(): Pos {
    return { line: this.line, col: this.i - this.lineStart + 1 };
  }

  copy(): JsonCursor {
    return new JsonCursor(this.text, this.i, this.line, this.lineStart);
  }

  space(): void {
    const t = this.text;
    for (; this.i < t.length; this.i++) {
      const c = t.charCodeAt(this.i);
      if (c === 10) {
        this.line++;
        this.lineStart = this.i + 1;
      } else if (c !== 32 && c !== 9 && c !== 13) break;
    }
  }

  token(re: RegExp): string | undefined {
    re.lastIndex = this.i;
    const m = re.exec(this.text);
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  /**
   * Reads one value. `visit` is told each member (key or index) before its value is read and
   * answers whether to go on calling it below that member; false: the value is only read.
   */
  value(visit?: { member(name: string | number, key: Pos | undefined, value: JsonCursor): boolean; leave(): void }, depth = 0): boolean {
    this.space();
    const c = this.text[this.i];
    if (c !== '{' && c !== '[') return (c === '"' ? this.token(JSON_STRING) : this.token(JSON_SCALAR)) !== undefined;
    if (depth === JSON_MAX_NESTING) return false;
    this.i++;
    this.space();
    const close = c === '{' ? '}' : ']';
    if (this.text[this.i] === close) {
      this.i++;
      return true;
    }
    for (let n = 0; ; n++) {
      let name: string | number = n;
      let key: Pos | undefined;
      if (c === '{') {
        this.space();
        key = this.at();
        const k = this.token(JSON_STRING);
        if (k === undefined) return false;
        name = JSON.parse(k) as string;
        this.space();
        if (this.text[this.i++] !== ':') return false;
      }
      this.space();
      const deeper = visit?.member(name, key, this) ?? false;
      if (!this.value(deeper ? visit : undefined, depth + 1)) return false;
      if (deeper) visit!.leave();
      this.space();
      const sep = this.text[this.i++];
      if (sep === close) return true;
      if (sep !== ',') return false;
    }
  }
}

/** The index of JSON text, or undefined when it is not JSON. */
export function indexJson(text: string): PositionIndex | undefined {
  const index = new Map<string, Entry & { start: JsonCursor }>();
  const path: (string | number)[] = [];
  const root = new JsonCursor(text);
  root.space();
  index.set(keyOf(path), { value: root.at(), start: root.copy() });
  const ok = root.value({
    member(name, key, at) {
      path.push(name);
      index.set(keyOf(path), { key, value: at.at(), start: at.copy() });
      if (path.length < JSON_DEPTH) return true;
      path.pop();
      return false;
    },
    leave: () => void path.pop(),
  });
  root.space();
  if (!ok || root.i !== text.length) return undefined;
  /** The entry of `p`, walking the text below its deepest indexed ancestor when it is deeper. */
  const find = (p: Path): Entry | undefined => {
    const n = Math.min(p.length, JSON_DEPTH);
    const base = index.get(keyOf(p.slice(0, n)));
    if (!base || p.length === n) return base;
    let found: Entry | undefined;
    let depth = n;
    base.start.copy().value({
      member(name, key, at) {
        if (found || name !== p[depth]) return false;
        if (++depth === p.length) found = { key, value: at.at() };
        return !found;
      },
      leave: () => void depth--,
    });
    return found;
  };
  return {
    locate(p, where = 'value') {
      for (let n = p.length; n >= 0; n--) {
        const e = find(p.slice(0, n));
        if (!e) continue;
        const pos = where === 'key' && n === p.length && e.key ? e.key : e.value ?? e.key;
        if (pos) return pos;
      }
      return undefined;
    },
    has: (p) => find(p) !== undefined,
  };
}
