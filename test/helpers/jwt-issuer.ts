// startJwtIssuer(): a stand-in authorization server on 127.0.0.1 for the checks the real IdP
// (test/helpers/idp.ts) cannot be made to get wrong: it mints whatever JWT a test asks for —
// any header (alg none, HS256 keyed with its own public key, jku/x5u pointing elsewhere, a
// made-up kid), any claims — and serves RFC 8414 discovery, a JWKS and an RFC 7662
// introspection endpoint whose answers the test sets. Guarantees: tokens are signed with
// jose; the JWKS publishes only the public halves unless a test publishes something else
// (jwks()); every request is counted by path; down(true) answers 503 everywhere; stop()
// closes the server. Every token minted is registered with the secret scan.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { secret } from './secrets.js';

export interface SigningKey { kid: string; alg: string; key: CryptoKey; publicJwk: JWK; privateJwk: JWK }

export async function signingKey(kid: string, alg: 'RS256' | 'ES256' | 'PS256' = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, key: privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, privateJwk: { ...(await exportJWK(privateKey)), kid, alg } };
}

export interface MintOptions {
  /** Header fields over { alg, typ: at+jwt, kid }. */
  header?: Record<string, unknown>;
  /** Sign with this key instead of the current one. */
  key?: SigningKey;
  /** Leave out these default claims. */
  omit?: string[];
}

export interface JwtIssuer {
  issuer: string;
  url: string;
  /** The audience tokens are minted for by default. */
  audience: string;
  keys: SigningKey[];
  /** A JWT access token: iss, aud, sub, client_id, scope, iat, exp (+5 min), jti, then `claims` over them. */
  mint(claims?: JWTPayload & Record<string, unknown>, o?: MintOptions): Promise<string>;
  /** A token whose header says alg none (no signature). */
  unsigned(claims?: Record<string, unknown>): string;
  /** HS256 with the issuer's public key bytes as the HMAC secret (the classic confusion attack). */
  hs256WithPublicKey(claims?: Record<string, unknown>): Promise<string>;
  /** A new current key, published beside the old ones. */
  rotate(): Promise<SigningKey>;
  /** Publish this JWKS instead of the keys' public halves (null: back to them). */
  jwks(body: unknown): void;
  /** Cache-Control of the JWKS answer. */
  jwksCacheControl: string | undefined;
  /** Introspection answers by token; unknown tokens are { active: false }. */
  introspection: Map<string, Record<string, unknown>>;
  /** Every answer 503 while on. */
  down(on: boolean): void;
  /** Requests per path. */
  hits(path: string): number;
  stop(): Promise<void>;
}

export async function startJwtIssuer(o: { path?: string; audience?: string; alg?: 'RS256' | 'ES256' | 'PS256' } = {}): Promise<JwtIssuer> {
  const hits = new Map<string, number>();
  const introspection = new Map<string, Record<string, unknown>>();
  let custom: unknown = null;
  let isDown = false;
  let url = '';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (isDown) return json(503, { error: 'temporarily_unavailable' });
    if (path === `/.well-known/oauth-authorization-server${o.path ?? ''}`) {
      return json(200, { issuer: me.issuer, jwks_uri: `${url}/jwks`, introspection_endpoint: `${url}/introspect`, token_endpoint: `${url}/token` });
    }
    if (path === '/jwks') {
      return json(200, custom ?? { keys: me.keys.map((k) => k.publicJwk) }, me.jwksCacheControl ? { 'cache-control': me.jwksCacheControl } : {});
    }
    if (path === '/introspect' && req.method === 'POST') {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => void (body += c)).on('end', () => {
        const token = new URLSearchParams(body).get('token') ?? '';
        if (!req.headers.authorization?.startsWith('Basic ')) return json(401, { error: 'invalid_client' });
        json(200, introspection.get(token) ?? { active: false });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const first = await signingKey('k1', o.alg);
  const audience = o.audience ?? 'https://mcp.example.com/mcp';
  const me: JwtIssuer = {
    issuer: `${url}${o.path ?? ''}`,
    url,
    audience,
    keys: [first],
    jwksCacheControl: undefined,
    introspection,
    async mint(claims = {}, m = {}) {
      const key = m.key ?? me.keys[me.keys.length - 1]!;
      const now = Math.floor(Date.now() / 1000);
      const base: Record<string, unknown> = { iss: me.issuer, aud: audience, sub: 'user-1', client_id: 'app-1', scope: 'notes.read', iat: now, exp: now + 300, jti: randomUUID() };
      for (const k of m.omit ?? []) delete base[k];
      const payload = Object.fromEntries(Object.entries({ ...base, ...claims }).filter(([, v]) => v !== undefined));
      const jwt = await new SignJWT(payload).setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid, ...m.header } as { alg: string }).sign(key.key);
      return secret(jwt);
    },
    unsigned(claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      const enc = (v: unknown) => base64url.encode(JSON.stringify(v));
      return secret(`${enc({ alg: 'none', typ: 'at+jwt' })}.${enc({ iss: me.issuer, aud: audience, sub: 'user-1', scope: 'notes.read', iat: now, exp: now + 300, ...claims })}.`);
    },
    async hs256WithPublicKey(claims = {}) {
      const pub = new TextEncoder().encode(JSON.stringify(me.keys[0]!.publicJwk));
      const now = Math.floor(Date.now() / 1000);
      return secret(await new SignJWT({ iss: me.issuer, aud: audience, sub: 'user-1', scope: 'notes.read', iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: me.keys[0]!.kid }).sign(pub));
    },
    async rotate() {
      const k = await signingKey(`k${me.keys.length + 1}`, o.alg);
      me.keys.push(k);
      return k;
    },
    jwks(body) {
      custom = body;
    },
    down(on) {
      isDown = on;
    },
    hits: (path) => hits.get(path) ?? 0,
    stop: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
  return me;
}
