// startIdp(): "the corporate IdP" (test/idp/corporate-idp.mjs, node-oidc-provider) as a separate
// process on 127.0.0.1, port 0, for tests of fastsvc against an identity provider it did not
// write. Guarantees: it resolves once the IdP printed `listening on …` and answered discovery;
// stop() ends it (SIGTERM, then how it exited); every IdP still running when the test process
// exits is killed and its folder removed, even after a failed test; an IdP that exits or stays
// silent for 20 s before listening rejects with its stderr. Every token, code verifier and
// client secret it hands out is registered with the secret scan (test/helpers/secrets.ts), so a
// fastsvc that logs one fails the run. Driving the sign-in page needs no browser: signIn()
// submits the form with plain HTTP and a cookie jar.
//
// The API (all async except the fields):
//   startIdp(o?: IdpOptions) → Idp, where IdpOptions are the IdP's config keys in camelCase
//     (accounts, clients, resources, issuerPath, signingAlg, password, accessTokenTtl,
//      defaultFormat, defaultResource; see test/idp/idp-config.mjs) plus redirectUris for
//      fastsvc-login.
//   idp.issuer, idp.url (origin), idp.metadata (discovery), idp.password, idp.accounts,
//   idp.clients: client_id → { client_id, client_secret?, redirect_uris } — fastsvc-login
//     (confidential web app for upstream login), fastsvc-rs (introspection), build-bot
//     (client_credentials), fastsvc-gateway (client_credentials and RFC 8693 token exchange:
//     fastsvc's outbound credentials), mcp-cli (public native, code + PKCE, any loopback port).
//   clientCredentialsToken({ scope?, resource?, format?: 'jwt' | 'opaque', clientId? = 'build-bot' })
//   userToken({ username, scope? = 'openid email profile', resource?, format?, clientId? = 'mcp-cli' })
//     → the token response plus idTokenClaims (code + PKCE through the sign-in page).
//   refresh(refreshToken, { resource?, format?, clientId? = 'mcp-cli' }) → a new token response.
//   signIn(authorizationUrl, username, { password?, jar? }) → the URL the IdP redirected back to
//     (the client's redirect_uri with code, state and iss — or error).
//   introspect(token, clientId? = 'fastsvc-rs') → the RFC 7662 answer.
//   rotateKey() → { kid, kids }; retireKeys() → { dropped, kids }.
//   jwksDown(on); fault(endpoint, { status?, delayMs? } | null) for jwks, introspection, token,
//     discovery, userinfo, authorization, revocation, registration.
//   revoke(token) (opaque tokens; a JWT cannot be revoked) ; saveClient(metadata) → the client
//     (merged onto the one of that id, secret generated when missing); saveResource({ resource,
//     format?, scopes?, ttl? }); stats() → requests per endpoint; logs(); settledLogs() → logs() once every
//     line the IdP wrote before the call has been read (its stderr reaches the test apart from its answers); stop().
// `format` picks the access token's format per request (the IdP's `token_format` test hook);
// without it the registered resource's format, else defaultFormat (jwt) decides.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { DEFAULT_ACCOUNTS, DEFAULT_PASSWORD } from '../idp/idp-config.mjs';
import { ROOT, type Exit } from './cli.js';
import { secret, secretTokens } from './secrets.js';
import { waitFor } from './wait.js';

export const IDP_SCRIPT = join(ROOT, 'test', 'idp', 'corporate-idp.mjs');

export interface IdpAccount {
  sub: string;
  username: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
  org_id?: string;
}

export interface IdpClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  [k: string]: unknown;
}

export interface IdpResource {
  resource: string;
  format?: 'jwt' | 'opaque';
  scopes?: string[];
  ttl?: number;
}

export interface IdpOptions {
  accounts?: IdpAccount[];
  clients?: Partial<IdpClient>[];
  resources?: IdpResource[];
  issuerPath?: string;
  signingAlg?: 'RS256' | 'PS256' | 'ES256';
  password?: string;
  accessTokenTtl?: number;
  defaultFormat?: 'jwt' | 'opaque';
  defaultResource?: string;
  /** The redirect URIs of fastsvc-login (the --redirect-uri flag). */
  redirectUris?: string[];
}

