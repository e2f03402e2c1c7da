// Reads one OpenAPI document (YAML or JSON), from a file or a URL (fetch-document.ts), with its
// source positions. Guarantees: a document larger than MAX_DOCUMENT_BYTES is refused before it is parsed,
// and a file that is not a regular file (a pipe, a device) before it is read (util/read-bounded.ts);
// a syntax error is an OPENAPI_INVALID SvcError at the document's line:col; the value is
// read by the fast readers (JSON.parse, js-yaml) and positions are only computed when a
// problem is located (locate(), lazily: one scan of the text, or the `yaml` package for
// YAML the scan cannot follow); `${…}` in the document is left as written (a document is
// not a manifest: no environment variables); a YAML document whose aliases stand for more
// nodes than its text could hold (MIN_EXPANDED_NODES, or one a character) is OPENAPI_INVALID, so
// nothing that reads it afterwards can be made to read a shared node billions of times; the
// version is recognised from `openapi`
// (3.0.x, 3.1.x) or `swagger` ("2.0"), anything else is OPENAPI_INVALID.

import { createHash } from 'node:crypto';
import { CORE_SCHEMA, load as loadYaml, YAMLException } from 'js-yaml';
import type * as Yaml from 'yaml';
import { SvcError } from '../errors.js';
import { lazyRequire } from '../util/lazy-require.js';
import { indexBlockYaml, indexJson } from '../util/position-index.js';
import { readBoundedSync, whyUnreadable } from '../util/read-bounded.js';
import { fetchDocument } from './fetch-document.js';

/** Largest document read, in bytes (GitHub's REST description is about 13 MB). */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

export type OpenApiVersion = '2.0' | '3.0' | '3.1';
export type JsonPath = readonly (string | number)[];

export interface OpenApiDocument {
  file: string;
  /** sha256 of the bytes, hex. */
  hash: string;
  /** How many bytes were read (set by readDocument). */
  size?: number;
  value: unknown;
  /** Set on the root document; a file a $ref names is read as a fragment (no version). */
  version?: OpenApiVersion;
  /** Where the node at `path` starts in the file (its nearest ancestor that exists). */
  locate(path: JsonPath): { line: number; col: number };
}

const yaml = lazyRequire<typeof Yaml>('yaml');

/** An OPENAPI_INVALID error at `path` of `doc` (line:col, and the JSON pointer in the message). */
export function documentError(doc: OpenApiDocument, path: JsonPath, message: string): SvcError {
  const { line, col } = doc.locate(path);
  return new SvcError('OPENAPI_INVALID', `${message} (at ${pointer(path)})`, { file: doc.file, line, col, path: pointer(path) });
}

