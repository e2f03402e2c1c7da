// $ref resolution for one OpenAPI document and the files it names.
// Guarantees: a $ref is `#/json/pointer` in the same file, or `file#/pointer` / `file`
// relative to the referring file, inside the root document's folder — as written and as its
// real path, symlinks resolved, which is the file then read (never above it: refused); at most MAX_FILES files are read, each once, all of them together (the root
// included) within document.ts's size bound; a chain of $refs ($ref to a $ref) longer than MAX_CHAIN, or a loop of them, is
// refused; every refusal is OPENAPI_INVALID at the $ref's line:col in its own file.
// OpenAPI 3.1: a $ref may name a schema's `$id` exactly as written (base URIs are not
// resolved), with a JSON pointer or an `$anchor` inside it after `#`.
// A node is always given with where it is (document and JSON path), so a later problem
// in it can be located too.

import { realpathSync } from 'node:fs';
import { dirname, relative, resolve, isAbsolute } from 'node:path';
import { documentError, isUrl, MAX_DOCUMENT_BYTES, readDocument, type OpenApiDocument } from './document.js';

const MAX_FILES = 100;
const MAX_CHAIN = 32;

/** A JSON path as a chain of links to the parent (cheap to extend; made an array only to report a problem). */
export interface PathLink {
  up: PathLink | undefined;
  key: string | number;
}

export interface Located {
  value: unknown;
  doc: OpenApiDocument;
  at: PathLink | undefined;
}

export function pathOf(node: Pick<Located, 'at'>): (string | number)[] {
  const out: (string | number)[] = [];
  for (let l = node.at; l; l = l.up) out.push(l.key);
  return out.reverse();
}

function linkOf(path: readonly (string | number)[]): PathLink | undefined {
  let at: PathLink | undefined;
  for (const key of path) at = { up: at, key };
  return at;
}

export class Refs {
  private readonly docs = new Map<string, OpenApiDocument>();
  /** Resolved targets by file and $ref text: a component named from many places is looked up once. */
  private readonly resolved = new Map<string, Located & { key: string }>();
  private readonly folder: string;
  /** Bytes read so far: the root and every file its $refs named, together at most MAX_DOCUMENT_BYTES. */
  private bytes: number;

  constructor(readonly root: OpenApiDocument) {
    this.bytes = root.size ?? 0;
    this.folder = dirname(resolve(root.file));
    this.docs.set(resolve(root.file), root);
  }

  private real: string | undefined;

  /** The document's folder, symlinks resolved (as it is now: a $ref'd file's real path must be inside it). */
  private realFolder(): string {
    try {
      this.real ??= realpathSync(this.folder);
    } catch {
      this.real = this.folder;
    }
    return this.real;
  }

  /** Every file read so far, the root first (their hashes make the source's hash). */
  get documents(): OpenApiDocument[] {
    return [...this.docs.values()];
  }

  /** The node itself when it is not a $ref, else what its $ref chain ends at. */
  deref(node: Located): Located {
    let at = node;
    for (let n = 0; isRef(at.value); n++) {
      if (n === MAX_CHAIN) throw documentError(node.doc, [...pathOf(node), '$ref'], `a chain of more than ${MAX_CHAIN} $refs (a loop?)`);
      at = this.resolve(at);
    }
    return at;
  }

  /** The target of the $ref at `node` (one step), with a key that names it uniquely (remembered per file and $ref text). */
  resolve(node: Located): Located & { key: string } {
    const ref = (node.value as { $ref: string }).$ref;
    const memoKey = `${node.doc.file}\u0000${ref}`;
    let target = this.resolved.get(memoKey);
    if (!target) this.resolved.set(memoKey, (target = this.resolveOnce(node, ref)));
    return target;
  }