export type Endpoint = 'jwks' | 'introspection' | 'token' | 'discovery' | 'userinfo' | 'authorization' | 'revocation' | 'registration';
export type TokenFormat = 'jwt' | 'opaque';

export interface UserTokens extends oauth.TokenEndpointResponse {
  idTokenClaims?: oauth.IDToken;
}

/** Cookies by name, for one person's browser session at the IdP. */
export type CookieJar = Map<string, string>;

export interface Idp {
  issuer: string;
  url: string;
  metadata: oauth.AuthorizationServer;
  password: string;
  accounts: IdpAccount[];
  clients: Record<string, IdpClient>;
  proc: ChildProcess;
  clientCredentialsToken(o?: { scope?: string; resource?: string; format?: TokenFormat; clientId?: string }): Promise<oauth.TokenEndpointResponse>;
  userToken(o: { username: string; scope?: string; resource?: string; format?: TokenFormat; clientId?: string }): Promise<UserTokens>;
  refresh(refreshToken: string, o?: { resource?: string; format?: TokenFormat; clientId?: string }): Promise<oauth.TokenEndpointResponse>;
  signIn(authorizationUrl: string | URL, username: string, o?: { password?: string; jar?: CookieJar }): Promise<URL>;
  introspect(token: string, clientId?: string): Promise<Record<string, unknown>>;
  rotateKey(): Promise<{ kid: string; kids: string[] }>;
  retireKeys(): Promise<{ dropped: string[]; kids: string[] }>;
  jwksDown(on: boolean): Promise<void>;
  fault(endpoint: Endpoint, f: { status?: number; delayMs?: number } | null): Promise<void>;
  revoke(token: string): Promise<void>;
  saveClient(metadata: Partial<IdpClient> & { client_id: string }): Promise<IdpClient>;
  saveResource(r: IdpResource): Promise<void>;
  stats(): Promise<Record<string, number>>;
  /** stderr's JSON log lines so far, parsed. */
  logs(): Record<string, unknown>[];
  /** logs(), once every line written before this call is among them: the log line of a request of its own (GET /admin/stats) comes after them. */
  settledLogs(): Promise<Record<string, unknown>[]>;
  exit: Promise<Exit>;
  stop(): Promise<Exit>;
}

const insecure = { [oauth.allowInsecureRequests]: true } as const;

const live = new Set<ChildProcess>();
const folders = new Set<string>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of folders) rmSync(d, { recursive: true, force: true });
});

function configOf(o: IdpOptions): Record<string, unknown> {
  const c: Record<string, unknown> = {
    accounts: o.accounts,
    clients: o.clients,
    resources: o.resources,
    issuer_path: o.issuerPath,
    signing_alg: o.signingAlg,
    password: o.password,
    access_token_ttl: o.accessTokenTtl,
    default_format: o.defaultFormat,
    default_resource: o.defaultResource,
  };
  for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k];
  return c;
}

/**
 * The manifest fields of a fastsvc in front of the corporate IdP both ways, for callers holding `scope`: a static
 * token (${SVC_TOKEN}), the IdP's access tokens for `${baseUrl}/mcp` (its group staff gives the scope), and people
 * signing in through it (login.mode upstream as provider corp, client fastsvc-login with ${CORP_SECRET}, anyone at
 * acme.example by email).
 */
export function corporateFront(idp: Idp, baseUrl: string, scope: string): Record<string, unknown> {
  return {
    auth: { token: '${SVC_TOKEN}' },
    external_issuers: [{ issuer: idp.issuer, audience: `${baseUrl}/mcp`, scopes_from: ['groups'], direct_scopes: false, scope_map: { staff: [scope] } }],
    oauth: {
      enabled: true,
      registration: { enabled: true },
      login: {
        mode: 'upstream',
        upstreams: [{
          name: 'corp', issuer: idp.issuer, client_id: 'fastsvc-login', client_secret: '${CORP_SECRET}', scopes: ['openid', 'email'],
          rules: [{ when: { email_domain: 'acme.example' }, subject: 'email', scopes: [scope] }],
        }],
      },
    },
  };
}

