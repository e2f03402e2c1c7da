// The real OAuth 2.1 flow against a fastsvc OAuth server, driven by oauth4webapi (an independent client):
// discovery, dynamic registration, authorization with PKCE S256 + resource (auto login on loopback; redirects
// followed with a cookie jar up to the client's redirect URI, which is read from Location and never requested),
// code exchange and refresh. Every answer is validated (issuer, state, iss, token type, scope); every request is
// bounded in time. Also the raw form bodies the token-endpoint load sends, and a bounded code-pool minter.
import * as oauth from 'oauth4webapi';

export const SCOPE = 'bench.run';
const REDIRECT_URI = 'http://127.0.0.1:9/callback'; // discard port; never contacted
const TIMEOUT_MS = 10_000;
const insecure = { [oauth.allowInsecureRequests]: true, signal: () => AbortSignal.timeout(TIMEOUT_MS) };
export const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

/** One authorization server: its metadata, its clients, and the flows. */
export class OAuthFlow {
  /** base: the server's URL (its issuer). */
  static async open(base) {
    const issuer = new URL(base);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    return new OAuthFlow(base, as);
  }

  constructor(base, as) {
    this.base = base;
    this.as = as;
    this.tokenUrl = as.token_endpoint;
  }

  /** A public client (PKCE, no secret) registered through POST /register. */
  async register(name = 'fastsvc-bench') {
    const res = await oauth.dynamicClientRegistrationRequest(this.as, {
      redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], client_name: name,
    }, insecure);
    return oauth.processDynamicClientRegistrationResponse(res);
  }

  /** Authorize with PKCE S256 + resource; resolves { params, verifier } (params: the validated callback query). */
  async authorize(client, resource, jar = new Map()) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const u = new URL(this.as.authorization_endpoint);
    u.search = new URLSearchParams({
      response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT_URI, scope: SCOPE, resource, state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    let url = u.href;
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(url, { headers: cookieHeader(jar), redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
      keepCookies(jar, res);
      await res.arrayBuffer();
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) throw new Error(`authorize: HTTP ${res.status} at ${new URL(url).pathname}`);
      const next = new URL(location, url);
      if (`${next.origin}${next.pathname}` === REDIRECT_URI) return { params: oauth.validateAuthResponse(this.as, client, next, state), verifier };
      if (next.origin !== new URL(this.base).origin) throw new Error(`authorize: redirected off the server to ${next.origin}`);
      url = next.href;
    }
    throw new Error('authorize: more than 10 redirects');
  }

  /** Exchange through oauth4webapi (validated answer). */
  async exchange(client, a, resource) {
    const res = await oauth.authorizationCodeGrantRequest(this.as, client, oauth.None(), a.params, REDIRECT_URI, a.verifier,
      { ...insecure, additionalParameters: { resource } });
    return checkTokens(await oauth.processAuthorizationCodeResponse(this.as, client, res));
  }

  /** Refresh through oauth4webapi (validated answer); the answer carries the rotated refresh token. */
  async refresh(client, refreshToken, resource) {
    const res = await oauth.refreshTokenGrantRequest(this.as, client, oauth.None(), refreshToken, { ...insecure, additionalParameters: { resource } });
    return checkTokens(await oauth.processRefreshTokenResponse(this.as, client, res));
  }

  /** A fresh access token for `resource` (a new authorization each time; one registered client per flow). */
  async accessToken(resource) {
    this.client ??= await this.register();
    return (await this.exchange(this.client, await this.authorize(this.client, resource), resource)).access_token;
  }

  /** The raw POST /token body of a code exchange, as oauth4webapi sends it. */
  codeForm(client, a, resource) {
    return new URLSearchParams({
      grant_type: 'authorization_code', code: a.params.get('code'), redirect_uri: REDIRECT_URI, code_verifier: a.verifier,
      client_id: client.client_id, resource,
    }).toString();
  }

  /** The raw POST /token body of a refresh grant. */
  refreshForm(client, refreshToken, resource) {
    return new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client_id, resource }).toString();
  }

  /** n authorizations (`parallel` at a time, each with its own cookie jar) → n code-exchange bodies. Bounded by deadlineMs. */
  async mintCodeForms(client, resource, n, { parallel = 4, deadlineMs = 120_000 } = {}) {
    const forms = [];
    const deadline = performance.now() + deadlineMs;
    const minter = async () => {
      const jar = new Map();
      while (forms.length < n) {
        if (performance.now() > deadline) throw new Error(`minted only ${forms.length} of ${n} codes within ${deadlineMs} ms`);
        const i = forms.push(null) - 1; // reserve the slot before awaiting, so minters never overshoot n
        forms[i] = this.codeForm(client, await this.authorize(client, resource, jar), resource);
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, n) }, minter));
    return forms;
  }
}

/** What every token answer the benchmark accepts must hold. */
function checkTokens(t) {
  if (String(t.token_type).toLowerCase() !== 'bearer' || !t.access_token || !t.refresh_token) {
    throw new Error(`token answer lacks a bearer access token or a refresh token: ${Object.keys(t).join(', ')}`);
  }
  if (!String(t.scope ?? '').split(' ').includes(SCOPE)) throw new Error(`token answer grants "${t.scope}", not ${SCOPE}`);
  return t;
}

function cookieHeader(jar) {
  return jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
}

function keepCookies(jar, res) {
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0];
    const i = pair.indexOf('=');
    const [k, v] = [pair.slice(0, i), pair.slice(i + 1)];
    if (v === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(k);
    else jar.set(k, v);
  }
}
