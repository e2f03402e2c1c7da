// The external identity providers of the bench's `fastsvc-external` server (issue 30): two corporate IdPs
// (test/idp/corporate-idp.mjs, node-oidc-provider, the one the e2e tests drive), each its own process on loopback,
// one signing with RS256 and one with ES256 (an IdP signs with one algorithm). The harness starts them only when an
// entry needs that server, like PostgreSQL. Access tokens come from the real token endpoint: client_credentials as
// `build-bot` for the bench's resource (audience EXTERNAL_AUDIENCE, scope bench.run, one hour), JWT (RFC 9068) or
// opaque (the IdP's `token_format` hook); the server introspects opaque ones as `fastsvc-rs`. Every answer is checked
// (200, Bearer, the scope, a JWT's shape and alg); every request is bounded in time.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { startServer } from './proc.mjs';

/** The `aud` of the bench's tokens: bench/fastsvc-external.svc.yaml's `audience` (a name, never contacted). */
export const EXTERNAL_AUDIENCE = 'https://bench.fastsvc.example/api';
const SCOPE = 'bench.run';
const TTL = 3600;
const TIMEOUT_MS = 10_000;

/** One running IdP: its issuer, and its token endpoint for build-bot. */
class Idp {
  constructor(alg, server, secret) {
    this.alg = alg;
    this.server = server;
    this.issuer = server.url;
    this.tokenUrl = `${server.url}/oauth2/token`;
    this.auth = `Basic ${Buffer.from(`build-bot:${secret}`).toString('base64')}`;
  }

  /**
   * One access token (format 'jwt' | 'opaque'), from POST /oauth2/token (client_credentials); on a connection of its own
   * unless `agent` is given (a kept-alive socket idle for the IdP's keep-alive timeout, 5 s — a round's length — may be
   * closed by the IdP just as a request is written on it: "socket hang up").
   */
  async mint(format = 'jwt', agent = false) {
    const body = new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE, resource: EXTERNAL_AUDIENCE, token_format: format }).toString();
    const res = await post(agent, this.tokenUrl, { authorization: this.auth, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body);
    let t;
    try {
      t = JSON.parse(res.body);
    } catch {
      t = {};
    }
    if (res.status !== 200 || String(t.token_type).toLowerCase() !== 'bearer' || typeof t.access_token !== 'string' || !String(t.scope).split(' ').includes(SCOPE)) {
      throw new Error(`${this.alg} IdP token endpoint: HTTP ${res.status} ${res.body.slice(0, 160)}`);
    }
    const parts = t.access_token.split('.');
    const jwt = parts.length === 3;
    if (jwt !== (format === 'jwt')) throw new Error(`${this.alg} IdP: asked for a ${format} access token, got ${jwt ? 'a JWT' : 'an opaque one'}`);
    if (jwt && JSON.parse(Buffer.from(parts[0], 'base64url')).alg !== this.alg) throw new Error(`${this.alg} IdP signed with ${Buffer.from(parts[0], 'base64url')}`);
    return t.access_token;
  }

  /** n distinct tokens, `parallel` requests at a time on kept-alive connections; bounded by deadlineMs. */
  async mintMany(n, format = 'jwt', { parallel = 4, deadlineMs = 120_000 } = {}) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
    try {
      return await this.#mintMany(n, format, parallel, deadlineMs, agent);
    } finally {
      agent.destroy();
    }
  }

  async #mintMany(n, format, parallel, deadlineMs, agent) {
    const out = [];
    const deadline = performance.now() + deadlineMs;
    let asked = 0;
    const minter = async () => {
      while (asked < n) {
        if (performance.now() > deadline) throw new Error(`${this.alg} IdP minted only ${out.length} of ${n} tokens within ${deadlineMs} ms`);
        asked++;
        out.push(await this.mint(format, agent));
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, n) }, minter));
    if (new Set(out).size !== n) throw new Error(`${this.alg} IdP minted ${new Set(out).size} distinct tokens of ${n}`);
    return out;
  }
}

/**
 * Start the two IdPs (config files in `dir`); resolves { RS256, ES256, env, stop() }. env: what
 * bench/fastsvc-external.svc.yaml reads — BENCH_IDP_ISSUER (RS256, also introspects), BENCH_IDP_ES256_ISSUER,
 * BENCH_IDP_SECRET (fastsvc-rs's introspection secret).
 */
export async function startIdps(dir) {
  const secrets = { bot: randomBytes(24).toString('base64url'), rs: randomBytes(24).toString('base64url') };
  const start = async (alg) => {
    const file = join(dir, `idp-${alg}.json`);
    writeFileSync(file, JSON.stringify({
      signing_alg: alg,
      clients: [{ client_id: 'build-bot', client_secret: secrets.bot }, { client_id: 'fastsvc-rs', client_secret: secrets.rs }],
      resources: [{ resource: EXTERNAL_AUDIENCE, scopes: [SCOPE], ttl: TTL }],
    }));
    const server = await startServer({ argv: ['test/idp/corporate-idp.mjs', '--port', '0', '--config', file] }, {}, 20_000);
    return new Idp(alg, server, secrets.bot);
  };
  const [RS256, ES256] = await Promise.all([start('RS256'), start('ES256')]);
  return {
    RS256, ES256,
    env: { BENCH_IDP_ISSUER: RS256.issuer, BENCH_IDP_ES256_ISSUER: ES256.issuer, BENCH_IDP_SECRET: secrets.rs },
    died: () => RS256.server.died() ?? ES256.server.died(),
  };
}

function post(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: TIMEOUT_MS }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${TIMEOUT_MS} ms: POST ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}
