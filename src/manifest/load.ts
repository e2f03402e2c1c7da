// Stage 1: read svc.yaml and turn it into a plain value with source positions.
// Guarantees: a manifest is read only if it is a regular file of at most MAX_MANIFEST_BYTES
// (else FILE_UNREADABLE, unread: a pipe or a device would block or never end); YAML syntax errors come back as SvcErrors with line:col (never a
// throw with a stack); ${VAR} and ${VAR:-default} are replaced in string
// scalars (`$${` writes a literal `${`); an unset variable without a default is
// an ENV_UNSET problem at its node — or, with `allowUnsetEnv` (`svc validate
// --allow-unset-env`), the placeholder `unset:NAME`, listed in `unsetEnv`;
// `locate(path)` maps any JSON path in the result back to a line and column.
// Two readers, one answer: a manifest is first read by a fast reader — JSON.parse for a
// file written as JSON (what a catalog generator emits), js-yaml's YAML 1.2 core schema
// otherwise (far faster than the `yaml` package: see the figures below), with values
// written as one line of JSON inside the YAML read by JSON.parse (see JSON_LINE) — and only
// when that reader is not sure (a syntax error, a duplicate key, a tag, an alias, an
// unset variable to locate, `${` in a key) does the `yaml` package, which keeps source
// positions, read it; both give the same value (a test compares them on every manifest
// in the repository). The positioned document, which only locate() needs, is built on
// the first locate() call — so a large catalog with no problem never pays for it, and a large
// catalog with one is located by a scan of its text instead (position-index.ts), a large
// text's syntax error by js-yaml's own report (LINE_INDEX_FROM). The value
// the YAML reader gives keeps nothing of the source text alive, and the reader's working set
// on a large file is handed back to the OS before it returns (see RELEASE_AFTER_CHARS).
// Why not one reader (issue 28 asked for `yaml`'s parser alone if within 10% of this path):
// bench/yaml-readers.mjs on the 10,000-tool catalog (7 fresh-process runs each, medians,
// 2026-11-26, 2 shared cores) — this read 365 ms and 130 MiB peak RSS for YAML, 146 ms and
// 111 MiB for JSON (+76/+120 ms to locate a node); parseDocument with a LineCounter (values
// and positions) 5,139 ms / 603 MiB and 4,108 ms / 595 MiB; the Parser's CST alone, before
// any value, 3,008 ms / 414 MiB — 745 ms (2.0×) even with the JSON lines lifted. So both stay.

import { readBoundedSync, whyUnreadable } from '../util/read-bounded.js';
import { createHash, randomBytes } from 'node:crypto';
import { CORE_SCHEMA, load as loadYaml, YAMLException } from 'js-yaml';
import type * as Yaml from 'yaml';
import type { Document, Node } from 'yaml';
import { lazyRequire } from '../util/lazy-require.js';
import { SvcError } from '../errors.js';
import { releaseHeap } from '../util/release-heap.js';
import { indexBlockYaml, indexJson, type PositionIndex } from '../util/position-index.js';

/**
 * From this size a fast-read text's problems are located by position-index.ts's scans (exact
 * for JSON and block YAML nodes; a node inside a one-line YAML flow collection at that collection), not by
 * the `yaml` package, which needs about 3 s and 500 MB for a 10,000-tool catalog.
 */
const LINE_INDEX_FROM = 128 * 1024;

/** The positioned reader's package, loaded the first time it is needed (most manifests never need it). */
const yaml = lazyRequire<typeof Yaml>('yaml');

export interface Source {
  file: string;
  text: string;
  /** sha256 of the file's bytes: the "config hash" shown in /metadata and logs. */
  hash: string;
  value: unknown;
  problems: SvcError[];
  /** Variables replaced by a placeholder (only with `allowUnsetEnv`), sorted, each once. */
  unsetEnv: string[];
  /** `at: 'key'` points at the key of the last path element (an unknown field) rather than its value. */
  locate(path: readonly (string | number)[], at?: 'value' | 'key'): { line: number; col: number };
}

export interface SourceOptions {
  /** An unset ${VAR} without a default becomes `unset:VAR` instead of an ENV_UNSET problem. */
  allowUnsetEnv?: boolean;
  /** The manifest's bytes, already read (a worker's reload: the primary read them once for every worker); the file is then not read. */
  text?: string;
}

