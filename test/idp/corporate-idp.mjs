#!/usr/bin/env node
// "The corporate IdP": a standalone OpenID Provider for fastsvc's tests, playing Acme Corp's
// identity provider — the external authorization server whose tokens fastsvc accepts in
// resource-server mode, and the upstream OIDC provider people sign in through
// (`oauth.login.mode: upstream`). Run it as a separate process:
//
//   node test/idp/corporate-idp.mjs [--port 0] [--host 127.0.0.1] [--config FILE] [--redirect-uri URI]...
//
// When ready it prints one line on stdout, `listening on http://127.0.0.1:PORT`; the issuer
// is that origin plus the config's issuer_path. JSON log lines (never a token, code or secret)
// go to stderr. SIGTERM or SIGINT closes it. Loopback only: any other --host is refused.
//
// Why node-oidc-provider (panva, already a dependency) and not oauth2-mock-server: this one is
// a certified OpenID Provider — discovery, real client authentication, its own sign-in page
// (ours, through its interactions), resource indicators giving JWT (RFC 9068) or opaque access
// tokens, RFC 7662 introspection that answers from its token store, revocation, refresh,
// client_credentials, dynamic registration — and it runs on Node 20. oauth2-mock-server
// signs JWTs only (no opaque tokens), its /authorize redirects straight back without any
// sign-in page, its introspection answers whatever a hook says, it accepts any client and
// secret, and its current release wants Node 22. The cost: fastsvc's own authorization server
// is built on the same library, so a bug common to both could hide; the resource-server side
// is checked with jose and oauth4webapi, not with oidc-provider.
//
// Configuration (directory, applications, resources): see idp-config.mjs. The sign-in page:
// login-pages.mjs. What the tokens carry: idp-provider.mjs.
//
// Admin API (loopback, JSON, refused when a browser's Origin header is present):
//   GET  /admin/clients                      → { clients: [metadata with secrets] }
//   POST /admin/clients {client_id, …}       → upsert, merged onto the client of that id → { client }
//   POST /admin/resources {resource, format?, scopes?, ttl?} → register or replace a resource server
//   POST /admin/rotate                       → a new current signing key; earlier ones stay published → { kid, kids }
//   POST /admin/retire                       → drop every key but the current one → { dropped, kids }
//   POST /admin/faults {endpoint, status?, delay_ms?} → endpoint (jwks | introspection | token |
//        discovery | userinfo | authorization) answers `status` (no body) and/or after delay_ms;
//        {endpoint} alone clears it; DELETE /admin/faults clears all → { faults }
//   POST /admin/revoke {token}               → forget an opaque access/refresh token (introspection
//        says active:false, userinfo refuses it) → { revoked: kind }; 404 unknown; 400 for a JWT
//   GET  /admin/stats                        → { requests: {endpoint: count} }

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { checkResource, loadConfig, withSecret } from './idp-config.mjs';
import { ROUTES, buildProvider } from './idp-provider.mjs';
import { createKeys } from './keys.mjs';
import { loginPages } from './login-pages.mjs';
import { createStore } from './memory-store.mjs';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const ENDPOINTS = { jwks: ROUTES.jwks, introspection: ROUTES.introspection, token: ROUTES.token, userinfo: ROUTES.userinfo, authorization: ROUTES.authorization, revocation: ROUTES.revocation, registration: ROUTES.registration };

const log = (o) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...o })}\n`);

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    config: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true, default: [] },
  },
});
if (!LOOPBACK.has(args.host)) {
  process.stderr.write(`corporate-idp: --host must be a loopback address, not ${args.host}\n`);
  process.exit(2);
}

const config = loadConfig(args.config, { redirectUris: args['redirect-uri'] });
const keys = createKeys(config.signing_alg);
const store = createStore();
const cookieKeys = [randomBytes(32).toString('base64url')];
const resources = new Map(config.resources.map((r) => [r.resource, r]));
const seen = new Map();
const faults = new Map();
const stats = Object.fromEntries([...Object.keys(ENDPOINTS), 'discovery', 'interaction'].map((k) => [k, 0]));

const server = http.createServer();
await new Promise((r) => server.listen(Number(args.port), args.host, r));
const { port } = server.address();
const origin = `http://${args.host.includes(':') ? `[${args.host}]` : args.host}:${port}`;
const issuer = `${origin}${config.issuer_path}`;

let provider;
let callback;
function rebuild(clients = config.clients) {
  const next = buildProvider({ issuer, config: { ...config, clients }, keys, store, cookieKeys, resources, seen, log });
  next.on('server_error', (_ctx, err) => log({ event: 'server_error', error: err.message }));
  next.on('grant.error', (_ctx, err) => log({ event: 'grant.error', error: err.error, detail: err.error_detail }));
  provider = next;
  callback = next.callback();
}
rebuild();
const pages = loginPages({ getProvider: () => provider, config, log });

/** Which endpoint a path (below the issuer path) is, for stats and faults. */
function endpointOf(sub) {
  if (sub.startsWith('/.well-known/')) return 'discovery';
  if (sub.startsWith('/interaction/')) return 'interaction';
  for (const [name, path] of Object.entries(ENDPOINTS)) if (sub === path || (name === 'authorization' && sub.startsWith(`${path}/`))) return name;
  return undefined;
}

