// Test harness for the OAuth server: a real node:http server on 127.0.0.1:0 running
// an Express app with the OAuthServer mounted, its protected-resource metadata served as
// createApp serves it (auth/resource-metadata.ts), and one protected probe route
// (/svc/whoami) that authenticates exactly as the gate does; plus a cookie-keeping,
// redirect-following browser stand-in and an oauth4webapi PKCE flow.
// Why not `svc serve`: these tests are about the authorization server module itself, with
// settings a manifest cannot give (a 1 s code TTL — the schema's minimum is 10 —, an
// injected provider, no profile or tools to declare) and a whoami probe that shows the
// verified principal; a server per case costs milliseconds instead of a process. It has
// no front door (Host/Origin, token in the query): flows a browser makes through the
// whole server are in oauth-pages.test.ts, against `svc serve`.
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { pino } from 'pino';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createOAuthServer, type OAuthServer, type OAuthServerOptions } from '../../src/auth/oauth/server.js';
import { resourceMetadata, type ResourceMetadata } from '../../src/auth/resource-metadata.js';
import { DPOP_ALGS } from '../../src/auth/dpop.js';
import { InMemoryOAuthProvider } from '../../src/auth/oauth/providers/memory-provider.js';
import type { OAuthConfig } from '../../src/core/manifest-types.gen.js';
import { resolveConfig } from '../../src/core/config.js';
import { callerResolver } from '../../src/http/forwarded.js';

/** The oauth section as serve would give it (the schema's defaults, via resolveConfig), then overrides a manifest cannot give (code_ttl: 1). */
export function resolvedOAuth(oauth: Partial<OAuthConfig> = {}) {
  const { code_ttl, ...valid } = oauth;
  const resolved = resolveConfig({ oauth: { enabled: true, ...valid } }).oauth!;
  return { ...resolved, ...(code_ttl !== undefined && { code_ttl }) };
}
import { logLine, secret, secretTokens } from '../helpers/secrets.js';

export const SCOPES = [
  { name: 'files.read', description: 'Read files' },
  { name: 'files.write', description: 'Change files' },
  { name: 'admin', description: 'Administer the server' },
];

export interface Harness {
  url: string;
  oauth: OAuthServer;
  /** The protected-resource metadata, as createApp serves it beside the OAuth server. */
  prm: ResourceMetadata;
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startOAuthApp(o: Partial<Omit<OAuthServerOptions, 'oauth'>> & { oauth?: Partial<OAuthConfig>; port?: number } = {}): Promise<Harness> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(o.port ?? 0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => {
    logLine('oauth-harness', line);
    logs.push(JSON.parse(line));
  } });
  const app = express();
  const s = await createOAuthServer({
    issuer: url,
    baseUrl: url,
    protectedRoutes: ['/svc', '/mcp', '/ws'],
    scopes: SCOPES.map((x) => x.name),
    profile: { scopes: SCOPES },
    provider: new InMemoryOAuthProvider(),
    logger,
    manifestDir: process.cwd(),
    name: 'Test Server',
    caller: callerResolver(0),
    ...o,
    oauth: resolvedOAuth({ registration: { enabled: true }, login: { mode: 'auto', subject: 'dev' }, ...o.oauth }),
  });
  const prm = resourceMetadata({
    origin: url, routes: ['/svc', '/mcp', '/ws'], authorizationServers: [s.issuer], scopes: s.scopesSupported, name: o.name ?? 'Test Server',
    ...(s.dpop && { dpop: { algs: DPOP_ALGS, required: s.dpop.mode === 'required' } }),
  });
  prm.mount(app);
  s.mount(app);
  app.get('/svc/whoami', async (req, res) => {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const p = m ? await s.verifyAccessToken(m[1]!) : null;
    if (!p) {
      res.status(401).set('WWW-Authenticate', `Bearer resource_metadata="${prm.prmUrl('/svc')}"`).json({ error: 'unauthenticated' });
      return;
    }
    res.json({ ...p, scopes: [...p.scopes], active: await s.isActive(p) });
  });
  app.use((_req, res) => void res.status(404).json({ error: 'not_found' }));
  server.on('request', app);
  return {
    url,
    oauth: s,
    prm,
    logs,
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await new Promise((r) => setTimeout(r, 20)); // let clients see their kept-alive sockets end
      await s.close();
    },
  };
}

