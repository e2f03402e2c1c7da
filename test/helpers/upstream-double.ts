// A small in-process identity provider for the upstream-login tests: a node:http server on
// 127.0.0.1:0 that is an OpenID Connect provider (discovery, /authorize, /token with the
// authorization_code and refresh_token grants, /jwks, /userinfo) and, on other paths, a
// GitHub-like plain OAuth 2 provider (/login/oauth/authorize, /login/oauth/access_token, /user:
// no issuer, no ID token, identity from /user). It signs in whoever `next` names without a page
// (the browser step is the test's), and it can misbehave on purpose: an ID token with a wrong
// nonce, aud or iss, signed by a key it does not publish, or already expired; an error answer;
// a refresh it refuses. What it enforces, as a real provider does: the client's secret, the
// registered redirect URI, PKCE S256, codes usable once (a replay is invalid_grant) and
// refresh tokens rotated on use. Every token it issues is registered with the secret scan.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { secret } from './secrets.js';

export interface Person {
  sub: string;
  email?: string;
  email_verified?: boolean;
  groups?: string[];
  [claim: string]: unknown;
}

export interface Misbehaviour {
  nonce?: string;
  aud?: string;
  iss?: string;
  /** Sign the ID token with a key the JWKS does not publish. */
  foreignKey?: boolean;
  /** An ID token that expired a minute ago. */
  expired?: boolean;
  /** Answer the authorization request with this error instead of a code. */
  error?: string;
  /** Refuse refresh grants (invalid_grant). */
  refuseRefresh?: boolean;
}

export interface UpstreamDouble {
  /** The OpenID Connect issuer (http://127.0.0.1:PORT). */
  issuer: string;
  /** The plain OAuth 2 endpoints (GitHub-like). */
  plain: { authorization_endpoint: string; token_endpoint: string; userinfo_endpoint: string };
  clientId: string;
  clientSecret: string;
  /** Who the next authorization signs in (until changed). */
  next: Person;
  /** Misbehaviour of the next answers (until changed). */
  misbehave: Misbehaviour;
  /** How long access tokens live (expires_in), seconds. */
  accessTtl: number;
  /** Requests seen per path (`POST /token grant=refresh_token` counted as `refresh`). */
  counts: Record<string, number>;
  /** Codes it issued, most recent last. */
  codes: string[];
  /** Every access, refresh and ID token it issued. */
  issued: string[];
  close(): Promise<void>;
}

interface Code { person: Person; redirectUri: string; challenge?: string; nonce?: string; used: boolean; plain: boolean }

const b64 = (b: Buffer) => b.toString('base64url');

