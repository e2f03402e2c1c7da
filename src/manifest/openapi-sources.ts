// Stage 2½: the manifest's `openapi` sources become tools, between validate and compile.
// Guarantees: the expanded tools are appended after the tools the file writes and checked
// by the manifest schema like them (so its defaults fill them too); every later problem or
// warning about an expanded tool is located at the manifest line that decided it —
// its name at `naming` (or the override's `name`), its scopes at `required_scopes`,
// `scope_map` or the override's, its task at the override's or the source's `task`, its credential and headers at
// the source's `auth` and `headers`, anything else (a name declared twice too) at the source;
// a problem or warning the source causes for many tools is said once (uniqueProblems,
// uniqueWarnings); each expanded tool's origin (its source's name, its operation's tags, whether it is deprecated) is
// returned by tool name, for the search index; the config hash covers the documents too (a
// changed document is a new configuration, an unchanged one is not); an operation the http
// backend would refuse is skipped (OPENAPI_SKIPPED), never BACKEND_CONFIG; a manifest without
// `openapi` is returned as it was.

import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { ManifestError, SvcError } from '../errors.js';
import type { OpenApiSource, SvcManifest, Tool } from '../core/manifest-types.gen.js';
import type { CapabilitySource } from '../core/types.js';
import type { Expanded, ExpandWarning, Origin } from '../openapi/expand.js';
import { authHeaderOf, compileRequestParts } from '../runtime/backends/http-request.js';
import type { HttpSpec } from '../runtime/backends/contract.js';
import { expandOpenApiCached } from '../openapi/expand-cache.js';
import type { Source } from './load.js';

export interface WithOpenApi {
  manifest?: SvcManifest;
  problems: SvcError[];
  warnings: ExpandWarning[];
  hash: string;
  locate: Source['locate'];
  /** Each expanded tool's source and tags, by tool name. */
  toolOrigins: ReadonlyMap<string, ToolOrigin>;
}

/** Where a tool the manifest does not write comes from. */
export interface ToolOrigin {
  readonly source: CapabilitySource;
  readonly tags: readonly string[];
  /** Its operation is deprecated. */
  readonly deprecated?: true;
}

export function withOpenApi(m: SvcManifest, src: Source, revalidate: (s: Source) => { manifest?: SvcManifest; problems: SvcError[] }, offline = false): WithOpenApi {
  if (!m.openapi?.length) return { manifest: m, problems: [], warnings: [], hash: src.hash, locate: src.locate, toolOrigins: new Map() };
  const written = m.tools?.length ?? 0;
  let x;
  try {
    x = sendable(expandOpenApiCached(m.openapi, { file: src.file, baseDir: dirname(resolve(src.file)), locate: src.locate, offline }), m.openapi);
  } catch (e) {
    if (e instanceof ManifestError) return { problems: e.problems, warnings: [], hash: src.hash, locate: src.locate, toolOrigins: new Map() };
    throw e;
  }
  const origins = x.origins;
  const locate: Source['locate'] = (path, at) => {
    const i = path[0] === 'tools' && typeof path[1] === 'number' ? path[1] - written : -1;
    const o = i >= 0 ? origins[i] : undefined;
    return o ? src.locate(originPath(o, path.slice(2)), at) : src.locate(path, at);
  };
  const toolOrigins = new Map(x.tools.map((t, i) => [t.name, Object.freeze({
    source: Object.freeze({ kind: 'openapi' as const, name: m.openapi![origins[i]!.source[1] as number]!.name }),
    tags: Object.freeze([...origins[i]!.tags]),
    ...(origins[i]!.deprecated && { deprecated: true as const }),
  })]));
  const hash = createHash('sha256').update(src.hash).update(x.hashes.join(',')).digest('hex');
  (m.tools ??= []).push(...(x.tools as unknown as Tool[]));
  // The schema again, over the whole manifest: it fills the expanded tools' defaults (it is idempotent on the rest).
  const v = revalidate({ ...src, value: m, locate });
  return { ...(v.manifest && { manifest: v.manifest }), problems: v.problems, warnings: x.warnings, hash, locate, toolOrigins };
}

/** Parameter styles the manifest schema fills in later (its defaults), for the backend's check now. */
const DEFAULT_STYLE: Record<string, string> = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' };

/**
 * The expansion without the tools the http backend would refuse as their source sends them (its
 * credential and headers in them): each is skipped with an OPENAPI_SKIPPED warning in the backend's
 * words, so a document never makes BACKEND_CONFIG. openapi/operation.ts leaves out or skips what
 * it knows (a header the credential sets, a style its location does not take…); this is the
 * backend's own check, for the rest. `x` itself when every tool passes (a cached expansion stays shared).
 */