/** A minimal browser: keeps cookies per name, follows redirects on `origin`, stops at the first redirect elsewhere. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly hops: string[] = [];

  constructor(readonly origin: string) {}

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const [k, v] = [pair!.slice(0, i), pair!.slice(i + 1)];
      if (v === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    return res;
  }

  /** Follow redirects from `url`; returns the first URL off this server, or the last response. */
  async follow(url: string, init: RequestInit = {}): Promise<{ leftTo?: URL; res: Response }> {
    let res = await this.fetch(url, init);
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      const next = new URL(res.headers.get('location')!, url);
      this.hops.push(next.href);
      if (next.origin !== this.origin || !/^\/(authorize|interaction)/.test(next.pathname)) return { leftTo: next, res };
      url = next.href;
      res = await this.fetch(url);
    }
    return { res };
  }
}

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export async function discover(url: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(url);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

export async function register(as: oauth.AuthorizationServer, meta: Partial<oauth.OmitSymbolProperties<oauth.Client>> = {}): Promise<oauth.Client> {
  const res = await oauth.dynamicClientRegistrationRequest(as, {
    redirect_uris: ['http://127.0.0.1:9/callback'],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_name: 'E2E Client',
    ...meta,
  }, insecure);
  const client = await oauth.processDynamicClientRegistrationResponse(res);
  secret(client.client_secret as string | undefined);
  return client;
}

export interface AuthorizeParams {
  scope?: string;
  resource?: string;
  redirectUri?: string;
  extra?: Record<string, string>;
  browser?: Browser;
}

/** Start an authorization request with PKCE S256 and follow it; returns the callback URL and the verifier. */
export async function authorize(as: oauth.AuthorizationServer, client: oauth.Client, p: AuthorizeParams = {}) {
  const verifier = secret(oauth.generateRandomCodeVerifier());
  const state = oauth.generateRandomState();
  const redirectUri = p.redirectUri ?? (client.redirect_uris as string[])[0]!;
  const u = new URL(as.authorization_endpoint!);
  u.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(p.scope !== undefined && { scope: p.scope }),
    ...(p.resource !== undefined && { resource: p.resource }),
    ...p.extra,
  }).toString();
  const browser = p.browser ?? new Browser(new URL(as.issuer).origin);
  const { leftTo, res } = await browser.follow(u.href);
  return { callback: leftTo, res, verifier, state, redirectUri, browser };
}

export async function exchange(as: oauth.AuthorizationServer, client: oauth.Client, auth: oauth.ClientAuth, a: { callback?: URL; verifier: string; state: string; redirectUri: string }, resource?: string) {
  const params = oauth.validateAuthResponse(as, client, a.callback!, a.state);
  secret(params.get('code') ?? undefined);
  const res = await oauth.authorizationCodeGrantRequest(as, client, auth, params, a.redirectUri, a.verifier, {
    ...insecure,
    ...(resource && { additionalParameters: { resource } }),
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  secret(tokens.access_token);
  secret(tokens.refresh_token);
  return tokens;
}

/** POST a form to an endpoint and return status, headers and JSON body (for raw error checks). */
export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch {
    body = { raw: text };
  }
  return { status: res.status, headers: res.headers, body };
}

export async function whoami(url: string, token: string) {
  const res = await fetch(`${url}/svc/whoami`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, challenge: res.headers.get('www-authenticate') };
}

/**
 * An OAuthClientProvider whose browser step is scripted: redirectToAuthorization follows the
 * authorization URL with a cookie-keeping client and keeps the code from the callback. It keeps
 * no refresh token: SDK 1.32 answers a 403 insufficient_scope by refreshing when it holds one,
 * and a refresh cannot widen scope (RFC 6749 §6), so step-up needs a new authorization.
 */
export class ScriptedProvider implements OAuthClientProvider {
  registrations = 0;
  saved?: OAuthTokens;
  readonly authorizationUrls: URL[] = [];
  /** The RFC 9207 `iss` of the last authorization response (SDK 2.x checks it). */
  iss?: string;
  #client?: OAuthClientInformationMixed;
  #verifier = '';
  #code?: Promise<string>;

  /** callback: a loopback redirect URI nothing listens on (the scripted browser stops there). */
  constructor(readonly callback: string, readonly clientName: string) {}

  get redirectUrl() {
    return this.callback;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.clientName, redirect_uris: [this.callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }

  clientInformation() {
    return this.#client;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    if (!this.#client) this.registrations++;
    this.#client = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    secretTokens(tokens);
    this.saved = { ...tokens, refresh_token: undefined };
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
    this.#code = new Browser(url.origin).follow(url.href).then(({ leftTo }) => {
      const code = leftTo?.searchParams.get('code');
      if (!code) throw new Error(`no code in ${leftTo?.href}`);
      secret(code);
      this.iss = leftTo?.searchParams.get('iss') ?? undefined;
      return code;
    });
    await this.#code;
  }

  code(): Promise<string> {
    return this.#code!;
  }

  saveCodeVerifier(v: string) {
    this.#verifier = secret(v);
  }

  codeVerifier() {
    return this.#verifier;
  }
}