/** Largest manifest read: a larger file, or one that is not a regular file (a pipe, a device), is FILE_UNREADABLE unread. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

export function readSource(file: string, env: NodeJS.ProcessEnv, opts: SourceOptions = {}): Source {
  let text: string;
  if (opts.text !== undefined) return parseSource(file, opts.text, env, opts);
  try {
    text = readBoundedSync(file, MAX_MANIFEST_BYTES).toString('utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file (`fastsvc init` writes a starter svc.yaml)' : whyUnreadable(e, MAX_MANIFEST_BYTES);
    const err = new SvcError('FILE_UNREADABLE', `cannot read manifest: ${why}`, { file, line: 1, col: 1 });
    return { file, text: '', hash: '', value: undefined, problems: [err], unsetEnv: [], locate: () => ({ line: 1, col: 1 }) };
  }
  return parseSource(file, text, env, opts);
}

export function parseSource(file: string, text: string, env: NodeJS.ProcessEnv, opts: SourceOptions = {}): Source {
  return fastRead(file, text, env, opts) ?? positionedRead(file, text, env, opts);
}

/**
 * js-yaml builds an event object per node before it builds the value: about 15× the text's size,
 * promoted to the old generation before it dies, so a large catalog left ~110 MiB of freed,
 * fragmented pages in the RSS (10,000 tools: 257 MiB after ready against 135 MiB for the same
 * catalog as JSON). From this size on (about 1,500 tools) they are released at once (~2 × 30 ms).
 */
const RELEASE_AFTER_CHARS = 1 << 20;

/**
 * A string js-yaml returns is a V8 slice of the whole source text when it is this long or longer,
 * so one kept template or description would keep the whole text (7 MiB for 10,000 tools) alive
 * for as long as the generation serves; the fast YAML reader gives such strings their own copy (a
 * JSON round trip copies exactly, lone surrogates included).
 */
const SLICED_FROM = 13;
const ownCopy = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

/**
 * A generator that writes YAML often writes each schema as one line of JSON (`input_schema: {"type": …}`):
 * valid YAML 1.2 flow syntax with the same value, but js-yaml reads it a character at a time — on the
 * bench's 10,000-tool catalog that was most of the text and about 2/3 of the read. Such a line's value
 * (`key: ` or `- key: `, then JSON to the end of the line, no comment; a flow collection of plain
 * scalars such as `[a, b]` is not tried) is read by JSON.parse instead,
 * and js-yaml sees a placeholder scalar in its place. The placeholder must come back as a whole value
 * exactly once; if it comes back inside a longer string (the line sat in a block scalar or a multi-line
 * string) or not at all, or a lifted value has fewer keys than its text (a duplicate key), the lifting
 * is undone and js-yaml reads the text as written — and refuses a duplicate key, as the positioned reader does.
 */
