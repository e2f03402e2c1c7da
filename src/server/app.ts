// createApp: assembles the Express application from a FastSvc and a
// SvcServerConfig. Guarantees: the manifest's routes decide what is public,
// protected or absent (absent → 404); DNS-rebinding checks run before any route;
// protected routes run the auth gate before the transport and hand it
// res.locals.principal; public routes get the anonymous principal, which holds no
// scope (so only capabilities without required_scopes are usable there); tokens
// in the query string are refused; the OAuth engine sees only its own paths (it never
// calls next()); the server's direct paths (handler: POST /mcp, POST /svc/tools/NAME)
// run the same transport handlers as the Express routes and hand every request they
// would refuse to the Express app. The live policy (catalog, profile, bearer tokens)
// is one PolicyStore shared by the runtime, the auth gate and the public routes; the
// guard takes one snapshot per request, authenticates with it and hands it to the
// transport as res.locals.policy (the direct paths pass it as an argument), so the
// bearer check and the runtime's decision use the same policy. The app's Observer
// (audit log per `audit`, metrics when /metrics is routed, tracing when an OpenTelemetry
// SDK is registered) is shared by the runtime, the front door and the OAuth server.
// Access tokens (auth/access-verifier.ts) come from the built-in OAuth server and the
// external issuers (external_issuers), and whenever either exists the protected-resource
// metadata (RFC 9728) is served, listing every issuer whose tokens are accepted and, as the
// scopes a 401 asks for, only those some issuer can grant (policy/callers.ts issuedScopes).
// Upstream MCP servers (config.upstreams) are connected before anything else is built — start-up
// waits for each at most its connect_timeout_ms, and /readyz answers 503 meanwhile — so the first
// catalog holds what they serve; their later changes reach the store through gateway.ts's swap, and
// close() ends them (stdio children included). With upstreams, the pin lock beside the manifest
// (svc.lock.json) is read before the first catalog — a corrupt one fails start-up, LOCK_INVALID —
// and watched once started, so `fastsvc upstreams accept` applies through the same swap.
// MCP 2025 sessions on /mcp live in a SessionStore when other processes serve them too — the PostgreSQL
// provider's or the manifest's `state` (PostgresSessionStore, closed by close(); tasks and limits.shared quotas
// live there too, and /readyz reports it unreachable as it does the provider), or the one a worker is handed (opts.sessionStore,
// closed by its owner; close() first waits for the messages being stored, or given up and logged) — so any
// replica or worker answers any request of any session; without either
// they live in this process alone, as the registry keeps them.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import express, { type Application, type NextFunction, type Request, type Response } from 'express';
import expressWs from 'express-ws';
import { buildCatalog, type Catalog } from '../core/catalog.js';
import { logDiscovery } from '../catalog/discovery.js';
import { viewOf } from '../catalog/endpoint-view.js';
import type { FastSvc } from '../core/fast-svc.js';
import { resolveConfig, profileScopes, type ResolvedConfig, type SvcServerConfig } from '../core/config.js';
import { SvcError } from '../errors.js';
import { logger as rootLogger, type Logger } from '../log.js';
import { Runtime } from '../runtime/runtime.js';
import { TokenTable } from '../auth/bearer.js';
import { watchTokenFiles } from './token-files.js';
import { PolicyStore, type PolicySnapshot } from '../policy/store.js';
import { createGate, type AuthGate } from '../auth/gate.js';
import type { Principal } from '../core/types.js';
import { oauthServerFromConfig } from '../auth/oauth/server-from-config.js';
import { externalIssuersFromConfig } from '../auth/external/issuers-from-config.js';
import { createAccessVerifier } from '../auth/access-verifier.js';
import { endpointResources } from '../auth/resource-metadata.js';
import { parseByteSize } from '../util/bytes.js';
import { svcTransport } from '../transports/svc-rest.js';
import { mountMcp } from '../transports/mcp-http.js';
import { mountWs } from '../transports/ws.js';
import { SessionRegistry } from '../mcp/sessions.js';
import { followStore } from '../mcp/shared-sessions.js';
import type { SessionStore } from '../sessions/session-store.js';
import { PostgresSessionStore } from '../sessions/postgres-store.js';
import { TaskEngine } from '../tasks/engine.js';
import { PostgresTaskStore } from '../tasks/postgres-store.js';
import { PostgresOAuthProvider } from '../auth/oauth/providers/postgres-provider.js';
import { SharedQuotas } from '../policy/shared-quotas.js';
import { stateStoreFromConfig } from './state-from-config.js';
import type { QuotaCounter } from '../policy/quotas.js';
import type { SharedTaskStore } from '../tasks/task-store.js';
import type { AuditSink } from '../observe/audit-sink.js';
import { inputRoundsFor } from '../mcp/input-rounds.js';
import { errorHandler, sendError } from '../transports/http-errors.js';
import { corsHandler } from '../http/cors.js';
import { callerResolver, forwardedBase } from '../http/forwarded.js';
import { createFrontDoor } from '../transports/front-door.js';
import { createEndpointDoor } from '../transports/endpoint-door.js';
import { hostPolicy, hostRefusal } from '../http/host-check.js';
import { publicHandlers, type ServerStatus } from '../transports/public-routes.js';
import { Observer } from '../observe/observer.js';
import { issuedScopes } from '../policy/callers.js';
import { createAudit } from '../observe/audit.js';
import { Metrics } from '../observe/metrics.js';
import { packageVersion } from '../util/package-root.js';
import type { UpstreamSet } from '../upstreams/upstream-set.js';
import type { UpstreamSpec } from '../upstreams/spec.js';

