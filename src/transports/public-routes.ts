// The informational routes: /, /docs, /healthz, /readyz, /metadata. Guarantees:
// each answer reads the policy store's snapshot once (catalog and profile: one
// policy per page) and the server status (no secrets: token values never appear,
// only which auth mode is on); base_url is the configured one,
// else what a trusted proxy reports (server.trust_proxy), else the listening address,
// while the OAuth issuer never follows the request; /readyz is 503 until the
// server is ready, while it drains and while a shared OAuth store is unreachable; it lists each upstream MCP
// server's state, and an upstream that is down does not make the server unready (its calls answer
// UPSTREAM_UNAVAILABLE; the rest serves); / and /docs are escaped, script-free HTML.
// The root page says in two lines how an MCP client connects; each tool on /docs
// (but an app-only one, which /svc does not serve) has a curl command that runs as
// pasted (with $SVC_TOKEN set), its body an example
// built from the input schema and checked against the tool's own validator.

import type { Request, Response } from 'express';
import type { ToolEntry } from '../core/catalog.js';
import type { ResolvedConfig } from '../core/config.js';
import type { PolicySnapshot } from '../policy/store.js';
import { profileScopes } from '../core/config.js';
import { esc, inline, page } from '../http/html.js';
import { curlForTool } from '../http/curl-snippet.js';
import { sendJson } from '../http/raw.js';
import { exampleInput } from '../http/example-input.js';
import { inputProblems, summarize } from '../policy/input-errors.js';
import type { UpstreamStatus } from '../upstreams/upstream-set.js';

/** What the server reports about reloads (/readyz, /metadata): written only by the reloader. */
export interface ReloadStatus {
  last_reload?: { at: string; ok: boolean; error?: string; hash: string; changes?: unknown };
  restart_required?: string[];
}

export interface ServerStatus extends ReloadStatus {
  ready: boolean;
  draining: boolean;
  started_at: string;
}

export interface PublicDeps {
  policy: () => PolicySnapshot;
  /** The start-up config: routes, oauth and base_url are restart-only; the live profile is in policy(). */
  config: ResolvedConfig;
  status: ServerStatus;
  authMode: () => string;
  /** The stable base URL (the OAuth issuer's default). */
  baseUrl: () => string;
  /** The base URL this request's caller reached. */
  publicBaseUrl: (req: Request) => string;
  version: string;
  /** False while a store the server depends on (a shared OAuth store) is unreachable. */
  storeReachable?: () => boolean;
  /** Tasks running now (/metadata and /readyz report it). */
  runningTasks: () => number;
  /** Each upstream MCP server's state (/readyz reports it); absent without upstreams. */
  upstreams?: () => Record<string, UpstreamStatus>;
}

export function metadata(d: PublicDeps, req: Request, snap: PolicySnapshot = d.policy()) {
  const cat = snap.catalog;
  const c = d.config;
  const profile = snap.profile;
  const issuer = c.oauth?.enabled ? c.oauth.issuer ?? d.baseUrl() : profile.issuer;
  return {
    name: cat.name,
    description: cat.description,
    version: d.version,
    base_url: d.publicBaseUrl(req),
    transports: (['/svc', '/mcp', '/ws'] as const).filter((r) => c.routes.public.includes(r) || c.routes.protected.includes(r)),
    routes: { public: c.routes.public, protected: c.routes.protected },
    auth: { mode: d.authMode() },
    profile: {
      issuer,
      authorization_url: profile.authorization_url ?? (issuer ? `${issuer}/authorize` : undefined),
      token_url: profile.token_url ?? (issuer ? `${issuer}/token` : undefined),
      scopes: profileScopes(profile),
    },
    capabilities: { tools: cat.tools.size, resources: cat.resources.size + cat.templates.length, prompts: cat.prompts.size },
    config_hash: cat.hash,
    ready: d.status.ready && !d.status.draining,
    started_at: d.status.started_at,
    last_reload: d.status.last_reload ?? null,
    restart_required: d.status.restart_required ?? [],
    tasks: { running: d.runningTasks() },
  };
}