const JSON_LINE = /^([ \t]*(?:- +)?[A-Za-z0-9_.$-]+:[ \t]+)([{[][ \t]*["{[\]}\d-].*[}\]])([ \t]*\r?)$/gm;

interface Lifted {
  text: string;
  /** Placeholders are `${prefix}${index}`; the prefix occurs nowhere in the source text. */
  prefix: string;
  values: unknown[];
  /** Object keys written in the lifted JSON: more than the values hold means a duplicate key. */
  keys: number;
}

export function liftJsonLines(text: string): Lifted | undefined {
  let prefix: string;
  do prefix = `fastsvc-json-${randomBytes(6).toString('hex')}-`;
  while (text.includes(prefix));
  const values: unknown[] = [];
  let keys = 0;
  const out = text.replace(JSON_LINE, (line, head: string, json: string, tail: string) => {
    try {
      values.push(JSON.parse(json));
    } catch {
      return line;
    }
    keys += countJsonKeys(json);
    return `${head}${prefix}${values.length - 1}${tail}`;
  });
  return values.length ? { text: out, prefix, values, keys } : undefined;
}

/** The fast readers (and a large text's syntax error, see largeSyntaxError); undefined when the positioned reader must decide. */
export function fastRead(file: string, text: string, env: NodeJS.ProcessEnv, opts: SourceOptions): Source | undefined {
  const json = /^\s*\{/.test(text);
  const lifted = json ? undefined : liftJsonLines(text);
  const read = lifted ? fastReadOnce(file, text, env, opts, json, lifted) : UNLIFT;
  if (read !== UNLIFT) return read;
  const refusal: { error?: unknown } = {};
  return fastReadOnce(file, text, env, opts, json, undefined, refusal) as Source | undefined ?? largeSyntaxError(file, text, refusal.error);
}

/** js-yaml refusals that are the text's own mistake (not YAML it declines to read: an alias, a tag, a complex key). */
const SYNTAX = /^(bad indentation|deficient indentation|duplicated mapping key|end of the stream or a document separator is expected|unexpected end of the stream|missed comma|can not read|a line break is expected|incomplete explicit mapping pair|expected)/;

/**
 * A large YAML text's syntax error as js-yaml reported it, so the `yaml` package (seconds and
 * hundreds of MB on a 10,000-tool catalog) is not needed to say where; undefined otherwise.
 */
function largeSyntaxError(file: string, text: string, e: unknown): Source | undefined {
  if (text.length < LINE_INDEX_FROM || !(e instanceof YAMLException) || !SYNTAX.test(e.reason) || !e.mark) return undefined;
  const code = e.reason.startsWith('duplicated mapping key') ? 'DUPLICATE_NAME' : 'YAML_SYNTAX';
  const problem = new SvcError(code, e.reason, { file, line: e.mark.line + 1, col: e.mark.column + 1 });
  return { file, text, hash: createHash('sha256').update(text).digest('hex'), value: undefined, problems: [problem], unsetEnv: [], locate: () => ({ line: 1, col: 1 }) };
}

/** fastReadOnce's answer when the lifted read is not sure: read the text as written. */
const UNLIFT = Symbol('unlift');

/**
 * One fast read. With `lifted`: UNLIFT when a placeholder did not come back exactly once as a whole
 * value, a lifted value holds fewer keys than its text (a duplicate key), or js-yaml refused the
 * text (so that a refusal is always the text's own).
 */
function fastReadOnce(file: string, text: string, env: NodeJS.ProcessEnv, opts: SourceOptions, json: boolean, lifted: Lifted | undefined, refusal?: { error?: unknown }): Source | undefined | typeof UNLIFT {
  let value: unknown;
  try {
    if (json) {
      value = JSON.parse(text);
    } else {
      // Throws on syntax errors, duplicate keys, unknown tags, complex keys and any alias (the positioned reader caps those).
      value = loadYaml(lifted?.text ?? text, { schema: CORE_SCHEMA, maxAliases: 0 });
    }
  } catch (e) {
    if (refusal) refusal.error = e;
    return lifted ? UNLIFT : undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined; // not a manifest: let the positioned reader say so
  const unset = new Set<string>();
  let bail = false;
  /** Placeholders found as a whole value; each occurs once in the text, so one found anywhere else leaves this short. */
  let placed = 0;
  /** Keys of objects that came from JSON text (JSON.parse keeps the last of duplicate keys silently). */
  let jsonKeys = 0;
  const sub = (s: string) => s.replace(VAR, (whole, escaped: string, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    if (!opts.allowUnsetEnv) bail = true;
    unset.add(name);
    return `unset:${name}`;
  });
  // A YAML string gets its own copy when long (see SLICED_FROM) and is shared when short, as JSON.parse shares short values.
  // One character beyond Latin-1 anywhere in the text (an em dash in a comment) makes every string js-yaml cuts from it
  // two-byte, and so everything later built from them (a template's output, an answer, an audit line) slower to
  // write: in such a text short strings are copied too, and a copy is stored one-byte when its characters allow.
  const wide = !json && /[^\x00-\xff]/.test(text);
  const shared = new Map<string, string>();
  const own = (s: string) => {
    if (s.length >= SLICED_FROM) return ownCopy(s);
    let c = shared.get(s);
    if (c === undefined) shared.set(s, (c = wide ? ownCopy(s) : s));
    return c;
  };
  const placeholder = (s: string): unknown => {
    const rest = s.slice(lifted!.prefix.length);
    const i = Number(rest);
    if (!s.startsWith(lifted!.prefix) || String(i) !== rest || !(i in lifted!.values)) return s;
    placed++;
    const v = lifted!.values[i];
    return walk(v, true);
  };
  const walk = (v: unknown, fromJson: boolean): unknown => {
    if (typeof v === 'string') {
      if (lifted && !fromJson && v.includes(lifted.prefix)) return placeholder(v);
      return v.includes('${') ? sub(v) : fromJson ? v : own(v);
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i], fromJson);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (fromJson) jsonKeys += keys.length;
      for (const k of keys) {
        if (k.includes('${') || k === '__proto__') bail = true;
        (v as Record<string, unknown>)[k] = walk((v as Record<string, unknown>)[k], fromJson);
      }
    }
    return v;
  };
  value = walk(value, json);
  // A duplicate key: js-yaml refuses the text as written, the positioned reader says where.
  if (lifted && (placed !== lifted.values.length || jsonKeys !== lifted.keys)) return UNLIFT;
  if (json && jsonKeys !== countJsonKeys(text)) return undefined;
  if (bail) return undefined;
  if (!json && text.length >= RELEASE_AFTER_CHARS) releaseHeap();
  let full: Source | undefined;
  let positions: PositionIndex | false | undefined;
  const locate: Source['locate'] = (path, at) => {
    positions ??= (text.length >= LINE_INDEX_FROM && (json ? indexJson(text) : indexBlockYaml(text))) || false;
    return (positions && positions.locate(path, at)) || (full ??= positionedRead(file, text, env, opts)).locate(path, at);
  };
  const hash = createHash('sha256').update(text).digest('hex');
  return { file, text, hash, value, problems: [], unsetEnv: [...unset].sort(), locate };
}

/** Object keys in JSON text: every string token followed by a colon (the tokens are matched in order, so none starts inside another). */
const JSON_STRING = /"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?/g;
function countJsonKeys(json: string): number {
  let n = 0;
  JSON_STRING.lastIndex = 0;
  for (let m; (m = JSON_STRING.exec(json)); ) if (m[1] !== undefined) n++;
  return n;
}

export function positionedRead(file: string, text: string, env: NodeJS.ProcessEnv, opts: SourceOptions): Source {
  const { isScalar, LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const problems: SvcError[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const { line, col } = at(e.pos[0]);
    const code = e.code === 'DUPLICATE_KEY' ? 'DUPLICATE_NAME' : 'YAML_SYNTAX';
    problems.push(new SvcError(code, e.message.split('\n')[0]!, { file, line, col }));
  }
  const hash = createHash('sha256').update(text).digest('hex');
  if (problems.length) return { file, text, hash, value: undefined, problems, unsetEnv: [], locate: () => ({ line: 1, col: 1 }) };

  const unset = new Set<string>();
  interpolate(doc, env, (node, name) => {
    if (opts.allowUnsetEnv) {
      unset.add(name);
      return `unset:${name}`;
    }
    const { line, col } = at(node.range?.[0] ?? 0);
    problems.push(new SvcError('ENV_UNSET', `environment variable ${name} is not set (write \${${name}:-default} to allow that)`, { file, line, col }));
    return '';
  });

  const keyOf = (path: readonly (string | number)[]) => {
    const parent = doc.getIn(path.slice(0, -1), true) as { items?: { key?: Node; value?: unknown }[] } | undefined;
    const key = path[path.length - 1];
    const pair = parent?.items?.find?.((it) => isScalar(it.key) && it.key.value === key);
    return pair?.key?.range ? at(pair.key.range[0]) : undefined;
  };
  const locate = (path: readonly (string | number)[], where: 'value' | 'key' = 'value') => {
    if (where === 'key' && path.length) {
      const k = keyOf(path);
      if (k) return k;
    }
    // Walk down as far as the path exists; point at the deepest node found.
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as Node | undefined;
      // A key with no value (an empty null scalar): point at the pair's key.
      const empty = isScalar(node) && node.value === null && node.range?.[0] === node.range?.[1];
      if (!empty && node && typeof node === 'object' && 'range' in node && node.range) return at(node.range[0]);
      const k = n > 0 ? keyOf(path.slice(0, n)) : undefined;
      if (k) return k;
    }
    return { line: 1, col: 1 };
  };

  return { file, text, hash, value: doc.toJS({ maxAliasCount: 100 }), problems, unsetEnv: [...unset].sort(), locate };
}

const VAR = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `unset` is told each unset variable without a default and returns the text to put in its place. */
function interpolate(doc: Document, env: NodeJS.ProcessEnv, unset: (node: Node, name: string) => string): void {
  yaml().visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      node.value = node.value.replace(VAR, (whole, escaped: string, name: string, fallback: string | undefined) => {
        if (escaped) return whole.slice(1);
        const v = env[name];
        if (v !== undefined && v !== '') return v;
        if (fallback !== undefined) return fallback;
        return unset(node, name);
      });
    },
  });
}