/** A document named by a URL (fetched) rather than a file. */
export const isUrl = (s: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

export function pointer(path: JsonPath): string {
  return '#' + path.map((k) => '/' + String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/**
 * A document's bytes, parsed. A file must be a regular file (not a pipe or a device) of at most
 * `maxBytes` (MAX_DOCUMENT_BYTES, or what is left of it for a source's further files); `realPath`,
 * when given, is what is read (the path a containment check decided on), `file` what it is called.
 */
export function readDocument(file: string, opts: { root: boolean; sha256?: string; maxBytes?: number; realPath?: string }): OpenApiDocument {
  const max = opts.maxBytes ?? MAX_DOCUMENT_BYTES;
  let bytes: Buffer;
  if (isUrl(file)) bytes = fetchDocument(file, max);
  else try {
    bytes = readBoundedSync(opts.realPath ?? file, max);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EFBIG') throw new SvcError('OPENAPI_INVALID', `document is larger than ${max} bytes${max < MAX_DOCUMENT_BYTES ? `, what is left of the ${MAX_DOCUMENT_BYTES} a source reads (its document and the files its $refs name, together)` : ''}`, { file, line: 1, col: 1 });
    throw new SvcError('FILE_UNREADABLE', `cannot read OpenAPI document: ${whyUnreadable(e, max)}`, { file, line: 1, col: 1 });
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (opts.sha256 !== undefined && opts.sha256 !== hash) {
    throw new SvcError('OPENAPI_INVALID', `document's sha256 is ${hash}, not the ${opts.sha256} the manifest pins`, { file, line: 1, col: 1 });
  }
  const doc = parseDocumentText(file, bytes.toString('utf8'), hash, opts.root);
  doc.size = bytes.length;
  return doc;
}

export function parseDocumentText(file: string, text: string, hash: string, root: boolean): OpenApiDocument {
  const json = /^\s*[{[]/.test(text);
  let value: unknown;
  try {
    value = json ? JSON.parse(text) : loadYaml(text, { schema: CORE_SCHEMA, filename: file });
  } catch (e) {
    if (e instanceof YAMLException && e.mark) throw new SvcError('OPENAPI_INVALID', `not valid YAML: ${e.reason}`, { file, line: e.mark.line + 1, col: e.mark.column + 1 });
    const at = /position (\d+)/.exec((e as Error).message);
    const { line, col } = at ? lineCol(text, Number(at[1])) : { line: 1, col: 1 };
    throw new SvcError('OPENAPI_INVALID', `not valid JSON: ${(e as Error).message}`, { file, line, col });
  }
  if (!json && ANCHOR.test(text) && expandedNodes(value, Math.max(MIN_EXPANDED_NODES, text.length)) === undefined) {
    throw new SvcError('OPENAPI_INVALID', `not a document fastsvc reads: its YAML aliases stand for more than ${Math.max(MIN_EXPANDED_NODES, text.length)} nodes (anchors whose aliases repeat one another: every operation that read them would read them all)`, { file, line: 1, col: 1 });
  }
  let locator: ((path: JsonPath) => { line: number; col: number } | undefined) | undefined;
  const locate = (path: JsonPath) => {
    locator ??= positions(text, json);
    return locator(path) ?? { line: 1, col: 1 };
  };
  const doc: OpenApiDocument = { file, hash, value, locate };
  if (!root) return doc;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw documentError(doc, [], 'an OpenAPI document is a mapping');
  const v = value as { openapi?: unknown; swagger?: unknown; paths?: unknown };
  if (typeof v.openapi === 'string' && /^3\.0\.\d+/.test(v.openapi)) doc.version = '3.0';
  else if (typeof v.openapi === 'string' && /^3\.1\.\d+/.test(v.openapi)) doc.version = '3.1';
  else if (v.swagger === '2.0' || v.swagger === 2) doc.version = '2.0';
  else throw documentError(doc, v.openapi !== undefined ? ['openapi'] : v.swagger !== undefined ? ['swagger'] : [], 'not an OpenAPI 3.0, 3.1 or Swagger 2.0 document (openapi: 3.0.x or 3.1.x, or swagger: "2.0")');
  if (v.paths !== undefined && (v.paths === null || typeof v.paths !== 'object' || Array.isArray(v.paths))) throw documentError(doc, ['paths'], 'paths must be a mapping');
  return doc;
}

/** A YAML anchor (`&name`), without which a document has no alias. */
const ANCHOR = /(?:^|[\s[{,:-])&[^\s,[\]{}]/m;
/** However short the text, its aliases may stand for this many nodes. */
const MIN_EXPANDED_NODES = 1 << 20;

/**
 * How many nodes `v` stands for with every alias expanded (each shared node counted as often as
 * it is reached), or undefined past `limit` — found in time linear in the distinct nodes.
 */
function expandedNodes(v: unknown, limit: number): number | undefined {
  const memo = new Map<object, number>();
  const count = (x: unknown): number => {
    if (x === null || typeof x !== 'object') return 1;
    let n = memo.get(x);
    if (n !== undefined) return n;
    n = 1;
    for (const c of Object.values(x)) {
      n += count(c);
      if (n > limit) break;
    }
    memo.set(x, n);
    return n;
  };
  const n = count(v);
  return n > limit ? undefined : n;
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}

function positions(text: string, json: boolean): (path: JsonPath) => { line: number; col: number } | undefined {
  const index = json ? indexJson(text) : indexBlockYaml(text);
  if (index) return (path) => index.locate(path);
  const { LineCounter, parseDocument } = yaml();
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  return (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return lc.linePos(node.range[0]);
    }
    return undefined;
  };
}