  private resolveOnce(node: Located, ref: string): Located & { key: string } {
    const hash = ref.indexOf('#');
    const filePart = hash === -1 ? ref : ref.slice(0, hash);
    const fragment = hash === -1 ? '' : ref.slice(hash + 1);
    const refAt = [...pathOf(node), '$ref'];
    const decode = (part: string) => {
      try {
        return decodeURIComponent(part);
      } catch {
        throw documentError(node.doc, refAt, `$ref ${ref}: a malformed %-escape`);
      }
    };
    const byId = filePart || (fragment && !fragment.startsWith('/')) ? this.idTarget(node.doc, filePart, fragment, decode) : undefined;
    if (byId) return byId;
    if (fragment && !fragment.startsWith('/')) throw documentError(node.doc, refAt, `$ref ${ref}: names no JSON pointer (#/…), $id or $anchor of this document`);
    let doc = node.doc;
    if (filePart) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(filePart)) throw documentError(node.doc, refAt, `$ref ${ref}: only files beside the document are resolved, not URLs`);
      if (isUrl(node.doc.file)) throw documentError(node.doc, refAt, `$ref ${ref}: a document fetched from a URL may only refer within itself`);
      const file = resolve(dirname(resolve(node.doc.file)), decode(filePart));
      if (!inside(this.folder, file)) throw documentError(node.doc, refAt, `$ref ${ref}: names a file outside the document's folder`);
      let next = this.docs.get(file);
      if (!next) {
        if (this.docs.size >= MAX_FILES) throw documentError(node.doc, refAt, `$ref ${ref}: more than ${MAX_FILES} files referenced`);
        // Decided on the real path (symlinks resolved), which is then the file read: a link cannot lead out.
        let real: string | undefined;
        try {
          real = realpathSync(file);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw documentError(node.doc, refAt, `$ref ${ref}: cannot be resolved (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
        }
        if (real !== undefined && !inside(this.realFolder(), real)) throw documentError(node.doc, refAt, `$ref ${ref}: names a file outside the document's folder (through a symbolic link)`);
        try {
          next = readDocument(file, { root: false, maxBytes: MAX_DOCUMENT_BYTES - this.bytes, ...(real !== undefined && { realPath: real }) });
        } catch (e) {
          throw documentError(node.doc, refAt, `$ref ${ref}: ${(e as Error).message}`);
        }
        this.bytes += next.size ?? 0;
        this.docs.set(file, next);
      }
      doc = next;
    }
    const path = fragment ? fragment.slice(1).split('/').map((s) => decode(s).replace(/~1/g, '/').replace(/~0/g, '~')) : [];
    let value: unknown = doc.value;
    for (const k of path) {
      value = value !== null && typeof value === 'object' && Object.hasOwn(value, k) ? (value as Record<string, unknown>)[k] : undefined;
      if (value === undefined) throw documentError(node.doc, refAt, `$ref ${ref} resolves to nothing`);
    }
    return { value, doc, at: linkOf(path), key: `${doc.file}#${fragment}` };
  }

  private readonly ids = new Map<OpenApiDocument, Map<string, Located & { key: string }>>();

  /**
   * OpenAPI 3.1 (JSON Schema 2020-12): a $ref naming a schema's `$id` (as written there: base URIs are
   * not resolved) and optionally an `$anchor` inside it, or an `$anchor` of the document itself.
   */
  private idTarget(doc: OpenApiDocument, id: string, fragment: string, decode: (s: string) => string): (Located & { key: string }) | undefined {
    let index = this.ids.get(doc);
    if (!index) this.ids.set(doc, (index = indexIds(doc)));
    if (!index.size) return undefined;
    const resource = index.get(id);
    if (!fragment) return resource;
    if (fragment.startsWith('/')) {
      if (!resource) return undefined;
      let value: unknown = resource.value;
      let at = resource.at;
      for (const k of fragment.slice(1).split('/').map((x) => decode(x).replace(/~1/g, '/').replace(/~0/g, '~'))) {
        value = value !== null && typeof value === 'object' && Object.hasOwn(value, k) ? (value as Record<string, unknown>)[k] : undefined;
        if (value === undefined) return undefined;
        at = { up: at, key: k };
      }
      return { value, doc, at, key: `${resource.key}#${fragment}` };
    }
    return index.get(`${id}#${fragment}`);
  }
}

/** Every `$id` and `$anchor` (as `id#anchor`, id the nearest enclosing `$id` or '') in a document. */
function indexIds(doc: OpenApiDocument): Map<string, Located & { key: string }> {
  const out = new Map<string, Located & { key: string }>();
  const walk = (v: unknown, at: PathLink | undefined, id: string, depth: number) => {
    if (v === null || typeof v !== 'object' || depth > 64) return;
    const o = v as Record<string, unknown>;
    if (!Array.isArray(v)) {
      if (typeof o.$id === 'string') {
        id = o.$id;
        out.set(id, { value: v, doc, at, key: `${doc.file}$id:${id}` });
      }
      if (typeof o.$anchor === 'string') out.set(`${id}#${o.$anchor}`, { value: v, doc, at, key: `${doc.file}$id:${id}#${o.$anchor}` });
    }
    for (const k of Object.keys(o)) walk(o[k], { up: at, key: Array.isArray(v) ? Number(k) : k }, id, depth + 1);
  };
  // Only 3.1 schemas have $id/$anchor (a file a $ref names has no version of its own).
  if (doc.version === undefined || doc.version === '3.1') walk(doc.value, undefined, '', 0);
  return out;
}

/** `file` is `folder` or below it. */
function inside(folder: string, file: string): boolean {
  const rel = relative(folder, file);
  return !(rel.startsWith('..') || isAbsolute(rel));
}

export function isRef(v: unknown): v is { $ref: string } {
  return v !== null && typeof v === 'object' && typeof (v as { $ref?: unknown }).$ref === 'string';
}

/** A child of a located node. */
export function child(node: Located, key: string | number): Located {
  const v = node.value !== null && typeof node.value === 'object' ? (node.value as Record<string | number, unknown>)[key] : undefined;
  return { value: v, doc: node.doc, at: { up: node.at, key } };
}
