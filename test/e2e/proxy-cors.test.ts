// server.trust_proxy and server.cors through the real `svc serve` (port 0) and fetch:
// one server behind a "proxy" (trust_proxy: 1, a CORS origin, bearer + OAuth) and one
// with the defaults. X-Forwarded-* is honoured only when trusted (the ip of auth.failed
// and oauth.rate_limited log lines, the /token rate limit's key, /metadata's base_url),
// the OAuth issuer never follows it; CORS answers preflights without auth, echoes only
// the listed origin, exposes the MCP headers, and is absent by default.

import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/reload.js';

const TOKEN = 'proxy-test-token-0123456789abcdef';
const APP = 'https://app.example.com';
const INIT = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
};

function manifest(name: string, server: Record<string, unknown>, oauth: boolean): Record<string, unknown> {
  return {
    version: 1,
    name,
    description: 'Proxy and CORS test service.',
    server: { host: '127.0.0.1', port: 0, ...server },
    profile: { scopes: ['echo.use'] },
    auth: { token: TOKEN },
    ...(oauth && { oauth: { enabled: true, registration: { enabled: true }, rate_limits: { token: { burst: 1, per_minute: 1 } } } }),
    tools: [{ name: 'echo.say', description: 'Echoes.', required_scopes: ['echo.use'], template: 'hi' }],
  };
}

const preflight = (url: string, origin: string, method = 'POST') => fetch(url, {
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
});
const mcpPost = (url: string, headers: Record<string, string>) => fetch(`${url}/mcp`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  body: JSON.stringify(INIT),
});
const badToolCall = (url: string, headers: Record<string, string>) => fetch(`${url}/svc/tools/echo.say`, {
  method: 'POST', headers: { authorization: 'Bearer wrong-token', 'content-type': 'application/json', ...headers }, body: '{}',
});
const ipsOf = (s: Served, event: string) => s.logs().filter((l) => l.event === event).map((l) => l.ip);
const authFailed = (s: Served) => s.logs().filter((l) => l.event === 'auth.failed');
const list = (h: string | null) => (h ?? '').split(',').map((s) => s.trim().toLowerCase());