async function readJson(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** An opaque token's stored kind, if the store holds it. */
function findOpaque(token) {
  for (const kind of ['AccessToken', 'ClientCredentials', 'RefreshToken']) if (store.get(kind, token)) return kind;
  return undefined;
}

async function admin(req, res, path) {
  if (req.headers.origin) return json(res, 403, { error: 'admin API is not for browsers' });
  const route = `${req.method} ${path}`;
  if (route === 'GET /admin/clients') return json(res, 200, { clients: config.clients });
  if (route === 'GET /admin/stats') return json(res, 200, { requests: stats });
  if (route === 'POST /admin/rotate') {
    const kid = keys.rotate();
    rebuild();
    log({ event: 'keys.rotated', kid });
    return json(res, 200, { kid, kids: keys.kids() });
  }
  if (route === 'POST /admin/retire') {
    const dropped = keys.retire();
    rebuild();
    log({ event: 'keys.retired', dropped });
    return json(res, 200, { dropped, kids: keys.kids() });
  }
  if (route === 'DELETE /admin/faults') {
    faults.clear();
    return json(res, 200, { faults: {} });
  }
  const body = await readJson(req);
  if (route === 'POST /admin/clients') {
    if (typeof body.client_id !== 'string' || !body.client_id) return json(res, 400, { error: 'client_id is required' });
    const merged = withSecret({ ...config.clients.find((c) => c.client_id === body.client_id), ...body });
    const clients = [...config.clients.filter((c) => c.client_id !== body.client_id), merged];
    const before = provider;
    const beforeCallback = callback;
    rebuild(clients);
    try {
      await provider.Client.find(merged.client_id);
    } catch (e) {
      provider = before;
      callback = beforeCallback;
      return json(res, 400, { error: 'invalid_client_metadata', error_description: e.error_description ?? e.message });
    }
    config.clients = clients;
    log({ event: 'client.saved', client_id: merged.client_id });
    return json(res, 200, { client: merged });
  }
  if (route === 'POST /admin/resources') {
    let r;
    try {
      r = checkResource(body);
    } catch (e) {
      return json(res, 400, { error: e.message });
    }
    resources.set(r.resource, r);
    log({ event: 'resource.saved', resource: r.resource, format: r.format });
    return json(res, 200, { resource: r });
  }
  if (route === 'POST /admin/faults') {
    if (!Object.hasOwn(stats, body.endpoint) || body.endpoint === 'interaction') return json(res, 400, { error: `endpoint must be one of ${Object.keys(ENDPOINTS).join(', ')}, discovery` });
    if (body.status === undefined && !body.delay_ms) faults.delete(body.endpoint);
    else faults.set(body.endpoint, { status: body.status, delay_ms: body.delay_ms ?? 0 });
    log({ event: 'fault.set', endpoint: body.endpoint, ...faults.get(body.endpoint) });
    return json(res, 200, { faults: Object.fromEntries(faults) });
  }
  if (route === 'POST /admin/revoke') {
    if (typeof body.token !== 'string' || !body.token) return json(res, 400, { error: 'token is required' });
    if (body.token.split('.').length === 3) return json(res, 400, { error: 'jwt_not_revocable', error_description: 'a JWT access token stays valid until it expires' });
    const kind = findOpaque(body.token);
    if (!kind) return json(res, 404, { error: 'unknown_token' });
    await store.remove(kind, body.token);
    log({ event: 'token.revoked', kind });
    return json(res, 200, { revoked: kind });
  }
  return json(res, 404, { error: 'no such admin route' });
}

async function handle(req, res) {
  const url = new URL(req.url, origin);
  const path = url.pathname;
  if (path.startsWith('/admin/')) return admin(req, res, path);
  // RFC 8414 puts a path issuer's metadata at /.well-known/oauth-authorization-server{path}.
  let sub;
  if (config.issuer_path && path === `/.well-known/oauth-authorization-server${config.issuer_path}`) sub = '/.well-known/oauth-authorization-server';
  else if (path === config.issuer_path || path.startsWith(`${config.issuer_path}/`)) sub = path.slice(config.issuer_path.length) || '/';
  else return json(res, 404, { error: 'not_found' });

  const endpoint = endpointOf(sub);
  if (endpoint) stats[endpoint]++;
  const fault = endpoint && faults.get(endpoint);
  if (fault?.delay_ms) await new Promise((r) => setTimeout(r, fault.delay_ms));
  if (fault?.status) {
    res.writeHead(fault.status, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
    return res.end(`${endpoint} unavailable (fault injected)`);
  }

  const m = /^\/interaction\/([^/]+)(?:\/([a-z]+))?$/.exec(sub);
  if (m) return pages(req, res, m[1], m[2]);
  // oidc-provider learns its mount path from originalUrl minus url: a path-inserted metadata request is answered as
  // if it came through the issuer's path, so the endpoints it lists keep that path.
  req.originalUrl = sub === '/.well-known/oauth-authorization-server' && config.issuer_path ? `${config.issuer_path}${sub}${url.search}` : req.url;
  req.url = `${sub}${url.search}`;
  return callback(req, res);
}

server.on('request', (req, res) => {
  res.on('finish', () => log({ event: 'request', method: req.method, path: new URL(req.originalUrl ?? req.url, origin).pathname, status: res.statusCode }));
  handle(req, res).catch((e) => {
    log({ event: 'error', error: e.message });
    if (!res.headersSent) json(res, 500, { error: 'server_error' });
    else res.destroy();
  });
});

const close = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
process.stdout.write(`listening on ${origin}\n`);
log({ event: 'ready', issuer, kid: keys.current() });
