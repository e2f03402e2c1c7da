// The corporate IdP's configuration: the built-in directory of Acme Corp (people and
// applications) and how a --config JSON file changes it. Guarantees: every section a file
// leaves out keeps its default; a section a file gives replaces the default section whole
// (accounts, clients, resources), except `clients`, which is merged by client_id so a file
// can change one application (e.g. the redirect URIs of `fastsvc-login`) and keep the others;
// a confidential client without a secret gets a random one at start-up (GET /admin/clients
// shows it); a config with an unknown key or a malformed value is refused at start-up.
//
// The file (every key optional):
//   { "issuer_path": "/realms/acme",          // the issuer's path ("" by default: the origin)
//     "signing_alg": "RS256",                 // RS256 | PS256 | ES256, for ID tokens and JWT access tokens
//     "password": "…",                        // the one test password every account signs in with
//     "access_token_ttl": 300,                // seconds
//     "default_format": "jwt",                // format for a resource not registered: jwt | opaque
//     "default_resource": "https://…",        // resource assumed when a token request names none
//     "accounts": [{ "sub", "username", "email", "email_verified", "name", "groups", "org_id" }],
//     "clients":  [oidc-provider client metadata, e.g. { "client_id", "client_secret", "redirect_uris", … }],
//     "resources": [{ "resource": "http://…/mcp", "format": "jwt" | "opaque", "scopes": [...], "ttl": 60 }] }

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SUPPORTED_ALGS } from './keys.mjs';

export const DEFAULT_PASSWORD = 'acme-test-password';

/** Acme Corp's people. `sub` is a stable directory id, never the e-mail address. */
export const DEFAULT_ACCOUNTS = [
  { sub: 'acme-1001', username: 'ada@acme.example', email: 'ada@acme.example', email_verified: true, name: 'Ada Lovelace', groups: ['mcp-admins', 'staff'], org_id: 'acme' },
  { sub: 'acme-1002', username: 'grace@acme.example', email: 'grace@acme.example', email_verified: true, name: 'Grace Hopper', groups: ['staff'], org_id: 'acme' },
  // An address the IdP never verified: claims acme's domain without proof of owning it.
  { sub: 'acme-1003', username: 'mallory@acme.example', email: 'mallory@acme.example', email_verified: false, name: 'Mallory Mallet', groups: ['staff'], org_id: 'acme' },
  // Another tenant of the same IdP.
  { sub: 'evil-6666', username: 'eve@evil.example', email: 'eve@evil.example', email_verified: true, name: 'Eve Evildoer', groups: [], org_id: 'evil' },
];

