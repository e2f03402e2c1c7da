// The informational routes: /, /docs, /healthz, /readyz, /metadata. Guarantees:
// each answer reads the policy store's snapshot once (catalog and profile: one
// policy per page) and the server status (no secrets: token values never appear,
// only which auth mode is on); base_url is the configured one,
// else what a trusted proxy reports (server.trust_proxy), else the listening address,
// while the OAuth issuer never follows the request; /readyz is 503 until the
// server is ready, while it drains and while a shared OAuth store is unreachable; it lists each upstream MCP
// server's state, and an upstream that is down does not make the server unready (its calls answer
// UPSTREAM_UNAVAILABLE; the rest serves); / is escaped, script-free HTML; /docs (the default endpoint's page) and
// /docs/NAME (endpoint NAME's, on its view; 404 for a name the live policy does not declare) are escaped HTML whose one
// script (its search box) is allowed by hash in its Content-Security-Policy (docs-page.ts says what the page
// holds). The root page says in two lines how an MCP client connects.

import type { Request, Response } from 'express';
import type { Catalog } from '../core/catalog.js';
import type { ResolvedConfig } from '../core/config.js';
import type { PolicySnapshot } from '../policy/store.js';
import { profileScopes } from '../core/config.js';
import { esc, inline, page } from '../http/html.js';
import { sendJson } from '../http/raw.js';
import { SvcError } from '../errors.js';
import { sendError } from './http-errors.js';
import { DOCS_CSP, DOCS_SCRIPT, DOCS_STYLE, schemaOf, toolsPart } from './docs-page.js';
import { viewOf } from '../catalog/endpoint-view.js';
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
    const snap = d.policy();
    // /docs/NAME: the page of endpoint NAME, on its view; the default endpoint's is /docs.
    const name = typeof req.params.endpoint === 'string' ? req.params.endpoint : undefined;
    if (name !== undefined && !snap.catalog.endpoints?.has(name)) return void sendError(res, new SvcError('NOT_FOUND', `no endpoint ${name}`));
    const view = name === undefined ? snap.catalog : viewOf(snap.catalog, name);
    // ?schema=NAME: one tool's input schema, which the page loads when its <details> opens.
    if (typeof req.query.schema === 'string') {
      const schema = schemaOf(view, req.query.schema);
      return void (schema ? sendJson(res, 200, schema) : sendError(res, new SvcError('NOT_FOUND', `no tool ${req.query.schema}`)));
    }
    res.set('Content-Security-Policy', DOCS_CSP).type('html').send(docsPage(d, req, snap, view));
  },
});

/** The /docs tools part per catalog (immutable: a reload makes a new one) and base URL. */
const toolParts = new WeakMap<object, Map<string, { html: string; toc: string }>>();

/** The page of one endpoint's catalog view (the default endpoint's: the catalog itself). */
function docsPage(d: PublicDeps, req: Request, snap: PolicySnapshot, view: Catalog): string {
  const m = metadata(d, req, snap);
  const descs = new Map((snap.profile.scopes ?? []).map((s) => (typeof s === 'string' ? [s, ''] : [s.name, s.description ?? ''])));
  const scopes = (list: readonly string[]) => (list.length ? list.map((s) => `<span class="scope">${esc(s)}</span>`).join('') : '<span class="muted">any authenticated caller</span>');
  const svcRouted = routed(d, '/svc');
  const bearer = d.config.routes.protected.includes('/svc');
  // The tools part (every example checked against its validator: on a large catalog that compiles every
  // validator) is built once per policy and base URL, so a busy or hostile /docs costs one page per reload.
  let byBase = toolParts.get(view);
  if (!byBase) toolParts.set(view, (byBase = new Map()));
  let tools = byBase.get(m.base_url);
  if (tools === undefined) {
    tools = toolsPart(view, { baseUrl: m.base_url, svcRouted, bearer, scopes });
    if (byBase.size < 8) byBase.set(m.base_url, tools); // a handful of public URLs; a forged one is not remembered
  }
  const resources = [...view.resources.values(), ...view.templates].map((r) => `<section><h3><code>${esc(r.def.uri ?? r.def.uri_template)}</code> — ${esc(r.def.name)}</h3>
<p>${inline(r.def.description ?? '')}</p><p>Scopes: ${scopes(r.def.required_scopes ?? [])} · ${esc(r.def.mime_type ?? 'text/plain')}</p></section>`).join('');
  const prompts = [...view.prompts.values()].map((p) => `<section><h3><code>${esc(p.def.name)}</code></h3><p>${inline(p.def.description ?? '')}</p>
<p>Scopes: ${scopes(p.def.required_scopes ?? [])}</p><p>Arguments: ${(p.def.arguments ?? []).map((a) => `<code>${esc(a.name)}</code>${a.required ? '*' : ''}`).join(' ') || '<span class="muted">none</span>'}</p></section>`).join('');
  const auth = m.auth.mode === 'none'
    ? '<p>No authentication is configured.</p>'
    : `<p>Send <code>Authorization: Bearer &lt;token&gt;</code> on ${m.routes.protected.map((r) => `<code>${esc(r)}</code>`).join(' ')}.
${m.auth.mode.includes('oauth') ? ` Get a token from the OAuth 2.1 server: discovery at <code>${esc(m.profile.issuer)}/.well-known/oauth-authorization-server</code> (authorization code + PKCE S256).` : ' The operator gives you a static token.'}
A missing scope answers 403 with <code>WWW-Authenticate: Bearer error="insufficient_scope", scope="…"</code>.</p>
${bearer && svcRouted ? '<p>The curl commands below read the token from the shell: <code>export SVC_TOKEN=…</code> first (the variable <code>fastsvc serve</code> prints when it generates a token).</p>' : ''}
<table><tr><th>Scope</th><th>Meaning</th></tr>${[...descs].map(([s, t]) => `<tr><td><span class="scope">${esc(s)}</span></td><td>${inline(t)}</td></tr>`).join('')}</table>`;
  const nT = view.tools.size;
  const nR = view.resources.size + view.templates.length;
  const nP = view.prompts.size;
  const toc = `<nav id="contents"><h2>Contents</h2><ul><li><a href="#authentication">Authentication</a></li>
<li><a href="#tools">Tools (${nT})</a>${tools.toc ? `<ul>${tools.toc}</ul>` : ''}</li><li><a href="#resources">Resources (${nR})</a></li><li><a href="#prompts">Prompts (${nP})</a></li></ul></nav>`;
  const find = nT ? '<p><input id="find" type="search" placeholder="Find a tool: words of its name or description" aria-label="Find a tool" autocomplete="off" hidden> <span id="found" class="muted" aria-live="polite"></span></p>' : '';
  return page(`${view.name} — docs`, `<h1>${esc(view.name)}</h1><p>${inline(view.description)}</p>
${mcpHint(d, m)}
${toc}
<h2 id="authentication">Authentication</h2>${auth}
<h2 id="tools">Tools (${nT})</h2>${find}${tools.html || '<p class="muted">none</p>'}
<h2 id="resources">Resources (${nR})</h2>${resources || '<p class="muted">none</p>'}
<h2 id="prompts">Prompts (${nP})</h2>${prompts || '<p class="muted">none</p>'}
<p class="muted">config ${esc(m.config_hash.slice(0, 12))} · transports ${m.transports.map((t) => esc(t)).join(' ')}</p>`, { style: DOCS_STYLE, ...(nT && { script: DOCS_SCRIPT }) });
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
