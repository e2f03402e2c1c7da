// Stage 3: the semantic checks a schema cannot express, and the frozen Plan.
// Guarantees: pure — no files, sockets, env or clock; every problem is reported
// (not just the first), each at the node it concerns; a Plan is returned only
// when there is no problem, and it is deep-frozen.

import { SvcError, type ErrorCode } from '../errors.js';
import { URI_TEMPLATE_VAR } from '../core/catalog.js';
import { checkInputSchema } from '../core/input-schemas.js';
import { compileTemplate } from '../runtime/template.js';
import { sqlParamNames } from '../runtime/sql-params.js';
import { isLoopbackUrl } from '../util/loopback.js';
import { trustFunction } from '../util/proxy-trust.js';
import { MIN_STATE_KEY } from '../mcp/request-state.js';
import { BACKEND_KINDS } from '../runtime/backends/registry.js';
import { authHeaderOf, compileRequestParts } from '../runtime/backends/http-request.js';
import type { HttpSpec } from '../runtime/backends/contract.js';
import { compilePattern, isPattern } from '../core/guard.js';
import { enterpriseIssuerProblems, issuerProblem, NO_SCOPE, profileIssuerProblem, signInProblems } from '../auth/oauth/oauth-checks.js';
import { externalIssuerProblems } from '../auth/external/issuer-checks.js';
import { checkOutboundAuth } from './outbound-checks.js';
import { upstreamAuthProblems } from '../upstreams/auth-checks.js';
import type { SvcManifest, Tool, Upstream } from '../core/manifest-types.gen.js';
import { KNOWN_ROUTES } from '../core/config.js';
import { planViews, type ViewsPlan } from './views.js';
import type { ToolOrigin } from './openapi-sources.js';
import { compileEndpoint, endpointNameProblem, MANIFEST_SOURCE, type EndpointDef } from '../core/endpoint.js';
import { closestName } from '../util/did-you-mean.js';

const RESOURCE_SOURCES = ['text', 'blob', 'file', 'http', 'module'] as const;

export interface Plan {
  readonly manifest: SvcManifest;
  /** Every declared scope, in declaration order. */
  readonly scopes: readonly string[];
  readonly publicRoutes: readonly string[];
  readonly protectedRoutes: readonly string[];
  /** The MCP Apps views the tools declare (tools[].ui), and each such tool's _meta.ui. */
  readonly views: ViewsPlan;
  /** Tools an `openapi` source made: each one's source and operation tags, by name (manifest/openapi-sources.ts). */
  readonly toolOrigins?: ReadonlyMap<string, ToolOrigin>;
  /** The named endpoints, compiled (their globs made RegExps once, here). */
  readonly endpoints: readonly EndpointDef[];
}

type Path = (string | number)[];
type Locate = (path: readonly (string | number)[]) => { line: number; col: number };

