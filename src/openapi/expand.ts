// The `openapi:` sources of a manifest → ordinary http tool entries (what `fastsvc import
// openapi` prints), before the manifest is compiled.
// Guarantees: pure but for reading the documents (no network, no env); every problem of
// every source is reported at once — a source's own mistake (a name twice, an override of
// an operation the document lacks, a name `naming` cannot make, a relative server URL
// without base_url) at the manifest's line:col of the field, a broken document at the
// document's line:col and JSON pointer — as one ManifestError; two operations of one source
// given one name is DUPLICATE_NAME at the source's `naming` (or the override's `name`); an
// operation that cannot be called is left out with an OPENAPI_SKIPPED warning naming its
// method, path, operationId and why (and manifest/openapi-sources.ts skips, the same way, an
// operation the http backend itself would refuse, so a document never makes BACKEND_CONFIG). Tools come in source order, then the document's
// path and method order. `origins[i]` says where tool i's name and scopes were decided, so
// later checks (scopes against profile.scopes, names against the written tools) point at
// the manifest line that decided them.

import { resolve, isAbsolute } from 'node:path';
import { ManifestError, SvcError, type ErrorCode } from '../errors.js';
import type { OpenApiSource } from '../core/manifest-types.gen.js';
import { documentError, isUrl, readDocument, type OpenApiDocument } from './document.js';
import { child, pathOf, Refs, type Located } from './refs.js';
import { SchemaTranslator } from './schema.js';
import { operationTool, type OpenApiTool, type Operation } from './operation.js';
import { selected, toolName } from './select.js';
import { operationScopes } from './operation-scopes.js';
import { Budget } from './budget.js';

type Path = (string | number)[];

export interface ExpandOptions {
  /** The manifest file (problems in the manifest are reported in it). */
  file: string;
  /** The folder relative document paths are read from (the manifest's). */
  baseDir: string;
  locate(path: readonly (string | number)[], at?: 'value' | 'key'): { line: number; col: number };
  /** A document at a URL is not fetched: its source expands to nothing, with an OPENAPI_NOT_FETCHED warning. */
  offline?: boolean;
}

export interface ExpandWarning {
  code: 'OPENAPI_SKIPPED' | 'OPENAPI_NOT_FETCHED';
  path: Path;
  message: string;
}

export interface Origin {
  /** The source: ['openapi', i]. */
  source: Path;
  name: Path;
  scopes: Path;
  /** The `task` the tool got (its override's, else the source's), when one was given. */
  task?: Path;
  /** The operation, as messages name it: `GET /pets/{id} (operationId getPet)`. */
  operation: string;
  /** The operation's tags (searched, never listed). */
  tags: string[];
  /** The operation is deprecated (its `deprecated: true`): search ranks the tool below its peers. */
  deprecated?: true;
}

export interface Expanded {
  tools: OpenApiTool[];
  origins: Origin[];
  warnings: ExpandWarning[];
  /** sha256 of every document read (the root and the files its $refs name), in reading order. */
  hashes: string[];
  /** The file of each of `hashes`, in the same order. */
  files: string[];
  /** How many bytes of documents were read, all sources together. */
  bytes: number;
}

const TOOL_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const PATH_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function expandOpenApi(sources: readonly OpenApiSource[], opts: ExpandOptions): Expanded {
  const out: Expanded = { tools: [], origins: [], warnings: [], hashes: [], files: [], bytes: 0 };
  const problems: SvcError[] = [];
  const at = (code: ErrorCode, path: Path, message: string, where?: 'key') => {
    const { line, col } = opts.locate(path, where);
    problems.push(new SvcError(code, message, { file: opts.file, line, col, path: '/' + path.join('/') }));
  };
  const names = new Map<string, number>();
  const budget = new Budget();
  sources.forEach((src, i) => {
    const first = names.get(src.name);
    if (first !== undefined) at('DUPLICATE_NAME', ['openapi', i, 'name'], `openapi source ${src.name} is already declared (openapi[${first}])`);
    else names.set(src.name, i);
    try {
      expandSource(src, ['openapi', i], opts, out, at, budget);
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      problems.push(e.file ? e : new SvcError(e.code, e.message, { file: opts.file, ...opts.locate(['openapi', i, 'document']) }));
    }
  });
  if (problems.length) throw new ManifestError(problems);
  return out;
}