export async function startIdp(o: IdpOptions = {}): Promise<Idp> {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-idp-'));
  folders.add(dir);
  const file = join(dir, 'idp.json');
  writeFileSync(file, JSON.stringify(configOf(o), null, 2));
  const args = [IDP_SCRIPT, '--port', '0', '--config', file, ...(o.redirectUris ?? []).flatMap((u) => ['--redirect-uri', u])];
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let stdout = '';
  let stderr = '';
  const exit = new Promise<Exit>((done) => proc.on('close', (code, signal) => {
    live.delete(proc);
    folders.delete(dir);
    rmSync(dir, { recursive: true, force: true });
    done({ code, signal });
  }));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => void (stderr += c));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`corporate IdP: no listening line within 20 s; stderr:\n${stderr.slice(-2000)}`));
    }, 20_000);
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /^listening on (http:\/\/\S+)\n/m.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]!);
    });
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`corporate IdP exited (${code ?? signal}) before listening; stderr:\n${stderr.slice(-2000)}`));
    });
  });
  const stop = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    return exit;
  };
  try {
    return await connect(url, o, proc, exit, stop, () => stderr);
  } catch (e) {
    await stop();
    throw e;
  }
}

async function adminCall<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const out = (await res.json()) as T & { error?: string; error_description?: string };
  if (!res.ok) throw new Error(`corporate IdP ${method} ${path}: ${res.status} ${out.error ?? ''} ${out.error_description ?? ''}`.trim());
  return out;
}