export function compilePlan(m: SvcManifest, file: string, locate: Locate): { plan?: Plan; problems: SvcError[] } {
  const problems: SvcError[] = [];
  const problem = (code: ErrorCode, path: Path, message: string) => {
    const { line, col } = locate(path);
    problems.push(new SvcError(code, message, { file, line, col, path: '/' + path.join('/') }));
  };

  const scopes = (m.profile?.scopes ?? []).map((s) => (typeof s === 'string' ? s : s.name));
  const declared = new Set(scopes);
  const checkScopes = (list: readonly string[] | undefined, path: Path, who: string) => {
    list?.forEach((s, i) => {
      if (isPattern(s)) {
        const re = compilePattern(s).regex;
        if (!scopes.some((d) => re.test(d))) problem('SCOPE_UNDECLARED', [...path, i], `${who} requires scope pattern ${s}, which matches no scope profile.scopes declares`);
      } else if (!declared.has(s)) problem('SCOPE_UNDECLARED', [...path, i], `${who} requires scope ${s}, which profile.scopes does not declare`);
    });
  };
  unique(scopes, ['profile', 'scopes'], 'scope', problem);

  // Routes
  const pub = m.routes?.public ?? [];
  const prot = m.routes?.protected ?? [];
  pub.forEach((r, i) => {
    if (!(KNOWN_ROUTES as readonly string[]).includes(r)) problem('ROUTE_CONFLICT', ['routes', 'public', i], `unknown route ${r} (known: ${KNOWN_ROUTES.join(' ')})`);
    if (prot.includes(r)) problem('ROUTE_CONFLICT', ['routes', 'public', i], `route ${r} is listed both public and protected`);
  });
  prot.forEach((r, i) => {
    if (!(KNOWN_ROUTES as readonly string[]).includes(r)) problem('ROUTE_CONFLICT', ['routes', 'protected', i], `unknown route ${r} (known: ${KNOWN_ROUTES.join(' ')})`);
  });

  // Auth
  const oauthOn = m.oauth?.enabled === true;
  const a = m.auth;
  const hasMainToken = !!(a && (a.token || a.token_file || a.generate_if_unset));
  const hasBearer = !!a && (hasMainToken || (a.tokens?.length ?? 0) > 0);
  const external = m.external_issuers ?? [];
  if (prot.length > 0 && !hasBearer && !oauthOn && !external.length) {
    problem('AUTH_MISSING', m.auth ? ['auth'] : m.routes ? ['routes', 'protected'] : [], `routes ${prot.join(' ')} are protected but no auth mode is configured: set auth.token (e.g. \${SVC_TOKEN}), oauth.enabled or external_issuers`);
  }
  // The checks start-up makes (auth/external/issuer-checks.ts), so `svc validate` fails where `svc serve` would.
  const builtinIssuer = oauthOn ? m.oauth?.issuer ?? m.base_url?.replace(/\/+$/, '') : undefined;
  for (const p of externalIssuerProblems(external, scopes, builtinIssuer)) problem(p.code, p.path, p.message);
  if (a) {
    if (a.token && a.token_file) problem('AUTH_MISSING', ['auth', 'token_file'], 'give auth.token or auth.token_file, not both');
    checkScopes(a.scopes, ['auth', 'scopes'], 'auth.scopes');
    unique((a.tokens ?? []).map((t) => t.name), ['auth', 'tokens'], 'token name', problem);
    a.tokens?.forEach((t, i) => {
      // An empty token (e.g. ${VAR:-} with VAR unset) disables that token; BearerAuth logs it.
      if (t.token && t.token_file) problem('AUTH_MISSING', ['auth', 'tokens', i], `token ${t.name}: give token or token_file, not both`);
      if (t.token === undefined && t.token_file === undefined) problem('AUTH_MISSING', ['auth', 'tokens', i], `token ${t.name}: give token or token_file`);
      checkScopes(t.scopes, ['auth', 'tokens', i, 'scopes'], `token ${t.name}`);
    });
  }
  if (m.oauth?.enabled) checkOAuth(m, problem, checkScopes, scopes);
  const oauthOnPostgres = m.oauth?.enabled === true && m.oauth.provider?.type === 'postgres';
  if (m.state && oauthOnPostgres) {
    problem('STATE_CONFIG', ['state'], 'state and oauth.provider.type postgres both name a database for the state replicas share (sessions, tasks, quotas); the OAuth provider\'s database already holds it: remove state, or use another oauth.provider');
  }
  if (m.limits?.shared && !oauthOnPostgres && !m.state) {
    problem('OAUTH_CONFIG', ['limits', 'shared'], 'limits.shared counts quotas in a shared PostgreSQL database: it needs state (type postgres) or oauth.enabled with oauth.provider.type postgres');
  }
  const trust = m.server?.trust_proxy;
  if (trust !== undefined) {
    try {
      trustFunction(trust);
    } catch (e) {
      problem('SCHEMA_VIOLATION', ['server', 'trust_proxy'], (e as Error).message);
    }
  }
  const srv = m.server;
  if (srv?.request_state_key && srv.request_state_key_file) problem('SCHEMA_VIOLATION', ['server', 'request_state_key_file'], 'give server.request_state_key or server.request_state_key_file, not both');
  if (srv?.request_state_key && srv.request_state_key.length < MIN_STATE_KEY) problem('SCHEMA_VIOLATION', ['server', 'request_state_key'], `server.request_state_key needs at least ${MIN_STATE_KEY} characters (e.g. openssl rand -base64 32)`);

  // Tools
  unique((m.tools ?? []).map((t) => t.name), ['tools'], 'tool', problem);
  m.tools?.forEach((t, i) => checkTool(t, ['tools', i], problem, checkScopes));
  m.tools?.forEach((t, i) => checkScopes(t.ui?.required_scopes, ['tools', i, 'ui', 'required_scopes'], `the view of tool ${t.name}`));
  const views = planViews(m.tools ?? [], new Set((m.resources ?? []).flatMap((r) => (r.uri ? [r.uri] : []))), problem);

  // Resources
  unique((m.resources ?? []).map((r) => r.uri ?? r.uri_template ?? ''), ['resources'], 'resource uri', problem);
  m.resources?.forEach((r, i) => {
    const path: Path = ['resources', i];
    if (!r.uri === !r.uri_template) problem('BACKEND_CONFIG', path, `resource ${r.name}: give exactly one of uri or uri_template`);
    const sources = RESOURCE_SOURCES.filter((k) => r[k] !== undefined);
    if (sources.length !== 1) problem('BACKEND_CONFIG', path, `resource ${r.name}: give exactly one content source (${RESOURCE_SOURCES.join(', ')}); found ${sources.join(', ') || 'none'}`);
    checkScopes(r.required_scopes, [...path, 'required_scopes'], `resource ${r.name}`);
    const vars = new Set([...(r.uri_template ?? '').matchAll(URI_TEMPLATE_VAR)].map((x) => x[2]!));
    placeholders(r.required_scopes).forEach(([arg, i]) => {
      if (!vars.has(arg)) problem('SCOPE_ARG_UNSAFE', [...path, 'required_scopes', i], `resource ${r.name}: scope placeholder {{${arg}}} is not a variable of uri_template`);
    });
    if (r.text !== undefined) checkNames(r.text, vars, [...path, 'text'], `resource ${r.name}`, problem);
    if (r.file?.includes('{{')) {
      // A folder of files: the variables name a file under the folder before the first of them (folder-files.ts).
      if (!r.uri_template) problem('BACKEND_CONFIG', [...path, 'file'], `resource ${r.name}: a file with {{variables}} needs a uri_template that gives them`);
      else checkNames(r.file, vars, [...path, 'file'], `resource ${r.name}`, problem);
    }
  });

  // Backend credentials (http.auth)
  checkOutboundAuth(m, problem);

  // Prompts
  unique((m.prompts ?? []).map((p) => p.name), ['prompts'], 'prompt', problem);
  m.prompts?.forEach((p, i) => {
    const path: Path = ['prompts', i];
    checkScopes(p.required_scopes, [...path, 'required_scopes'], `prompt ${p.name}`);
    unique((p.arguments ?? []).map((x) => x.name), [...path, 'arguments'], 'argument', problem);
    const args = new Set((p.arguments ?? []).map((x) => x.name));
    placeholders(p.required_scopes).forEach(([arg, i]) => {
      if (!p.arguments?.some((x) => x.name === arg && x.required)) problem('SCOPE_ARG_UNSAFE', [...path, 'required_scopes', i], `prompt ${p.name}: scope placeholder {{${arg}}} is not a required argument`);
    });
    if ((p.messages === undefined) === (p.module === undefined)) problem('BACKEND_CONFIG', path, `prompt ${p.name}: give exactly one of messages or module`);
    p.messages?.forEach((msg, j) => {
      if ((msg.text === undefined) === (msg.content === undefined)) problem('BACKEND_CONFIG', [...path, 'messages', j], `prompt ${p.name}: a message needs exactly one of text or content`);
      const text = msg.text ?? msg.content?.text;
      if (text !== undefined) checkNames(text, args, [...path, 'messages', j, ...(msg.text !== undefined ? ['text'] : ['content', 'text'])], `prompt ${p.name}`, problem);
    });
  });

  // Upstreams: the connection (exactly one of command and url) and the scopes fastsvc gives what it imports.
  unique((m.upstreams ?? []).map((u) => u.name), ['upstreams'], 'upstream', problem);
  m.upstreams?.forEach((u, i) => checkUpstream(u, ['upstreams', i], problem, checkScopes));

  // Endpoints: names that are path segments and not /svc's own, scopes declared, sources that exist.
  const sources = [...(m.openapi ?? []).map((o) => o.name), ...(m.upstreams ?? []).map((u) => u.name)];
  for (const [name, e] of Object.entries(m.endpoints ?? {})) {
    const path: Path = ['endpoints', name];
    const bad = endpointNameProblem(name);
    if (bad) problem('ENDPOINT_CONFIG', path, bad);
    checkScopes(e.required_scopes, [...path, 'required_scopes'], `endpoint ${name}`);
    e.select?.sources?.forEach((s, i) => {
      const at: Path = [...path, 'select', 'sources', i];
      if (s === MANIFEST_SOURCE) {
        if (sources.includes(s)) problem('ENDPOINT_CONFIG', at, `endpoint ${name}: ${s} in select.sources means the manifest's own capabilities, and a source is also named ${s}: rename that source`);
      } else if (!sources.includes(s)) {
        const near = closestName(s, [...sources, MANIFEST_SOURCE]);
        problem('ENDPOINT_CONFIG', at, `endpoint ${name}: select.sources names ${s}, which is no openapi source or upstream of this manifest${near ? ` (did you mean ${near}?)` : ''}; known: ${[...sources, MANIFEST_SOURCE].join(', ')}`);
      }
    });
  }

  if (problems.length) return { problems };
  const endpoints = Object.entries(m.endpoints ?? {}).map(([name, e]) => compileEndpoint(name, e));
  const plan: Plan = { manifest: m, scopes, publicRoutes: pub, protectedRoutes: prot, views, endpoints };
  return { plan: deepFreeze(plan), problems };
}

