// Advice `svc validate` prints without failing: things that work but that an operator most
// likely wants otherwise. Guarantees: never throws, never changes the manifest; each warning
// names the manifest path it concerns so the CLI can point at FILE:LINE:COL.
//
// TASK_ADVISED: a tool that needs an *.admin or *.write scope, or whose backend may run longer
// than TASK_ADVISED_AFTER_MS, should declare `task: required`, so a long or risky call can be
// watched and cancelled by its caller and is not silently abandoned when the client goes away.
// A template (or fixed content) tool is neither: it renders in the process at once and changes
// nothing, whatever its scope is called. Writing `task: forbidden` or `task: optional`
// explicitly is the operator's answer: no warning.
//
// SCOPE_ADVISED: on a server that serves people other than its operator (servedToOthers), a
// tool that may change something (mutationOf) and does not write `required_scopes` can be
// called by every signed-in person, every registered client, or anyone at all on a public
// route. Declaring scopes, `annotations.readOnlyHint: true` (the operator says it only reads;
// not believed of an fs write), or an explicit `required_scopes: []` (open on purpose) is the
// operator's answer: no warning. Resources and prompts are reads and never warned about.
//
// LIST_ENTRY_SHORTENED: a capability whose listing is longer than one list page
// (server.list_page_bytes) is listed in short (core/list-entry.ts says how): the operator may
// want to raise the page size.
//
// ENDPOINT_SELECTS_NOTHING: an endpoint whose selection takes none of the capabilities the manifest
// and its openapi sources declare, where no upstream could fill it (none is selected): it would
// serve nothing. An upstream's listing is not known offline, so an endpoint that may take one is
// not warned about.
//
// META_TOOL_SHADOWS: a tool named like a discovery meta-tool (search_tools, describe_tools, call_tool,
// load_tools) on a manifest where some endpoint is progressive or auto: there the meta-tool wins, and the
// tool is reached only through call_tool (docs/discovery.md). Renaming the tool is the operator's answer.
//
// LOCK_UPSTREAM_UNKNOWN is about the pin lock file, not the manifest: lock-check.ts gives it.
// LISTING_LARGE weighs the catalog the manifest makes, not the manifest: listing-warnings.ts gives it.

import type { SvcManifest, Tool } from '../core/manifest-types.gen.js';
import { CALL_ROUTES } from '../core/config.js';
import { fitListing, promptListing, resourceListing, toolListing } from '../core/list-entry.js';
import { compileEndpoint, MANIFEST_SOURCE, selects } from '../core/endpoint.js';
import type { ToolOrigin } from './openapi-sources.js';
import { META_TOOL } from '../catalog/meta-tools.js';

/** A backend timeout above this (ms) makes `task: required` advisable. */
export const TASK_ADVISED_AFTER_MS = 60_000;

/** Every warning `fastsvc validate` gives, with the line the error reference (docs/reference/errors.md) prints for it. */
export const WARNINGS = {
  TASK_ADVISED: 'A tool that needs an `*.admin` or `*.write` scope (a template or fixed content excepted: it renders at once and changes nothing), or whose backend may run longer than 60 s, does not say whether it runs as a task: declare `task: required` (callers can follow and cancel it) or `task: forbidden`.',
  SCOPE_ADVISED: 'On a server that serves people other than its operator (people sign in, an enterprise identity provider, or a public call route reachable from other machines), a tool that may change something declares no `required_scopes`: declare scopes, `annotations.readOnlyHint: true` if it only reads, or `required_scopes: []` to leave it open on purpose.',
  OPENAPI_SKIPPED: 'An operation of an `openapi` source is not served because fastsvc cannot call it as the document describes it (a multipart or binary body, a `file` parameter, a parameter described by a media type, a method other than GET POST PUT PATCH DELETE, a Swagger 2.0 collection format OpenAPI 3 cannot express, a path placeholder without its parameter, a required parameter fastsvc cannot send such as a `Cookie` header, a GET with a required body); the message names its method, path and operationId and says why. Exclude it (`exclude`) to silence this.',
  OPENAPI_NOT_FETCHED: '`fastsvc validate` without `--network` does not fetch an `openapi` document at a URL, so the tools of that source were not checked; `--network` fetches it (serve always does).',
  LIST_ENTRY_SHORTENED: 'A capability\'s listing (its name, description and schemas as tools/list and GET /svc show them) is longer than one list page (`server.list_page_bytes`), so it is listed in short: a tool without its output schema, then with its input schema cut to the levels that fit (the call is still checked against the whole schema), then its description shortened. Raise `server.list_page_bytes` to list it whole.',
  LISTING_LARGE: 'An endpoint that lists its tools directly (the default endpoint, unless it says otherwise) lists more than 40 tools, or more than 20,000 tokens of definitions (o200k): models choose tools worse past about 30–40, and every request carries the listing, a tenth of a 200k-token context window before the user has asked anything. Serve it with `discovery: auto` (a few meta-tools that search, describe and call; progressive past those sizes) or split the catalog into endpoints; `fastsvc cost` shows what each source and tool costs. Upstreams\' tools, listed only at run time, are not weighed. Reported at the endpoint, or at the top of the file for the default endpoint.',
  ENDPOINT_SELECTS_NOTHING: 'An endpoint\'s `select` takes none of the tools, resources and prompts the manifest and its `openapi` sources declare, and no upstream could add any (none is selected): the endpoint would serve nothing. An endpoint that may take an upstream\'s capabilities is not warned about (its listing is not known offline).',
  META_TOOL_SHADOWS: 'A tool is named like a discovery meta-tool (`search_tools`, `describe_tools`, `call_tool`, `load_tools`) while an endpoint\'s `discovery` is `progressive` or `auto`: on a progressive endpoint the meta-tool wins and the tool is reached only through `call_tool`. Rename the tool.',
  LOCK_UPSTREAM_UNKNOWN: 'The pin lock file beside the manifest (`svc.lock.json`) has an entry for an upstream the manifest does not declare (renamed or removed): it serves nothing, and `fastsvc upstreams accept` leaves it; remove the entry by hand, or restore the upstream. Reported at the entry\'s line in the lock file.',
} as const;