/** Follow redirects on the IdP's origin with a cookie jar; answers the first response that is not such a redirect, or the URL it redirected off the IdP to. */
async function browse(origin: string, jar: CookieJar, url: string, init: RequestInit = {}): Promise<{ res: Response; url: string; left?: URL }> {
  for (let hops = 0; hops < 12; hops++) {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const i = pair.indexOf('=');
      const [k, v] = [pair.slice(0, i), pair.slice(i + 1)];
      if (v === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(k);
      else jar.set(k, v);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (!location) return { res, url };
    await res.body?.cancel();
    const next = new URL(location, url);
    if (next.origin !== origin) return { res, url, left: next };
    url = next.href;
    init = {};
  }
  throw new Error(`corporate IdP: more than 12 redirects from ${url}`);
}

async function connect(url: string, o: IdpOptions, proc: ChildProcess, exit: Promise<Exit>, stop: () => Promise<Exit>, stderr: () => string): Promise<Idp> {
  const issuer = `${url}${o.issuerPath ?? ''}`;
  const metadata = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }));
  const clients: Record<string, IdpClient> = {};
  const remember = (c: IdpClient) => {
    secret(c.client_secret);
    clients[c.client_id] = c;
    return c;
  };
  for (const c of (await adminCall<{ clients: IdpClient[] }>(url, 'GET', '/admin/clients')).clients) remember(c);
  const password = o.password ?? DEFAULT_PASSWORD;
  const accounts: IdpAccount[] = o.accounts ?? DEFAULT_ACCOUNTS;

  const clientOf = (id: string) => {
    const c = clients[id];
    if (!c) throw new Error(`corporate IdP has no client ${id}`);
    const auth = c.client_secret ? oauth.ClientSecretBasic(c.client_secret) : oauth.None();
    return { c, client: { client_id: id } as oauth.Client, auth };
  };
  const extra = (p: Record<string, string | undefined>) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as Record<string, string>;

  async function signIn(authorizationUrl: string | URL, username: string, so: { password?: string; jar?: CookieJar } = {}): Promise<URL> {
    const jar = so.jar ?? new Map();
    let step = await browse(url, jar, String(authorizationUrl));
    if (step.left) return step.left;
    const html = await step.res.text();
    const form = /<form method="post" action="([^"]+)" id="login">[\s\S]*?name="csrf" value="([^"]+)"/.exec(html);
    if (!form) throw new Error(`corporate IdP: expected its sign-in page, got ${step.res.status}: ${html.slice(0, 300)}`);
    const action = new URL(form[1]!.replace(/&#38;/g, '&'), step.url).href;
    step = await browse(url, jar, action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: form[2]!, username, password: so.password ?? password }),
    });
    if (step.left) return step.left;
    const page = await step.res.text();
    const why = /id="error"[^>]*>([^<]*)</.exec(page)?.[1] ?? page.slice(0, 300);
    throw new Error(`corporate IdP: sign-in as ${username} did not redirect back (${step.res.status}): ${why}`);
  }

  const logsOf = () => stderr().split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l);
      return v && typeof v === 'object' ? [v as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

  return {
    issuer, url, metadata, password, accounts, clients, proc, exit, stop, signIn,
    logs: logsOf,

    async clientCredentialsToken(p = {}) {
      const { client, auth } = clientOf(p.clientId ?? 'build-bot');
      const res = await oauth.clientCredentialsGrantRequest(metadata, client, auth, extra({ scope: p.scope, resource: p.resource, token_format: p.format }), insecure);
      return secretTokens(await oauth.processClientCredentialsResponse(metadata, client, res));
    },

    async userToken(p) {
      const { c, client, auth } = clientOf(p.clientId ?? 'mcp-cli');
      const redirectUri = c.redirect_uris[0]!;
      const verifier = secret(oauth.generateRandomCodeVerifier());
      const state = oauth.generateRandomState();
      const scope = p.scope ?? 'openid email profile';
      const openid = scope.split(' ').includes('openid');
      const nonce = openid ? oauth.generateRandomNonce() : undefined;
      const u = new URL(metadata.authorization_endpoint!);
      u.search = new URLSearchParams(extra({
        response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, state, nonce,
        scope, resource: p.resource,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      })).toString();
      const back = await signIn(u, p.username);
      const params = oauth.validateAuthResponse(metadata, client, back, state);
      secret(params.get('code') ?? undefined);
      const res = await oauth.authorizationCodeGrantRequest(metadata, client, auth, params, redirectUri, verifier, {
        ...insecure,
        additionalParameters: extra({ resource: p.resource, token_format: p.format }),
      });
      const tokens = secretTokens(await oauth.processAuthorizationCodeResponse(metadata, client, res, nonce ? { expectedNonce: nonce, requireIdToken: true } : {}));
      return { ...tokens, idTokenClaims: oauth.getValidatedIdTokenClaims(tokens) };
    },

    async refresh(refreshToken, p = {}) {
      const { client, auth } = clientOf(p.clientId ?? 'mcp-cli');
      const res = await oauth.refreshTokenGrantRequest(metadata, client, auth, refreshToken, {
        ...insecure,
        additionalParameters: extra({ resource: p.resource, token_format: p.format }),
      });
      return secretTokens(await oauth.processRefreshTokenResponse(metadata, client, res));
    },

    async introspect(token, clientId = 'fastsvc-rs') {
      const { client, auth } = clientOf(clientId);
      const res = await oauth.introspectionRequest(metadata, client, auth, token, insecure);
      return { ...(await oauth.processIntrospectionResponse(metadata, client, res)) };
    },

    rotateKey: () => adminCall(url, 'POST', '/admin/rotate'),
    retireKeys: () => adminCall(url, 'POST', '/admin/retire'),
    async jwksDown(on) {
      await adminCall(url, 'POST', '/admin/faults', on ? { endpoint: 'jwks', status: 503 } : { endpoint: 'jwks' });
    },
    async fault(endpoint, f) {
      await adminCall(url, 'POST', '/admin/faults', { endpoint, ...(f && { status: f.status, delay_ms: f.delayMs }) });
    },
    async revoke(token) {
      await adminCall(url, 'POST', '/admin/revoke', { token });
    },
    async saveClient(meta) {
      return remember((await adminCall<{ client: IdpClient }>(url, 'POST', '/admin/clients', meta)).client);
    },
    async saveResource(r) {
      await adminCall(url, 'POST', '/admin/resources', r);
    },
    async stats() {
      return (await adminCall<{ requests: Record<string, number> }>(url, 'GET', '/admin/stats')).requests;
    },
    async settledLogs() {
      const marks = () => logsOf().filter((l) => l.event === 'request' && l.path === '/admin/stats').length;
      const before = marks();
      await adminCall(url, 'GET', '/admin/stats');
      await waitFor(() => (marks() > before ? true : undefined), 'the IdP\'s log line of GET /admin/stats');
      return logsOf();
    },
  };
}