function checkTool(t: Tool, path: Path, problem: (c: ErrorCode, p: Path, m: string) => void, checkScopes: (l: readonly string[] | undefined, p: Path, w: string) => void): void {
  const backends = BACKEND_KINDS.filter((k) => t[k] !== undefined);
  if (backends.length !== 1) problem('BACKEND_CONFIG', path, `tool ${t.name}: give exactly one backend (${BACKEND_KINDS.join(', ')}); found ${backends.join(', ') || 'none'}`);
  checkScopes(t.required_scopes, [...path, 'required_scopes'], `tool ${t.name}`);
  let props = new Set<string>();
  try {
    // The cheap check (no validator is generated): a validator is compiled at the tool's first call.
    checkInputSchema(t.input_schema ?? { type: 'object' });
    props = new Set(Object.keys((t.input_schema?.properties as object | undefined) ?? {}));
  } catch (e) {
    problem('INPUT_SCHEMA_INVALID', [...path, 'input_schema'], `tool ${t.name}: input_schema is not a valid JSON Schema: ${(e as Error).message}`);
    return;
  }
  const who = `tool ${t.name}`;
  const schema = (t.input_schema ?? {}) as { properties?: Record<string, { type?: unknown; pattern?: unknown }>; required?: string[] };
  const safeString = (arg: string, at: Path, what: string) => {
    const prop = schema.properties?.[arg];
    const why = !prop ? 'is not a property of input_schema'
      : prop.type !== 'string' ? 'is not of type string'
      : !schema.required?.includes(arg) ? 'is not in input_schema.required'
      : !safePattern(prop.pattern) ? 'needs an anchored pattern (^…$) that admits only letters, digits, _ and -, e.g. "^[a-z0-9-]+$"' : undefined;
    if (why) problem('SCOPE_ARG_UNSAFE', at, `${who}: ${what} ${arg} ${why}`);
  };
  placeholders(t.required_scopes).forEach(([arg, i]) => safeString(arg, [...path, 'required_scopes', i], 'scope placeholder argument'));
  for (const arg of Object.keys(t.bind ?? {})) safeString(arg, [...path, 'bind', arg], 'bound argument');
  const check = (text: string | undefined, p: Path) => text !== undefined && checkNames(text, props, p, who, problem);
  check(t.template, [...path, 'template']);
  t.content?.forEach((c, i) => {
    check(c.text, [...path, 'content', i, 'text']);
    check(c.uri, [...path, 'content', i, 'uri']);
  });
  if (t.http) {
    check(t.http.url, [...path, 'http', 'url']);
    for (const [k, v] of Object.entries(t.http.headers ?? {})) check(v, [...path, 'http', 'headers', k]);
    walkStrings(t.http.body, [...path, 'http', 'body'], check);
    t.http.parameters?.forEach((p, i) => {
      const arg = p.arg ?? p.name;
      const at = [...path, 'http', 'parameters', i];
      if (!props.has(arg)) problem('TEMPLATE_ARG_UNKNOWN', at, `${who}: ${p.in} parameter ${p.name} takes argument ${arg}, which input_schema does not define`);
      else if (p.in === 'path' && !schema.required?.includes(arg)) problem('BACKEND_CONFIG', at, `${who}: path parameter ${p.name}: argument ${arg} must be in input_schema.required (a URL path cannot leave it out)`);
    });
    try {
      // The backend's own checks of parameters and request_body, so that `validate --no-io` reports them too.
      compileRequestParts(t.http as HttpSpec, authHeaderOf(t.http));
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      problem(e.code, [...path, 'http', ...(e.path ?? '').split('/').filter(Boolean).map((k) => (/^\d+$/.test(k) ? Number(k) : k))], `${who}: ${e.message}`);
    }
    const rb = t.http.request_body?.arg;
    if (rb !== undefined && !props.has(rb)) problem('TEMPLATE_ARG_UNKNOWN', [...path, 'http', 'request_body'], `${who}: request_body takes argument ${rb}, which input_schema does not define`);
  }
  if (t.exec) {
    if (t.exec.argv[0]?.includes('{{')) problem('BACKEND_CONFIG', [...path, 'exec', 'argv', 0], `${who}: argv[0] (the program) cannot be templated`);
    t.exec.argv.forEach((s, i) => check(s, [...path, 'exec', 'argv', i]));
  }
  if (t.fs) {
    check(t.fs.path, [...path, 'fs', 'path']);
    if (t.fs.op === 'write') check(t.fs.content, [...path, 'fs', 'content']);
  }
  if (t.sqlite) {
    try {
      for (const name of sqlParamNames(t.sqlite.query)) {
        if (!props.has(name)) problem('TEMPLATE_ARG_UNKNOWN', [...path, 'sqlite', 'query'], `${who}: query parameter :${name} is not a property of input_schema`);
      }
    } catch (e) {
      problem('BACKEND_CONFIG', [...path, 'sqlite', 'query'], `${who}: ${(e as Error).message}`);
    }
  }
}