export interface Warning {
  code: keyof typeof WARNINGS;
  path: (string | number)[];
  message: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '::1', '[::1]']);
const isLoopback = (host: string) => LOOPBACK_HOSTS.has(host.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(host);

/**
 * Why this manifest serves people other than its operator, or undefined when only the operator
 * and the clients they hand a credential to can call it. Served to others: OAuth is on and
 * issues tokens to people who sign in (login.mode: users or upstream) or to an enterprise identity
 * provider's users (enterprise_issuers); or /svc, /mcp or /ws is a public route and the server
 * is reachable from other machines (server.host is not a loopback address, or base_url is not
 * a loopback URL). Static bearer tokens alone, and OAuth that auto-approves on a loopback
 * issuer, are the operator's own.
 */
export function servedToOthers(m: SvcManifest): string | undefined {
  if (m.oauth?.enabled) {
    if (m.oauth.login?.mode === 'users') return 'people sign in to it (oauth.login.mode: users)';
    if (m.oauth.login?.mode === 'upstream') return 'people sign in to it through an identity provider (oauth.login.mode: upstream)';
    if (m.oauth.enterprise_issuers?.length) return 'users of an enterprise identity provider get tokens (oauth.enterprise_issuers)';
  }
  const open = CALL_ROUTES.filter((r) => m.routes?.public?.includes(r));
  if (!open.length) return undefined;
  const host = m.server?.host ?? '127.0.0.1';
  const urlHost = m.base_url === undefined ? undefined : hostOf(m.base_url);
  const reach = !isLoopback(host) ? `it listens on ${host}` : urlHost !== undefined && !isLoopback(urlHost) ? `its base_url is ${m.base_url}` : undefined;
  return reach && `${open.join(', ')} ${open.length > 1 ? 'are public routes' : 'is a public route'} and ${reach}`;
}

/** The host of a URL, or '' when it is not one (an unset ${VAR}'s placeholder): not loopback. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/**
 * What a tool may change, or undefined when it only reads. template and content never change
 * anything; fs writes when its op is write (whatever the annotations say); the rest unless
 * annotations.readOnlyHint is true: exec and module always may (the manifest cannot see what
 * they do), http when its method is not GET, sqlite when the database is writable and the
 * statement is not a plain SELECT (a read-only database refuses a writing statement at start-up).
 */
export function mutationOf(t: Tool): string | undefined {
  if (t.fs) return t.fs.op === 'write' ? 'it writes files (fs op: write)' : undefined;
  if ((t.annotations as { readOnlyHint?: unknown } | undefined)?.readOnlyHint === true) return undefined;
  if (t.exec) return 'it runs a program (exec), which may change anything';
  if (t.module !== undefined) return 'it runs module code, which may change anything';
  if (t.http && (t.http.method ?? 'GET') !== 'GET') return `it sends HTTP ${t.http.method}`;
  if (t.sqlite?.writable && !plainSelect(t.sqlite.query)) return 'it runs a statement that is not a plain SELECT on a writable database (sqlite)';
  return undefined;
}

/** The statement's first keyword, after comments, is SELECT. */
function plainSelect(sql: string): boolean {
  const rest = sql.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  return /^select\b/i.test(rest);
}

/**
 * `written` says whether the file itself sets a path (the manifest given here has the schema's defaults filled in);
 * `origins`: the source and tags of each tool an `openapi` source made (Plan.toolOrigins).
 */
export function manifestWarnings(m: SvcManifest, written: (path: (string | number)[]) => boolean, origins?: ReadonlyMap<string, ToolOrigin>): Warning[] {
  const out: Warning[] = [];
  out.push(...emptyEndpoints(m, origins));
  out.push(...shadowedMetaTools(m));
  const others = servedToOthers(m);
  for (const [i, t] of (m.tools ?? []).entries()) {
    const instant = t.template !== undefined || t.content !== undefined; // renders at once, changes nothing
    const risky = instant ? [] : (t.required_scopes ?? []).filter((s) => /\.(admin|write)$/.test(s));
    const backend = t.exec ?? t.http ?? t.sqlite ?? t.fs;
    const timeout = t.module !== undefined ? t.timeout_ms : (backend as { timeout_ms?: number } | undefined)?.timeout_ms;
    const reasons = t.task === 'required' ? [] : [
      ...(risky.length ? [`it needs scope ${risky.join(' ')}`] : []),
      ...(timeout !== undefined && timeout > TASK_ADVISED_AFTER_MS ? [`its timeout (${timeout} ms) exceeds ${TASK_ADVISED_AFTER_MS} ms`] : []),
    ];
    // written() is asked last: it may need the file's source positions, which a large clean manifest never builds.
    if (reasons.length && !written(['tools', i, 'task'])) {
      out.push({ code: 'TASK_ADVISED', path: ['tools', i, 'task'], message: `tool ${t.name}: ${reasons.join(' and ')}; declare task: required so callers can follow and cancel it, or task: forbidden to keep plain calls` });
    }
    const mutation = others && !t.required_scopes?.length ? mutationOf(t) : undefined;
    if (mutation && !written(['tools', i, 'required_scopes'])) {
      out.push({
        code: 'SCOPE_ADVISED', path: ['tools', i, 'required_scopes'],
        message: `tool ${t.name}: ${mutation}, and needs no scope while this server serves others: ${others}; declare required_scopes, `
          + `${t.fs ? '' : 'annotations.readOnlyHint: true if it only reads, '}or required_scopes: [] to leave it open to every caller on purpose`,
      });
    }
  }
  const bytes = m.server?.list_page_bytes;
  if (bytes !== undefined) {
    const shortened = (kind: string, name: string, path: (string | number)[], listing: Record<string, unknown>) => {
      const f = fitListing(listing, bytes);
      if (f.shortened) out.push({ code: 'LIST_ENTRY_SHORTENED', path, message: `${kind} ${name}: its listing is ${JSON.stringify(listing).length} characters of JSON, more than a list page holds (server.list_page_bytes: ${bytes}): listed with ${f.shortened}; raise server.list_page_bytes to list it whole` });
    };
    for (const [i, t] of (m.tools ?? []).entries()) shortened('tool', t.name, ['tools', i], toolListing(t as Parameters<typeof toolListing>[0], t.input_schema ?? { type: 'object', properties: {} }));
    for (const [i, r] of (m.resources ?? []).entries()) shortened('resource', r.name, ['resources', i], resourceListing(r));
    for (const [i, p] of (m.prompts ?? []).entries()) shortened('prompt', p.name, ['prompts', i], promptListing(p));
  }
  return out;
}

/** META_TOOL_SHADOWS (see the header). */
function shadowedMetaTools(m: SvcManifest): Warning[] {
  const progressive = [m.discovery, ...Object.values(m.endpoints ?? {}).map((e) => e.discovery)].some((d) => d?.mode === 'progressive' || d?.mode === 'auto');
  if (!progressive) return [];
  const meta = new Set<string>(Object.values(META_TOOL));
  return (m.tools ?? []).flatMap((t, i) => (meta.has(t.name)
    ? [{ code: 'META_TOOL_SHADOWS' as const, path: ['tools', i, 'name'], message: `tool ${t.name} has a discovery meta-tool's name: on a progressive endpoint the meta-tool wins and ${t.name} is reached only through call_tool; rename it` }]
    : []));
}

/** ENDPOINT_SELECTS_NOTHING (see the header). */
function emptyEndpoints(m: SvcManifest, origins: ReadonlyMap<string, ToolOrigin> | undefined): Warning[] {
  const out: Warning[] = [];
  const upstreams = (m.upstreams ?? []).map((u) => u.name);
  for (const [name, spec] of Object.entries(m.endpoints ?? {})) {
    if (!spec.select) continue;
    const sources = spec.select.sources;
    if (upstreams.some((u) => !sources || sources.includes(u))) continue;
    let sel;
    try {
      sel = compileEndpoint(name, spec).select;
    } catch {
      continue; // a name compile refuses: an error already
    }
    const own = (n: string) => selects(sel, n, undefined, undefined);
    const any = (m.tools ?? []).some((t) => {
      const o = origins?.get(t.name);
      return selects(sel, t.name, o?.source, o?.tags);
    }) || (m.resources ?? []).some((r) => own(r.uri ?? r.uri_template ?? '')) || (m.prompts ?? []).some((p) => own(p.name));
    if (!any) {
      out.push({
        code: 'ENDPOINT_SELECTS_NOTHING', path: ['endpoints', name, 'select'],
        message: `endpoint ${name}: its select takes none of the ${(m.tools ?? []).length} tools, ${(m.resources ?? []).length} resources and ${(m.prompts ?? []).length} prompts declared here (sources ${MANIFEST_SOURCE}${m.openapi?.length ? ` and ${m.openapi.map((o) => o.name).join(', ')}` : ''}): it would serve nothing`,
      });
    }
  }
  return out;
}