export const VERSION: string = packageVersion();

export interface AppHandle {
  app: Application;
  /** The request listener serve() installs: the Express app, with a direct path for POST /mcp. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  runtime: Runtime;
  /** The live policy: hand it to createReloader, read current() for the catalog, profile and tokens. */
  store: PolicyStore;
  gate: AuthGate;
  /** Audit log, metrics, tracing: hand it to createReloader. */
  observer: Observer;
  /** Every task (all transports); serve()'s drain cancels what is still running at drain_timeout_ms. */
  tasks: TaskEngine;
  /** Every live MCP session, on /mcp and /ws. */
  sessions: SessionRegistry;
  /** The start-up config; its live parts (profile, auth tokens) may since have been replaced in store. */
  config: ResolvedConfig;
  status: ServerStatus;
  logger: Logger;
  /** The public base URL (config.base_url, or the listening address). */
  baseUrl(): string;
  /**
   * The catalog a generation serves: its FastSvc, plus what the running upstreams import under its `upstreams`
   * entries' expose rules (matched by name; the connections themselves are the start-up ones). The reloader builds with it.
   */
  catalogFor(svc: FastSvc, upstreams: readonly UpstreamSpec[], hash: string | undefined): Catalog;
  /** End long-lived streams (MCP GET streams, WebSockets) so a drain waits only for real requests. */
  closeStreams(): void;
  close(): Promise<void>;
}

export interface CreateAppOptions {
  /** The http.Server the app will run on; needed for /ws. Without it, use app.listen(). */
  server?: Server;
  logger?: Logger;
  /** A token to use when auth.generate_if_unset applies (keeps it stable across reloads). */
  generatedToken?: string;
  /** The listening socket's URL (serve() knows it): the base URL when base_url is unset. */
  listenUrl?: string;
  /** This app is one worker of `server.workers` (worker-link.ts builds these): what it shares with the others. */
  worker?: WorkerParts;
  /**
   * Where the /mcp 2025 sessions live when other processes serve them too (a worker of `server.workers`: the SQLite
   * store the workers share). The caller closes it. Absent: the PostgreSQL store (the provider's or `state`), else none (one process).
   */
  sessionStore?: SessionStore;
}