export const publicHandlers = (d: PublicDeps) => ({
  // Probes call these every few seconds: written with sendJson, they never load express's MIME tables.
  '/healthz': (_req: Request, res: Response) => {
    sendJson(res, 200, { status: 'ok' });
  },
  '/readyz': (_req: Request, res: Response) => {
    const store = d.storeReachable?.() ?? true;
    const ok = d.status.ready && !d.status.draining && store;
    sendJson(res, ok ? 200 : 503, {
      status: ok ? 'ready' : d.status.draining ? 'draining' : !d.status.ready ? 'starting' : 'store_unreachable',
      config_hash: d.policy().catalog.hash,
      last_reload: d.status.last_reload ?? null,
      restart_required: d.status.restart_required ?? [],
      tasks: { running: d.runningTasks() },
      ...(d.upstreams && { upstreams: d.upstreams() }),
    });
  },
  '/metadata': (req: Request, res: Response) => {
    sendJson(res, 200, metadata(d, req));
  },
  '/': (req: Request, res: Response) => {
    const m = metadata(d, req);
    if (req.accepts(['html', 'json']) === 'json') return void res.json(m);
    const links = ['/docs', '/metadata', '/healthz', '/readyz'].filter((r) => d.config.routes.public.includes(r) || d.config.routes.protected.includes(r));
    res.type('html').send(page(m.name, `<h1>${esc(m.name)}</h1><p>${inline(m.description)}</p>
<p>${m.capabilities.tools} tools · ${m.capabilities.resources} resources · ${m.capabilities.prompts} prompts · auth: ${esc(m.auth.mode)}</p>
${mcpHint(d, m)}<ul>${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul>
<p class="muted">Endpoints: ${m.transports.map((t) => `<code>${t}</code>`).join(' ')}</p>`));
  },
  '/docs': (req: Request, res: Response) => {
    res.type('html').send(docsPage(d, req));
  },
});

/** The /docs tools section per catalog (immutable: a reload makes a new one) and base URL. */
const toolSections = new WeakMap<object, Map<string, string>>();

function docsPage(d: PublicDeps, req: Request): string {
  const snap = d.policy();
  const cat = snap.catalog;
  const m = metadata(d, req, snap);
  const descs = new Map((snap.profile.scopes ?? []).map((s) => (typeof s === 'string' ? [s, ''] : [s.name, s.description ?? ''])));
  const scopes = (list: readonly string[]) => (list.length ? list.map((s) => `<span class="scope">${esc(s)}</span>`).join('') : '<span class="muted">any authenticated caller</span>');
  const svcRouted = routed(d, '/svc');
  const bearer = d.config.routes.protected.includes('/svc');
  // The tools section (every example checked against its validator: on a large catalog that compiles every
  // validator) is built once per policy and base URL, so a busy or hostile /docs costs one page per reload.
  let byBase = toolSections.get(cat);
  if (!byBase) toolSections.set(cat, (byBase = new Map()));
  let tools = byBase.get(m.base_url);
  if (tools === undefined) {
    tools = [...cat.tools.values()].map((t) => `<section id="tool-${esc(t.def.name)}"><h3><code>${esc(t.def.name)}</code>${t.def.title ? ' — ' + esc(t.def.title) : ''}</h3>
<p>${inline(t.def.description)}</p><p>Scopes: ${scopes(t.def.required_scopes ?? [])} · output: ${esc(t.outputMode)}${appsNote(t)}</p>
<details><summary>Input schema</summary><pre>${esc(JSON.stringify(t.def.input_schema ?? { type: 'object' }, null, 2))}</pre></details>
${svcRouted && !t.appOnly ? snippet(t, m.base_url, bearer) : ''}</section>`).join('');
    if (byBase.size < 8) byBase.set(m.base_url, tools); // a handful of public URLs; a forged one is not remembered
  }
  const resources = [...cat.resources.values(), ...cat.templates].map((r) => `<section><h3><code>${esc(r.def.uri ?? r.def.uri_template)}</code> — ${esc(r.def.name)}</h3>
<p>${inline(r.def.description ?? '')}</p><p>Scopes: ${scopes(r.def.required_scopes ?? [])} · ${esc(r.def.mime_type ?? 'text/plain')}</p></section>`).join('');
  const prompts = [...cat.prompts.values()].map((p) => `<section><h3><code>${esc(p.def.name)}</code></h3><p>${inline(p.def.description ?? '')}</p>
<p>Scopes: ${scopes(p.def.required_scopes ?? [])}</p><p>Arguments: ${(p.def.arguments ?? []).map((a) => `<code>${esc(a.name)}</code>${a.required ? '*' : ''}`).join(' ') || '<span class="muted">none</span>'}</p></section>`).join('');
  const auth = m.auth.mode === 'none'
    ? '<p>No authentication is configured.</p>'
    : `<p>Send <code>Authorization: Bearer &lt;token&gt;</code> on ${m.routes.protected.map((r) => `<code>${esc(r)}</code>`).join(' ')}.
${m.auth.mode.includes('oauth') ? ` Get a token from the OAuth 2.1 server: discovery at <code>${esc(m.profile.issuer)}/.well-known/oauth-authorization-server</code> (authorization code + PKCE S256).` : ' The operator gives you a static token.'}
A missing scope answers 403 with <code>WWW-Authenticate: Bearer error="insufficient_scope", scope="…"</code>.</p>
${bearer && svcRouted ? '<p>The curl commands below read the token from the shell: <code>export SVC_TOKEN=…</code> first (the variable <code>fastsvc serve</code> prints when it generates a token).</p>' : ''}
<table><tr><th>Scope</th><th>Meaning</th></tr>${[...descs].map(([s, t]) => `<tr><td><span class="scope">${esc(s)}</span></td><td>${inline(t)}</td></tr>`).join('')}</table>`;
  return page(`${m.name} — docs`, `<h1>${esc(m.name)}</h1><p>${inline(m.description)}</p>
${mcpHint(d, m)}
<h2>Authentication</h2>${auth}
<h2>Tools (${cat.tools.size})</h2>${tools || '<p class="muted">none</p>'}
<h2>Resources (${cat.resources.size + cat.templates.length})</h2>${resources || '<p class="muted">none</p>'}
<h2>Prompts (${cat.prompts.size})</h2>${prompts || '<p class="muted">none</p>'}
<p class="muted">config ${esc(m.config_hash.slice(0, 12))} · transports ${m.transports.map((t) => esc(t)).join(' ')}</p>`);
}