function checkUpstream(u: Upstream, path: Path, problem: (c: ErrorCode, p: Path, m: string) => void, checkScopes: (l: readonly string[] | undefined, p: Path, w: string) => void): void {
  const who = `upstream ${u.name}`;
  if ((u.command === undefined) === (u.url === undefined)) problem('UPSTREAM_CONFIG', path, `${who}: give exactly one of command (stdio) or url (Streamable HTTP)`);
  if (u.url !== undefined && u.env !== undefined) problem('UPSTREAM_CONFIG', [...path, 'env'], `${who}: env is for a command upstream; a url upstream takes headers`);
  if (u.command !== undefined && u.headers !== undefined) problem('UPSTREAM_CONFIG', [...path, 'headers'], `${who}: headers are for a url upstream`);
  if (u.url !== undefined && !URL.canParse(u.url)) problem('UPSTREAM_CONFIG', [...path, 'url'], `${who}: ${JSON.stringify(u.url)} is not a URL`);
  if (u.restart && u.restart.min_ms! > u.restart.max_ms!) problem('UPSTREAM_CONFIG', [...path, 'restart', 'min_ms'], `${who}: restart.min_ms is above restart.max_ms`);
  for (const p of upstreamAuthProblems(u)) problem('UPSTREAM_CONFIG', [...path, ...p.path], p.message);
  const e = u.expose;
  checkScopes(e?.required_scopes, [...path, 'expose', 'required_scopes'], who);
  for (const [name, o] of Object.entries(e?.overrides ?? {})) checkScopes(o.required_scopes, [...path, 'expose', 'overrides', name, 'required_scopes'], `${who} tool ${name}`);
  // An imported schema is not known offline, so nothing can vouch for a placeholder's argument.
  const lists: [readonly string[] | undefined, Path][] = [[e?.required_scopes, [...path, 'expose', 'required_scopes']], ...Object.entries(e?.overrides ?? {}).map(([n, o]) => [o.required_scopes, [...path, 'expose', 'overrides', n, 'required_scopes']] as [readonly string[] | undefined, Path])];
  for (const [list, at] of lists) placeholders(list).forEach(([arg, k]) => problem('SCOPE_ARG_UNSAFE', [...at, k], `${who}: scope placeholder {{${arg}}} names an argument of an imported schema, which fastsvc cannot check offline; use fixed scopes`));
}