export async function startUpstreamDouble(o: { clientId?: string; clientSecret?: string } = {}): Promise<UpstreamDouble> {
  const signing = await generateKeyPair('ES256', { extractable: true });
  const foreign = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(signing.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const codes = new Map<string, Code>();
  const access = new Map<string, Person>();
  const refresh = new Map<string, Person>();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const d: UpstreamDouble = {
    issuer,
    plain: { authorization_endpoint: `${issuer}/login/oauth/authorize`, token_endpoint: `${issuer}/login/oauth/access_token`, userinfo_endpoint: `${issuer}/user` },
    clientId: o.clientId ?? 'fastsvc',
    clientSecret: secret(o.clientSecret ?? 'upstream-client-secret'),
    next: { sub: 'u-1', email: 'ada@acme.example', email_verified: true, groups: ['staff'] },
    misbehave: {},
    accessTtl: 3600,
    counts: {},
    codes: [],
    issued: [],
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
  };
  const count = (k: string) => void (d.counts[k] = (d.counts[k] ?? 0) + 1);
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));

  const issue = (token: string) => {
    d.issued.push(token);
    return secret(token);
  };

  async function idToken(person: Person, nonce: string | undefined): Promise<string> {
    const m = d.misbehave;
    const now = Math.floor(Date.now() / 1000);
    const { sub, ...claims } = person;
    return issue(await new SignJWT({ ...claims, ...(nonce !== undefined && { nonce: m.nonce ?? nonce }) })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(m.iss ?? issuer).setSubject(sub).setAudience(m.aud ?? d.clientId)
      .setIssuedAt(m.expired ? now - 600 : now).setExpirationTime(m.expired ? now - 60 : now + 300)
      .sign((m.foreignKey ? foreign.privateKey : signing.privateKey) as CryptoKey));
  }

  function clientOk(req: http.IncomingMessage, form: URLSearchParams): boolean {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const [id, sec] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')];
    return id === d.clientId && sec === d.clientSecret;
  }

  async function tokens(person: Person, plain: boolean, nonce: string | undefined) {
    const at = issue(b64(randomBytes(24)));
    const rt = issue(b64(randomBytes(24)));
    access.set(at, person);
    refresh.set(rt, person);
    return { access_token: at, token_type: plain ? 'bearer' : 'Bearer', expires_in: d.accessTtl, refresh_token: rt, scope: plain ? 'read:user' : 'openid email profile', ...(!plain && { id_token: await idToken(person, nonce) }) };
  }

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url!, issuer);
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => void (body += c)).on('end', () => void answer(url, body).catch((e) => json(res, 500, { error: 'server_error', error_description: String(e) })));

    async function answer(url: URL, body: string) {
      count(url.pathname);
      if (url.pathname === '/.well-known/openid-configuration') {
        return json(res, 200, {
          issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, userinfo_endpoint: `${issuer}/userinfo`,
          response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'], code_challenge_methods_supported: ['S256'],
          authorization_response_iss_parameter_supported: true,
        });
      }
      if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
      if (url.pathname === '/authorize' || url.pathname === '/login/oauth/authorize') {
        const plain = url.pathname !== '/authorize';
        const q = url.searchParams;
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('state', q.get('state') ?? '');
        if (!plain) back.searchParams.set('iss', issuer);
        if (q.get('client_id') !== d.clientId) return json(res, 400, { error: 'invalid_client' });
        if (d.misbehave.error) back.searchParams.set('error', d.misbehave.error);
        else {
          const code = secret(b64(randomBytes(24)));
          codes.set(code, { person: { ...d.next }, redirectUri: q.get('redirect_uri')!, challenge: q.get('code_challenge') ?? undefined, nonce: q.get('nonce') ?? undefined, used: false, plain });
          d.codes.push(code);
          back.searchParams.set('code', code);
        }
        return void res.writeHead(302, { location: back.href }).end();
      }
      if (url.pathname === '/token' || url.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(body);
        if (!clientOk(req, form)) return json(res, 401, { error: 'invalid_client' });
        if (form.get('grant_type') === 'authorization_code') {
          const c = codes.get(form.get('code') ?? '');
          if (!c || c.used) return json(res, 400, { error: 'invalid_grant', error_description: 'code unknown or already used' });
          c.used = true;
          if (c.redirectUri !== form.get('redirect_uri')) return json(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
          const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
          if (c.challenge !== challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
          return json(res, 200, await tokens(c.person, c.plain, c.nonce));
        }
        if (form.get('grant_type') === 'refresh_token') {
          count('refresh');
          const rt = form.get('refresh_token') ?? '';
          const person = refresh.get(rt);
          if (!person || d.misbehave.refuseRefresh) return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token unknown' });
          refresh.delete(rt);
          const t = await tokens(person, url.pathname !== '/token', undefined);
          const { id_token: _omit, ...rest } = t as typeof t & { id_token?: string };
          return json(res, 200, rest);
        }
        return json(res, 400, { error: 'unsupported_grant_type' });
      }
      if (url.pathname === '/userinfo' || url.pathname === '/user') {
        const m = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
        const person = m ? access.get(m[1]!) : undefined;
        if (!person) return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        if (url.pathname === '/user') return json(res, 200, { login: person.login ?? person.sub, id: Number(person.id ?? 42), email: person.email ?? null, name: person.name ?? null });
        return json(res, 200, person);
      }
      json(res, 404, { error: 'not_found' });
    }
  });
  return d;
}