function expandSource(src: OpenApiSource, base: Path, opts: ExpandOptions, out: Expanded, at: (code: ErrorCode, path: Path, message: string, where?: 'key') => void, budget: Budget): void {
  if (isUrl(src.document) && src.sha256 === undefined) {
    at('OPENAPI_CONFIG', [...base, 'document'], `openapi ${src.name}: a document at a URL needs its sha256 pinned (sha256)`);
    return;
  }
  if (isUrl(src.document) && opts.offline) {
    out.warnings.push({ code: 'OPENAPI_NOT_FETCHED', path: [...base, 'document'], message: `openapi ${src.name}: the document at ${src.document.replace(/[?#].*$/, '')} was not fetched, so its tools were not checked (validate --network fetches it)` });
    return;
  }
  const file = isUrl(src.document) || isAbsolute(src.document) ? src.document : resolve(opts.baseDir, src.document);
  const doc = readDocument(file, { root: true, sha256: src.sha256 });
  const refs = new Refs(doc);
  const root: Located = { value: doc.value, doc, at: undefined };
  const baseUrl = (src.base_url ?? defaultBaseUrl(doc, () => at('OPENAPI_CONFIG', base, `openapi ${src.name}: the document names no absolute server URL (servers[0].url, or Swagger 2.0 host): give base_url`)))?.replace(/\/+$/, '');
  if (baseUrl === undefined) return;
  const v = doc.value as Record<string, unknown>;
  const ctx = {
    refs, schemas: new SchemaTranslator(refs, doc.version!, budget), budget, version: doc.version!, baseUrl,
    // The header the credential sets (the http backend's rule): a static header's, else Authorization.
    credentialHeader: src.auth && (src.auth.static?.header ?? 'authorization').toLowerCase(),
    sourceHeaders: new Set(Object.keys(src.headers ?? {}).map((h) => h.toLowerCase())),
    ...(doc.version === '2.0' && { consumes: v.consumes, produces: v.produces }),
  };
  const overrides = src.overrides ?? {};
  const seenIds = new Set<string>();
  const byName = new Map<string, Operation>();
  const paths = child(root, 'paths');
  for (const p of Object.keys((paths.value ?? {}) as object)) {
    const item = refs.deref(child(paths, p));
    if (!isMapping(item.value)) throw documentError(item.doc, pathOf(item), `path ${p}: a path item is a mapping of methods`);
    for (const m of PATH_METHODS) {
      const node = child(item, m);
      if (node.value === undefined) continue;
      if (!isMapping(node.value)) throw documentError(node.doc, pathOf(node), `${m.toUpperCase()} ${p}: an operation is a mapping`);
      const opv = node.value as { operationId?: unknown; tags?: unknown; deprecated?: unknown };
      const o: Operation = {
        method: m.toUpperCase(), path: p, node, pathItem: item,
        ...(typeof opv.operationId === 'string' && opv.operationId && { operationId: opv.operationId }),
        tags: Array.isArray(opv.tags) ? opv.tags.filter((t): t is string => typeof t === 'string') : [],
        ...(opv.deprecated === true && { deprecated: true as const }),
      };
      if (o.operationId) seenIds.add(o.operationId);
      if (!selected(o, src.include, src.exclude)) continue;
      const who = `${o.method} ${p}${o.operationId ? ` (operationId ${o.operationId})` : ''}`;
      const where = operationBase(o, baseUrl, src.base_url !== undefined);
      budget.startTool();
      let built;
      try {
        built = typeof where === 'string' ? operationTool(o, where === baseUrl ? ctx : { ...ctx, baseUrl: where }) : where;
      } finally {
        budget.endTool();
      }
      if ('skip' in built) {
        out.warnings.push({ code: 'OPENAPI_SKIPPED', path: [...base, 'document'], message: `openapi ${src.name}: ${who} is not served: ${built.skip}` });
        continue;
      }
      const ov = o.operationId !== undefined && Object.hasOwn(overrides, o.operationId) ? overrides[o.operationId]! : undefined;
      const ovPath = [...base, 'overrides', o.operationId ?? ''];
      const namePath = ov?.name !== undefined ? [...ovPath, 'name'] : [...base, 'naming'];
      const name = ov?.name ?? toolName(src.naming!, o);
      if (!TOOL_NAME.test(name) || name.length > 128) {
        at('OPENAPI_CONFIG', namePath, `openapi ${src.name}: ${who} would be named "${name}", which is not a tool name (letters, digits, _ and -, dot-separated, at most 128 characters)`);
        continue;
      }
      const twin = byName.get(name);
      if (twin) {
        at('DUPLICATE_NAME', namePath, `openapi ${src.name}: ${who} and ${twin.method} ${twin.path}${twin.operationId ? ` (operationId ${twin.operationId})` : ''} are both named ${name}; change naming or give one an override name`);
        continue;
      }
      byName.set(name, o);
      const mapped = ov?.required_scopes === undefined && src.scope_map ? operationScopes(node, root, src.scope_map) : undefined;
      const scopesPath = ov?.required_scopes !== undefined ? [...ovPath, 'required_scopes'] : mapped ? [...base, 'scope_map'] : [...base, 'required_scopes'];
      const annotations = built.tool.annotations || ov?.annotations ? { ...built.tool.annotations, ...ov?.annotations } : undefined;
      const { http, annotations: _, ...rest } = built.tool;
      const task = ov?.task ?? src.task;
      out.tools.push({
        name,
        ...rest,
        ...(ov?.description !== undefined && { description: ov.description }),
        required_scopes: [...(ov?.required_scopes ?? mapped ?? src.required_scopes ?? [])],
        ...(annotations && { annotations }),
        ...(task !== undefined && { task }),
        http: {
          ...http,
          ...((http.headers || src.headers) && { headers: { ...http.headers, ...src.headers } }),
          ...(src.auth && { auth: src.auth }),
          ...(src.timeout_ms !== undefined && { timeout_ms: src.timeout_ms }),
          ...(src.max_bytes !== undefined && { max_bytes: src.max_bytes }),
        },
      });
      out.origins.push({ source: base, name: namePath, scopes: scopesPath, operation: who, ...(task !== undefined && { task: ov?.task !== undefined ? [...ovPath, 'task'] : [...base, 'task'] }), tags: o.tags, ...(o.deprecated && { deprecated: true as const }) });
    }
  }
  for (const id of Object.keys(overrides)) {
    if (!seenIds.has(id)) at('OPENAPI_CONFIG', [...base, 'overrides', id], `openapi ${src.name}: overrides names operation ${id}, which the document does not have`, 'key');
  }
  out.hashes.push(...refs.documents.map((d: OpenApiDocument) => d.hash));
  out.files.push(...refs.documents.map((d: OpenApiDocument) => d.file));
  out.bytes += refs.documents.reduce((n, d) => n + (d.size ?? 0), 0);
}

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