/** What a worker of `server.workers` shares with the others, through its primary and the SQLite file they share. */
export interface WorkerParts {
  /** Tasks any worker reads and cancels (absent on PostgreSQL — the OAuth provider's or `state`: its task store then). */
  tasks?: SharedTaskStore;
  /** Request quotas counted once across the workers (absent on PostgreSQL — the OAuth provider's or `state`: SharedQuotas then). */
  quotas?: QuotaCounter;
  /** The /metrics answer: every worker's metrics summed (the primary asks them all). */
  metrics(): Promise<{ body: string; contentType: string }>;
  /** Where audit lines go (the primary's one sink); absent: audit.to itself (a file with fsync: always, appended by each worker). */
  auditSink?: AuditSink;
  /** Told which worker answered: set as the `fastsvc-worker` header (its pid) on every response. */
  id: string;
}

export async function createApp(svc: FastSvc, config: SvcServerConfig, opts: CreateAppOptions = {}): Promise<AppHandle> {
  const log = opts.logger ?? rootLogger;
  const cfg = resolveConfig(config);
  // Upstreams first (start-up waits for each at most its connect_timeout_ms): the first catalog holds what they serve.
  const specs = cfg.upstreams as UpstreamSpec[];
  const parts = specs.length ? await import('./gateway-parts.js') : undefined;
  const upstreams = parts && new parts.UpstreamSet(specs.map((u) => parts.resolveUpstream(u, cfg.base_dir)), log, cfg.base_dir, cfg.server.drain_timeout_ms);
  try {
    await upstreams?.start();
    return await assembleApp(svc, cfg, opts, log, parts && upstreams && { parts, upstreams });
  } catch (e) {
    await upstreams?.close();
    throw e;
  }
}

/** A server's upstreams, connected, and the modules that serve them (loaded only when there are upstreams). */
interface WithUpstreams {
  parts: typeof import('./gateway-parts.js');
  upstreams: UpstreamSet;
}