function checkOAuth(m: SvcManifest, problem: (c: ErrorCode, p: Path, msg: string) => void, checkScopes: (l: readonly string[] | undefined, p: Path, w: string) => void, scopes: readonly string[]): void {
  const o = m.oauth!;
  const issuer = o.issuer ?? m.base_url?.replace(/\/+$/, '');
  // The checks start-up makes (auth/oauth/oauth-checks.ts), made here too so `svc validate` fails where `svc serve` would.
  const badIssuer = o.issuer === undefined ? undefined : issuerProblem(o.issuer);
  if (badIssuer) problem('OAUTH_CONFIG', ['oauth', 'issuer'], badIssuer);
  const mismatch = issuer === undefined ? undefined : profileIssuerProblem(m.profile?.issuer, issuer);
  if (mismatch) problem('OAUTH_CONFIG', ['profile', 'issuer'], mismatch);
  if (!scopes.length) problem('OAUTH_CONFIG', ['profile', 'scopes'], NO_SCOPE);
  if (o.provider?.type === 'sqlite' && !o.provider.path) problem('OAUTH_CONFIG', ['oauth', 'provider'], 'provider type sqlite needs a path');
  if (o.provider?.type === 'postgres') {
    if (!o.provider.url) problem('OAUTH_CONFIG', ['oauth', 'provider'], 'provider type postgres needs url: ${DATABASE_URL}');
    if (!o.provider.key_secret) problem('OAUTH_CONFIG', ['oauth', 'provider'], 'provider type postgres needs key_secret (e.g. ${SVC_OAUTH_KEY_SECRET}, 32+ random characters), the same on every replica');
  }
  if (o.login?.mode === 'auto' && issuer && !isLoopbackUrl(issuer)) {
    problem('OAUTH_CONFIG', ['oauth', 'login', 'mode'], `login mode auto approves every request without a page; it is allowed only for a loopback issuer, not ${issuer}`);
  }
  if (o.login?.mode === 'users' && !(o.users?.length)) problem('OAUTH_CONFIG', ['oauth', 'users'], 'login mode users needs at least one user');
  unique((o.users ?? []).map((u) => u.username), ['oauth', 'users'], 'user', problem);
  unique((o.clients ?? []).map((c) => c.client_id), ['oauth', 'clients'], 'client', problem);
  o.users?.forEach((u, i) => checkScopes(u.scopes, ['oauth', 'users', i, 'scopes'], `user ${u.username}`));
  o.clients?.forEach((c, i) => {
    checkScopes(c.scopes, ['oauth', 'clients', i, 'scopes'], `client ${c.client_id}`);
    if (c.client_secret && c.client_secret_file) problem('OAUTH_CONFIG', ['oauth', 'clients', i], `client ${c.client_id}: give client_secret or client_secret_file, not both`);
    c.redirect_uris.forEach((u, j) => {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(u) || u.includes('#')) problem('OAUTH_CONFIG', ['oauth', 'clients', i, 'redirect_uris', j], `redirect URI ${u} must be absolute and have no fragment`);
    });
  });
  const clients = new Set((o.clients ?? []).map((c) => c.client_id));
  for (const p of enterpriseIssuerProblems(o.enterprise_issuers ?? [], clients, scopes)) problem(p.code, p.path, p.message);
  for (const p of signInProblems(o.login, scopes)) problem(p.code, p.path, p.message);
}