function routed(d: PublicDeps, route: string): boolean {
  return d.config.routes.public.includes(route) || d.config.routes.protected.includes(route);
}

/** Two lines: where an MCP client connects, and how it authenticates. */
function mcpHint(d: PublicDeps, m: ReturnType<typeof metadata>): string {
  if (!routed(d, '/mcp')) return '';
  const url = `${m.base_url.replace(/\/+$/, '')}/mcp`;
  const bearer = '<code>Authorization: Bearer &lt;token&gt;</code>';
  const auth = d.config.routes.public.includes('/mcp') ? 'none: <code>/mcp</code> is public.'
    : m.auth.mode.includes('oauth')
      ? `OAuth 2.1 — the client finds the authorization server from the 401 (<code>${esc(url.replace(/\/mcp$/, ''))}/.well-known/oauth-protected-resource/mcp</code>)${m.auth.mode.includes('bearer') ? `, or send ${bearer} with a static token` : ''}.`
      : `send ${bearer} with the token the operator gave you.`;
  const ws = routed(d, '/ws') ? '; JSON-RPC over WebSocket at <code>/ws</code>' : '';
  return `<p>MCP clients connect to <code>${esc(url)}</code> (Streamable HTTP${ws}).<br>Auth: ${auth}</p>`;
}

/** A tool's MCP Apps view and whether only views may call it (app-only tools have no /svc snippet: /svc does not serve them). */
function appsNote(t: ToolEntry): string {
  const uri = t.def.ui?.resourceUri;
  return (uri ? ` · view: <code>${esc(uri)}</code> (MCP Apps)` : '') + (t.appOnly ? ' · app-only: called from views by MCP clients that declare MCP Apps' : '');
}

/** The tool's curl command; a note when its example body does not meet the tool's own input schema. */
function snippet(t: ToolEntry, baseUrl: string, bearer: boolean): string {
  const body = exampleInput(t.def.input_schema);
  const ok = t.validate(structuredClone(body));
  const note = ok ? '' : `<p class="muted">Edit the body before running: ${esc(summarize(inputProblems(t.validate.errors)))}.</p>`;
  return `<pre class="cmd">${esc(curlForTool({ baseUrl, tool: t.def.name, body, bearer }))}</pre>${note}`;
}