/** Acme Corp's applications. Secrets left out are generated at start-up. */
export const DEFAULT_CLIENTS = [
  {
    // fastsvc's upstream login (`oauth.login.mode: upstream`): a confidential web application.
    // Its redirect URIs are exact; tests point them at a fastsvc on a random port through
    // --config, the --redirect-uri flag, or PUT /admin/clients/fastsvc-login.
    client_id: 'fastsvc-login',
    client_name: 'fastsvc',
    redirect_uris: ['http://127.0.0.1/oauth/upstream/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    // A resource server (fastsvc in resource-server mode) calling /introspect for opaque tokens.
    client_id: 'fastsvc-rs',
    client_name: 'fastsvc resource server',
    redirect_uris: [],
    grant_types: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    // A machine: client_credentials only.
    client_id: 'build-bot',
    client_name: 'Acme build bot',
    redirect_uris: [],
    grant_types: ['client_credentials'],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    // A gateway calling backends (fastsvc's outbound credentials): its own token by client_credentials,
    // and a caller's token exchanged for one of the backend's audience (RFC 8693, token-exchange.mjs).
    client_id: 'fastsvc-gateway',
    client_name: 'fastsvc gateway',
    redirect_uris: [],
    grant_types: ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  {
    // A public native client (an MCP client, a CLI): code + PKCE, any loopback port (RFC 8252).
    client_id: 'mcp-cli',
    client_name: 'Acme MCP CLI',
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
];

const KEYS = new Set(['issuer_path', 'signing_alg', 'password', 'access_token_ttl', 'default_format', 'default_resource', 'accounts', 'clients', 'resources']);
const FORMATS = new Set(['jwt', 'opaque']);

function fail(msg) {
  throw new Error(`idp config: ${msg}`);
}

/** A confidential client without a secret gets one. */
export function withSecret(client) {
  if (client.token_endpoint_auth_method === 'none' || client.client_secret) return { ...client };
  return { ...client, client_secret: randomBytes(24).toString('base64url') };
}

export function checkResource(r) {
  if (!r || typeof r.resource !== 'string' || !URL.canParse(r.resource)) fail(`resource ${JSON.stringify(r?.resource)} is not an absolute URL`);
  if (r.format !== undefined && !FORMATS.has(r.format)) fail(`resource ${r.resource}: format must be jwt or opaque`);
  if (r.scopes !== undefined && !(Array.isArray(r.scopes) && r.scopes.every((s) => typeof s === 'string'))) fail(`resource ${r.resource}: scopes must be a list of strings`);
  if (r.ttl !== undefined && !(Number.isSafeInteger(r.ttl) && r.ttl > 0)) fail(`resource ${r.resource}: ttl must be a positive integer`);
  return { resource: r.resource, format: r.format, scopes: r.scopes, ttl: r.ttl };
}

/** The configuration in force: defaults, then the file (if any), then --redirect-uri flags. */
export function loadConfig(file, { redirectUris = [] } = {}) {
  const given = file ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (!given || typeof given !== 'object' || Array.isArray(given)) fail('the file must hold a JSON object');
  for (const k of Object.keys(given)) if (!KEYS.has(k)) fail(`unknown key ${k}`);
  const c = {
    issuer_path: given.issuer_path ?? '',
    signing_alg: given.signing_alg ?? 'RS256',
    password: given.password ?? DEFAULT_PASSWORD,
    access_token_ttl: given.access_token_ttl ?? 300,
    default_format: given.default_format ?? 'jwt',
    default_resource: given.default_resource,
    accounts: given.accounts ?? DEFAULT_ACCOUNTS,
    resources: (given.resources ?? []).map(checkResource),
  };
  if (c.issuer_path && !/^(\/[A-Za-z0-9._~-]+)+$/.test(c.issuer_path)) fail('issuer_path must look like /realms/acme (no trailing slash)');
  if (!SUPPORTED_ALGS.includes(c.signing_alg)) fail(`signing_alg must be one of ${SUPPORTED_ALGS.join(', ')}`);
  if (typeof c.password !== 'string' || !c.password) fail('password must be a non-empty string');
  if (!(Number.isSafeInteger(c.access_token_ttl) && c.access_token_ttl > 0)) fail('access_token_ttl must be a positive integer');
  if (!FORMATS.has(c.default_format)) fail('default_format must be jwt or opaque');
  if (c.default_resource !== undefined && !URL.canParse(c.default_resource)) fail('default_resource must be an absolute URL');
  for (const a of c.accounts) {
    if (typeof a.sub !== 'string' || !a.sub || typeof a.username !== 'string' || !a.username) fail('every account needs a sub and a username');
  }
  const byId = new Map(DEFAULT_CLIENTS.map((cl) => [cl.client_id, cl]));
  for (const cl of given.clients ?? []) {
    if (!cl || typeof cl.client_id !== 'string' || !cl.client_id) fail('every client needs a client_id');
    byId.set(cl.client_id, { ...byId.get(cl.client_id), ...cl });
  }
  if (redirectUris.length) byId.set('fastsvc-login', { ...byId.get('fastsvc-login'), redirect_uris: redirectUris });
  c.clients = [...byId.values()].map(withSecret);
  return c;
}