/** Each {{arg}} of the scope patterns, with the index of the scope it is in. */
function placeholders(list: readonly string[] | undefined): [string, number][] {
  return (list ?? []).flatMap((s, i) => (isPattern(s) ? compilePattern(s).args.map((a): [string, number] => [a, i]) : []));
}

const UNSAFE_SAMPLES = ['', 'a.b', 'a:b', 'a b', 'a/b', '*', 'a{b', 'a\nb', '..', 'a,b'];

/** An anchored pattern that refuses the characters that would let one scope segment become another scope. */
function safePattern(pattern: unknown): boolean {
  if (typeof pattern !== 'string' || !pattern.startsWith('^') || !pattern.endsWith('$')) return false;
  try {
    const re = new RegExp(pattern, 'u');
    return UNSAFE_SAMPLES.every((s) => !re.test(s));
  } catch {
    return false;
  }
}

function checkNames(text: string, known: ReadonlySet<string>, path: Path, who: string, problem: (c: ErrorCode, p: Path, m: string) => void): void {
  for (const name of compileTemplate(text).names) {
    if (!known.has(name)) problem('TEMPLATE_ARG_UNKNOWN', path, `${who}: template uses {{${name}}}, which is not defined (${known.size ? 'known: ' + [...known].join(', ') : 'nothing is defined'})`);
  }
}

function walkStrings(v: unknown, path: Path, fn: (s: string, p: Path) => void): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v)) v.forEach((x, i) => walkStrings(x, [...path, i], fn));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walkStrings(x, [...path, k], fn);
}

function unique(names: readonly string[], path: Path, what: string, problem: (c: ErrorCode, p: Path, m: string) => void): void {
  const seen = new Map<string, number>();
  names.forEach((n, i) => {
    if (seen.has(n)) problem('DUPLICATE_NAME', [...path, i], `${what} ${n} is declared twice (first at index ${seen.get(n)})`);
    else seen.set(n, i);
  });
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
