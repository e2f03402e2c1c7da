// Tokens are bound to the server they were issued for (RFC 8707 audience = the server's
// origin) and every transport checks it: two `svc serve` processes share one SQLite OAuth
// store (so each can look up the other's tokens, grants and keys) but listen on different
// origins. A token issued by A works on A's /svc, /mcp and /ws and is refused with 401 on
// B's, although B finds it in the store: only its audience differs.
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import WebSocket from 'ws';
import { serveManifest, type Served } from '../helpers/serve.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';

async function transports(url: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const svc = (await fetch(`${url}/svc/tools/notes.search`, { method: 'POST', headers, body: '{"q":"a"}' })).status;
  const mcp = (await fetch(`${url}/mcp`, {
    method: 'POST', headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'aud', version: '1' } } }),
  })).status;
  const ws = await new Promise<number>((resolve) => {
    const s = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
    s.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
    s.on('open', () => {
      s.close();
      resolve(101);
    });
    s.on('error', () => {});
  });
  return { svc, mcp, ws };
}

describe('audience: a token works only on the server it was issued for, on every transport', function () {
  this.timeout(60_000);
  let a: Served;
  let b: Served;
  before(async () => {
    a = await serveManifest({
      version: 1,
      name: 'audience',
      server: { host: '127.0.0.1', port: 8080 },
      routes: { public: ['/'], protected: ['/svc', '/mcp', '/ws'] },
      oauth: { enabled: true, provider: { type: 'sqlite', path: 'oauth.db' }, registration: { enabled: true }, login: { mode: 'auto', subject: 'dev' } },
      profile: { scopes: [{ name: 'notes.read', description: 'Read notes.' }] },
      tools: [{ name: 'notes.search', description: 'Finds notes.', required_scopes: ['notes.read'], template: 'none' }],
    });
    b = await a.again(); // the same manifest and oauth.db
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('A\'s token: accepted by A on /svc, /mcp, /ws; 401 from B on all three', async () => {
    const as = await discover(a.url);
    const client = await register(as);
    const auth = await authorize(as, client, { scope: 'notes.read', resource: `${a.url}/mcp` });
    const tokens = await exchange(as, client, oauth.None(), auth, `${a.url}/mcp`);
    const onA = await transports(a.url, tokens.access_token);
    assert.equal(onA.svc, 200);
    assert.equal(onA.mcp, 200);
    assert.equal(onA.ws, 101);
    assert.deepEqual(await transports(b.url, tokens.access_token), { svc: 401, mcp: 401, ws: 401 });
  });
});