describe('svc serve behind a proxy and in a browser app', function () {
  this.timeout(30_000);
  let behind: Served;
  let direct: Served;
  before(async () => {
    [behind, direct] = await Promise.all([
      serveManifest(manifest('behind', { trust_proxy: 1, cors: { origins: [APP], max_age: 120 } }, true)),
      serveManifest(manifest('direct', {}, false)),
    ]);
  });
  after(() => Promise.all([behind?.stop(), direct?.stop()]));

  describe('CORS', () => {
    it('answers a preflight from a listed origin with 204 and the allow headers, without a token', async () => {
      const res = await preflight(`${behind.url}/mcp`, APP);
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('access-control-allow-origin'), APP);
      assert.ok(list(res.headers.get('access-control-allow-methods')).includes('post'));
      const allowed = list(res.headers.get('access-control-allow-headers'));
      for (const h of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'mcp-method', 'mcp-name']) assert.ok(allowed.includes(h), h);
      assert.equal(res.headers.get('access-control-max-age'), '120');
      assert.ok(list(res.headers.get('vary')).includes('origin'));
      assert.equal(res.headers.get('access-control-allow-credentials'), null);
    });

    it('answers preflights on /svc and the OAuth endpoints a browser client calls', async () => {
      for (const path of ['/svc/tools/echo.say', '/token', '/register', '/revoke', '/.well-known/oauth-authorization-server']) {
        const res = await preflight(`${behind.url}${path}`, APP, path.startsWith('/.well-known') ? 'GET' : 'POST');
        assert.equal(res.status, 204, path);
        assert.equal(res.headers.get('access-control-allow-origin'), APP, path);
      }
    });

    it('gives an unlisted origin no allow headers', async () => {
      const foreign = await preflight(`${behind.url}/mcp`, 'https://evil.example.com');
      assert.equal(foreign.status, 403);
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
      // A loopback origin passes the Origin check on a loopback server, but is not a CORS origin.
      const loopback = await preflight(`${behind.url}/mcp`, 'http://127.0.0.1:5173');
      assert.equal(loopback.headers.get('access-control-allow-origin'), null);
      assert.equal(loopback.headers.get('access-control-allow-methods'), null);
    });

    it('a real POST /mcp from the listed origin gets Allow-Origin and the exposed MCP headers', async () => {
      const res = await mcpPost(behind.url, { origin: APP, authorization: `Bearer ${TOKEN}` });
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('mcp-session-id'));
      assert.equal(res.headers.get('access-control-allow-origin'), APP);
      const exposed = list(res.headers.get('access-control-expose-headers'));
      for (const h of ['mcp-session-id', 'mcp-protocol-version', 'www-authenticate']) assert.ok(exposed.includes(h), h);
      await res.body?.cancel();
    });

    it('a 401 from /mcp is readable by the browser app (Allow-Origin, WWW-Authenticate exposed)', async () => {
      const res = await mcpPost(behind.url, { origin: APP });
      assert.equal(res.status, 401);
      assert.ok(res.headers.get('www-authenticate'));
      assert.equal(res.headers.get('access-control-allow-origin'), APP);
      assert.ok(list(res.headers.get('access-control-expose-headers')).includes('www-authenticate'));
    });

    it('the OAuth discovery document echoes the listed origin', async () => {
      const res = await fetch(`${behind.url}/.well-known/oauth-authorization-server`, { headers: { origin: APP } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), APP);
    });

    it('is off by default: no CORS header on a preflight or a POST', async () => {
      const pre = await preflight(`${direct.url}/mcp`, 'http://127.0.0.1:5173');
      assert.equal(pre.headers.get('access-control-allow-origin'), null);
      assert.equal(pre.headers.get('access-control-allow-methods'), null);
      const post = await mcpPost(direct.url, { origin: direct.url, authorization: `Bearer ${TOKEN}` });
      assert.equal(post.status, 200);
      assert.equal(post.headers.get('access-control-allow-origin'), null);
      assert.equal(post.headers.get('access-control-expose-headers'), null);
      await post.body?.cancel();
    });
  });

  describe('trust_proxy', () => {
    it('logs the client address the trusted proxy reports (the nearest X-Forwarded-For entry)', async () => {
      assert.equal((await badToolCall(behind.url, { 'x-forwarded-for': '198.51.100.66, 203.0.113.7' })).status, 401);
      assert.equal((await mcpPost(behind.url, { authorization: 'Bearer wrong-token', 'x-forwarded-for': '203.0.113.8' })).status, 401);
      const lines = await waitFor(() => {
        const seen = authFailed(behind).filter((l) => l.ip !== '127.0.0.1');
        return seen.length >= 2 ? seen : undefined;
      }, 'two auth.failed lines from forwarded clients');
      assert.deepEqual(lines.map((l) => [l.route, l.ip]), [['/svc', '203.0.113.7'], ['/mcp', '203.0.113.8']]);
    });

    it('ignores X-Forwarded-For when trust_proxy is 0 (the default)', async () => {
      assert.equal((await badToolCall(direct.url, { 'x-forwarded-for': '203.0.113.7' })).status, 401);
      const lines = await waitFor(() => {
        const seen = authFailed(direct).filter((l) => l.route === '/svc');
        return seen.length ? seen : undefined;
      }, 'an auth.failed line on /svc');
      assert.deepEqual(lines.map((l) => l.ip), ['127.0.0.1']);
    });

    it('keys the /token rate limit by the client address, not the proxy', async () => {
      const token = (ip: string) => fetch(`${behind.url}/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip }, body: 'grant_type=refresh_token&refresh_token=x',
      });
      assert.notEqual((await token('192.0.2.10')).status, 429);
      assert.equal((await token('192.0.2.10')).status, 429);
      assert.notEqual((await token('192.0.2.11')).status, 429);
      const ips = await waitFor(() => {
        const seen = ipsOf(behind, 'oauth.rate_limited');
        return seen.length ? seen : undefined;
      }, 'an oauth.rate_limited line');
      assert.deepEqual(ips, ['192.0.2.10']);
    });

    it('takes /metadata base_url from X-Forwarded-Proto/Host only when trusted; the OAuth issuer stays put', async () => {
      const fwd = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'svc.example.com' };
      const meta = async (url: string) => (await (await fetch(`${url}/metadata`, { headers: fwd })).json()) as { base_url: string; profile: { issuer?: string } };
      const b = await meta(behind.url);
      assert.equal(b.base_url, 'https://svc.example.com');
      assert.equal(b.profile.issuer, behind.url);
      const as = (await (await fetch(`${behind.url}/.well-known/oauth-authorization-server`, { headers: fwd })).json()) as { issuer: string };
      assert.equal(as.issuer, behind.url);
      assert.equal((await meta(behind.url.replace('127.0.0.1', 'localhost'))).base_url, 'https://svc.example.com');
      assert.equal((await (await fetch(`${behind.url}/metadata`)).json() as { base_url: string }).base_url, behind.url);
      assert.equal((await meta(direct.url)).base_url, direct.url);
    });
  });
});