async function assembleApp(svc: FastSvc, cfg: ResolvedConfig, opts: CreateAppOptions, log: Logger, gw: WithUpstreams | undefined): Promise<AppHandle> {
  const upstreams = gw?.upstreams;
  const tokens = cfg.auth ? TokenTable.build(cfg.auth, profileScopes(cfg.profile), log, undefined, opts.generatedToken) : undefined;
  // Metrics are collected only when /metrics is served (listed in routes), so removing the route turns them off.
  let sessions: SessionRegistry | undefined;
  const isPublic = (r: string) => cfg.routes.public.includes(r);
  const isProtected = (r: string) => cfg.routes.protected.includes(r);
  const metrics = isPublic('/metrics') || isProtected('/metrics') ? new Metrics({
    sessions: (t) => sessions?.count(t) ?? 0, tasks: () => tasks.counts().running, ...(upstreams && { upstreams: () => upstreams.status() }),
  }, cfg.config_hash) : undefined;
  if (metrics && upstreams) upstreams.observe((name, method, seconds, outcome) => metrics.upstreamCall(name, method, seconds, outcome));
  const observer = new Observer(createAudit(cfg.audit, opts.worker?.auditSink), metrics);
  // The pin lock beside the manifest (none for an app built in code: a pinned upstream then serves nothing), read before the first catalog.
  const lockFile = gw && cfg.manifest_path ? gw.parts.lockPathFor(cfg.manifest_path) : undefined;
  const lockRead = gw && lockFile ? gw.parts.readLockFile(lockFile) : {};
  const listPage = { size: cfg.server.list_page_size, bytes: cfg.server.list_page_bytes };
  const gateway = gw && new gw.parts.GatewayCatalog(gw.upstreams, log, listPage, { lock: lockRead.lock, audit: observer.audit });
  const catalogFor = (s: FastSvc, ups: readonly UpstreamSpec[], hash: string | undefined): Catalog => gateway
    ? gateway.build(s, ups, hash)
    : buildCatalog(s, { hash, listPage });
  const store = new PolicyStore({ catalog: catalogFor(svc, cfg.upstreams as UpstreamSpec[], cfg.config_hash), profile: cfg.profile, tokens }, log);
  const detachGateway = gateway?.attach(store);
  // How each endpoint lists its tools (discovery), logged at start-up and whenever tools or endpoints change.
  const logEndpoints = () => {
    const cat = store.current().catalog;
    logDiscovery(log, cat);
    for (const name of cat.endpoints?.keys() ?? []) logDiscovery(log, viewOf(cat, name), name);
  };
  logEndpoints();
  const unlogDiscovery = store.onChange((c) => (c.tools || c.before?.endpoints !== c.after?.endpoints) && logEndpoints());
  const unwatchTokens = watchTokenFiles(store, log);
  const listenUrl = opts.listenUrl ?? `http://${cfg.server.host}:${cfg.server.port}`;
  const baseUrl = () => cfg.base_url ?? listenUrl;
  const caller = callerResolver(cfg.server.trust_proxy);
  // The named endpoints as protected resources (RFC 9728, RFC 8707 audiences), read from the live policy.
  const endpointRes = endpointResources(new URL(baseUrl()).origin, cfg.routes.protected, () => store.current().catalog.endpoints?.keys());
  const oauth = await oauthServerFromConfig(cfg, { baseUrl: baseUrl(), logger: log, name: svc.name, caller, observer, endpoints: endpointRes });
  // Where replicas share sessions, tasks and quotas: the OAuth provider's PostgreSQL, else the manifest's `state`.
  let state: PostgresOAuthProvider | undefined;
  try {
    state = await stateStoreFromConfig(cfg, oauth?.provider, log);
  } catch (e) {
    await oauth?.close();
    throw e;
  }
  const shared = oauth?.provider instanceof PostgresOAuthProvider ? oauth.provider : state;
  // limits.shared: request quotas counted in the shared database, across replicas; workers always share theirs.
  if (svc.limits?.shared && !shared && !opts.worker) throw new SvcError('OAUTH_CONFIG', 'limits.shared needs state (type postgres) or oauth.provider.type postgres', { path: '/limits/shared' });
  const quotas = (svc.limits?.shared || opts.worker) && shared ? new SharedQuotas(shared) : opts.worker?.quotas;
  const runtime = new Runtime(store, { inlineLimit: cfg.server.inline_limit, logger: log, observer, ...(quotas && { quotas }) });
  let external;
  try {
    external = await externalIssuersFromConfig(cfg, { logger: log, builtinIssuer: oauth?.issuer, endpoints: endpointRes });
  } catch (e) {
    await oauth?.close();
    await state?.close();
    throw e;
  }
  const verifier = oauth || external
    ? createAccessVerifier({ builtin: oauth, external, origin: new URL(baseUrl()).origin, routes: cfg.routes.protected, scopes: issuedScopes(cfg), name: svc.name, endpoints: endpointRes })
    : undefined;
  const gate = createGate({ policy: () => store.current(), oauth: verifier, realm: svc.name });
  const status: ServerStatus = { ready: false, draining: false, started_at: new Date().toISOString() };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Without a server, express-ws makes one and app.listen() uses it, so /ws works there too.
  const wss = expressWs(app, opts.server).getWss();

  // One front-door layer for every request: a well-formed Host, tokens only in headers, then Host/Origin.
  const ipOf = (req: IncomingMessage) => caller(req).ip;
  const door = createFrontDoor({ refusal: hostRefusal(hostPolicy(cfg.server)), gate, store, log, ipOf, isProtected, observer });
  app.use(door.middleware());
  // CORS (server.cors) after the Origin check, before any auth: it answers preflights itself.
  const cors = corsHandler(cfg.server.cors);
  if (cors) app.use((req: Request, res: Response, next: NextFunction) => void (cors(req, res) || next()));

  const guard = door.guard;
  // Named endpoints (/mcp/NAME, /ws/NAME, /svc/NAME/…): one door for every transport; names are looked up in the live policy.
  const endpointDoor = createEndpointDoor({ door, gate, store, log, observer });

  // The transports first: the hot paths match after one layer. Their paths never
  // overlap the OAuth engine's, which handles only its own paths.
  const bodyLimit = parseByteSize(cfg.server.body_limit);
  // Tasks live in the shared PostgreSQL database, so every replica reads and cancels them; workers share theirs otherwise.
  const taskStore = shared
    ? new PostgresTaskStore(shared, (e) => log.warn({ event: 'task.store_error', err: (e as Error).message }, 'a task change was not saved to PostgreSQL'))
    : opts.worker?.tasks;
  const tasks: TaskEngine = new TaskEngine({
    runtime, logger: log, observer, ...(taskStore && { store: taskStore }), ttlMs: cfg.server.task_ttl_ms, pollIntervalMs: cfg.server.task_poll_interval_ms,
    maxRunning: cfg.server.task_max_running, maxRunningPerPrincipal: cfg.server.task_max_running_per_principal,
  });
  const svcT = isPublic('/svc') || isProtected('/svc') ? svcTransport({ runtime, gate, logger: log, bodyLimit, tasks, publicRoutes: cfg.routes.public, ipOf }) : undefined;
  if (svcT) {
    app.use('/svc/:endpoint', endpointDoor.serve('/svc', svcT.router));
    app.use('/svc', guard('/svc'), svcT.router);
  }
  // 2025 sessions live beside the tasks on PostgreSQL, so every replica serves every session; a worker is handed its store.
  const pgSessions = !opts.sessionStore && shared
    ? new PostgresSessionStore(shared, { keepEvents: cfg.server.mcp_session_events, onError: (e) => log.warn({ event: 'session.store_error', err: (e as Error).message }, 'an MCP session signal was not delivered') })
    : undefined;
  const sessionStore = opts.sessionStore ?? pgSessions;
  sessions = new SessionRegistry({ logger: log, idleMs: cfg.server.mcp_session_idle_ms, maxSessions: cfg.server.mcp_max_sessions, ...(sessionStore && { store: sessionStore, retryMs: cfg.server.drain_timeout_ms }) });
  if (sessionStore) followStore(sessions, log);
  // Registered before any session's own change listener: a session its endpoint's door now refuses ends before it hears of the change.
  const unguardSessions = endpointDoor.guardSessions(sessions);
  const rounds = inputRoundsFor(cfg.server, cfg.base_dir);
  const mcp = isPublic('/mcp') || isProtected('/mcp') ? mountMcp(app, { runtime, gate, config: cfg, logger: log, sessions, rounds, tasks, guard: guard('/mcp'), ipOf, endpoints: endpointDoor }) : undefined;
  if (isPublic('/ws') || isProtected('/ws')) mountWs(app, { runtime, gate, door, ipOf, store, config: cfg, logger: log, wss, sessions, rounds, tasks, endpoints: endpointDoor });
  verifier?.metadata.mount(app); // protected-resource metadata: every accepted issuer
  oauth?.mount(app); // discovery, OAuth endpoints, login/consent pages: no body parser of ours runs before them
  oauth?.onRevoked((grantId) => sessions.credentialRevoked(grantId)); // on every replica sharing the store

  const handlers = publicHandlers({
    policy: () => store.current(),
    config: cfg,
    status,
    authMode: () => [tokens && 'bearer', oauth && 'oauth', external && 'external'].filter(Boolean).join('+') || 'none',
    baseUrl,
    publicBaseUrl: (req) => cfg.base_url ?? forwardedBase(caller(req), req.headers.host) ?? listenUrl,
    version: VERSION,
    storeReachable: (oauth || state) && (() => (oauth?.reachable() ?? true) && (state?.reachable() ?? true)),
    runningTasks: () => tasks.counts().running,
    ...(gateway && { upstreams: () => gateway.status() }),
  });
  for (const [route, handler] of Object.entries(handlers)) {
    if (isPublic(route) || isProtected(route)) app.get(route, guard(route), handler);
    // Each named endpoint's page, under /docs's own access.
    if (route === '/docs' && (isPublic(route) || isProtected(route))) app.get('/docs/:endpoint', guard(route), handler);
  }
  if (metrics) {
    app.get('/metrics', guard('/metrics'), (_req, res, next) => {
      (opts.worker?.metrics() ?? metrics.text()).then(({ body, contentType }) => res.type(contentType).set('cache-control', 'no-store').send(body), next);
    });
  }

  app.use((req, res) => sendError(res, new SvcError('NOT_FOUND', `no route ${req.method} ${req.path}`)));
  app.use(errorHandler(log, gate));

  // The direct paths: a clean POST /mcp or POST /svc/tools/NAME (no query string,
  // allowed Host and Origin, a valid token) skips Express's router and goes straight
  // to the transport's handler, which uses only Node's request/response API — the
  // same handler the Express route runs. Everything else, every refusal included,
  // goes through the Express app, so each error is produced in one place.
  // A static token, a cached OAuth token (or a public route) is decided at once; anything else waits for admit().
  const direct = (route: string, req: IncomingMessage, res: ServerResponse, run: (p: Principal, snap: PolicySnapshot) => Promise<void>) => {
    const snap = store.current();
    const now = door.admitNow(req, route, snap);
    if (now) return void run(now, snap);
    void door.admit(req, route, snap, true).then((r) => (r instanceof SvcError ? app(req, res) : run(r, snap)));
  };
  const directMcp = (req: IncomingMessage, res: ServerResponse) => direct('/mcp', req, res, (p, snap) => mcp!.post(req, res, p, snap.catalog));
  const directTool = (req: IncomingMessage, res: ServerResponse, name: string) => direct('/svc', req, res, (p, snap) => svcT!.callTool(req, res, p, name, snap.catalog));
  const TOOLS = '/svc/tools/';
  const workerId = opts.worker?.id;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (workerId) res.setHeader('fastsvc-worker', workerId);
    const url = req.url ?? '';
    if (req.method === 'POST' && !door.refuse(req)) {
      // A POST is never a preflight: cors only adds its headers (the Express layer does the same).
      if (mcp && url === '/mcp') {
        cors?.(req, res);
        return void directMcp(req, res);
      }
      if (svcT && url.startsWith(TOOLS) && /^[A-Za-z0-9_.-]+$/.test(url.slice(TOOLS.length))) {
        cors?.(req, res);
        return void directTool(req, res, url.slice(TOOLS.length));
      }
    }
    app(req, res);
  };

  // The lock file is watched only now, from the bytes read above: a start-up that fails leaves no watcher behind.
  const lockWatch = gw && lockFile && gateway ? gw.parts.watchLock({ file: lockFile, initialHash: lockRead.hash, logger: log, onChange: (lock) => gateway.setLock(lock) }) : undefined;
  status.ready = true;
  return {
    app, handler, runtime, store, gate, observer, sessions, tasks, config: cfg, status, logger: log, baseUrl, catalogFor,
    closeStreams() {
      sessions.endChannels('mcp');
      mcp?.closeStreams();
      sessions.close('ws');
    },
    async close() {
      sessions.close();
      await sessions.settled(); // messages still being stored: stored, or given up and logged, before the store closes
      await pgSessions?.close();
      tasks.close();
      await lockWatch?.close();
      detachGateway?.();
      unlogDiscovery();
      unguardSessions();
      await upstreams?.close();
      unwatchTokens();
      await oauth?.close();
      await state?.close();
      observer.close();
    },
  };
}