type Servers = { url?: unknown; variables?: Record<string, { default?: unknown }> }[];
const ABSOLUTE = /^https?:\/\/[^{}]+$/;

/** The first of `servers`' URLs with its variables' defaults filled in, when it has one. */
function serverUrl(servers: unknown): string | undefined {
  const s = Array.isArray(servers) ? (servers as Servers)[0] : undefined;
  return s && typeof s.url === 'string' ? s.url.replace(/\{([^}]+)\}/g, (whole, name: string) => String(s.variables?.[name]?.default ?? whole)) : undefined;
}

/** The document's own server URL, or undefined (after calling `none`) when it has no absolute one. */
function defaultBaseUrl(doc: OpenApiDocument, none: () => void): string | undefined {
  const v = doc.value as { servers?: unknown; host?: unknown; basePath?: unknown; schemes?: unknown };
  let url: string | undefined;
  if (doc.version === '2.0') {
    if (typeof v.host === 'string' && v.host) {
      const schemes = Array.isArray(v.schemes) ? v.schemes : [];
      const scheme = schemes.includes('https') || !schemes.length ? 'https' : String(schemes[0]);
      url = `${scheme}://${v.host}${typeof v.basePath === 'string' ? v.basePath : ''}`;
    }
  } else url = serverUrl(v.servers);
  if (url === undefined || !ABSOLUTE.test(url)) {
    none();
    return undefined;
  }
  return url;
}

/**
 * Where operation `o` is called (OpenAPI 3): its own servers, else its path's, else `base`. An
 * absolute URL is used as written — unless `replaced` (the source gives base_url, which replaces
 * every absolute server URL of the document); a relative one is resolved against `base`. A URL
 * that cannot be made an absolute http(s) one skips the operation.
 */
function operationBase(o: Operation, base: string, replaced = false): string | { skip: string } {
  const own = (v: unknown) => (Array.isArray((v as { servers?: unknown }).servers) && (v as { servers: unknown[] }).servers.length ? (v as { servers: unknown }).servers : undefined);
  const url = serverUrl(own(o.node.value) ?? own(o.pathItem.value));
  if (url === undefined) return base;
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    if (ABSOLUTE.test(url)) return replaced ? base : url.replace(/\/+$/, '');
  } else {
    const resolved = URL.canParse(url, `${base}/`) ? new URL(url, `${base}/`).href.replace(/\/+$/, '') : undefined;
    if (resolved !== undefined && ABSOLUTE.test(resolved)) return resolved;
  }
  return { skip: `its server URL ${url} is not an absolute http(s) URL (a variable without a default?)` };
}