export function sendable(x: Expanded, sources: readonly OpenApiSource[]): Expanded {
  let out = checked.get(x);
  if (!out) checked.set(x, (out = withoutRefused(x, sources)));
  return out;
}

/** Each expansion checked once: a reload that reuses a cached expansion (expand-cache.ts) reuses its check too. */
const checked = new WeakMap<Expanded, Expanded>();

function withoutRefused(x: Expanded, sources: readonly OpenApiSource[]): Expanded {
  const refusals = x.tools.map((t) => {
    const spec = { ...t.http, headers: t.http.headers ?? {}, parameters: t.http.parameters?.map((p) => ({ ...p, style: p.style ?? DEFAULT_STYLE[p.in] })) } as unknown as HttpSpec;
    try {
      compileRequestParts(spec, authHeaderOf(spec));
      return undefined;
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      return e.message;
    }
  });
  if (refusals.every((r) => r === undefined)) return x;
  const keep = (_: unknown, i: number) => refusals[i] === undefined;
  const skipped = x.origins.flatMap((o, i) => (refusals[i] === undefined ? [] : [{
    code: 'OPENAPI_SKIPPED' as const, path: [...o.source, 'document'],
    message: `openapi ${sources[o.source[1] as number]!.name}: ${o.operation} is not served: the http backend cannot send it as the document describes it: ${refusals[i]}`,
  }]));
  return { ...x, tools: x.tools.filter(keep), origins: x.origins.filter(keep), warnings: [...x.warnings, ...skipped] };
}

/** Where, in the manifest, a path inside an expanded tool was decided. */
function originPath(o: Origin, rest: readonly (string | number)[]): (string | number)[] {
  // The tool as a whole is the source; a field the source does not write falls back to it, so
  // `validate`'s advice (TASK_ADVISED, SCOPE_ADVISED) sees it as not written.
  if (rest[0] === 'name') return o.name;
  if (rest[0] === 'required_scopes') return [...o.scopes, ...rest.slice(1)];
  if (rest[0] === 'task') return o.task ?? o.source;
  if (rest[0] === 'http' && (rest[1] === 'auth' || rest[1] === 'headers')) return [...o.source, ...rest.slice(1)];
  return o.source;
}

/**
 * One problem per place and kind: an expanded source's field (its scopes, its credential) is
 * checked once per tool it made, and those problems differ only by the tool's name.
 */
export function uniqueProblems(problems: SvcError[]): SvcError[] {
  const groups = new Map<string, SvcError[]>();
  for (const p of problems) {
    const key = `${p.code}@${p.file}:${p.line}:${p.col}:${p.message.replace(/^tool \S+/, 'tool')}`;
    const g = groups.get(key);
    if (g) g.push(p);
    else groups.set(key, [p]);
  }
  return [...groups.values()].map((g) => {
    if (g.length === 1) return g[0]!;
    const p = g[0]!;
    return new SvcError(p.code, `${p.message} (and ${g.length - 1} more tool${g.length > 2 ? 's' : ''} made by the same line)`, { file: p.file, line: p.line, col: p.col, ...(p.path !== undefined && { path: p.path }), ...(p.data && { data: p.data }) });
  });
}

const PER_TOOL_ADVICE = new Set(['TASK_ADVISED', 'SCOPE_ADVISED', 'LIST_ENTRY_SHORTENED']);

/** Per-tool advice (TASK_ADVISED, SCOPE_ADVISED, LIST_ENTRY_SHORTENED): one per code and place (the tools of one source differ in detail, e.g. their method), naming the first tool and counting the rest. */
export function uniqueWarnings<W extends { code: string; line: number; col: number; message: string; file?: string }>(warnings: W[]): W[] {
  const groups = new Map<string, W[]>();
  for (const w of warnings) {
    // Only per-tool advice is merged: each OPENAPI_SKIPPED names its own operation.
    const key = PER_TOOL_ADVICE.has(w.code) ? `${w.code}@${w.file ?? ''}:${w.line}:${w.col}` : `${groups.size}`;
    const g = groups.get(key);
    if (g) g.push(w);
    else groups.set(key, [w]);
  }
  return [...groups.values()].map((g) => (g.length === 1 ? g[0]! : { ...g[0]!, message: `${g[0]!.message} (and ${g.length - 1} more tool${g.length > 2 ? 's' : ''} made by the same line)` }));
}
