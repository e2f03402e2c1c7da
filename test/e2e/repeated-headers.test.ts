// A header that may appear once, sent twice, through the real `svc serve`: Node's parser keeps
// the first Authorization (and Host, Content-Type) and drops the others silently, and joins other
// copies with ", ", so a proxy in front reading another copy than this server would see another
// request. Every such request is refused 400 HEADER_REPEATED before any route — the direct paths
// (POST /mcp, POST /svc/tools/NAME), the Express routes (/svc, /docs, /metadata, /healthz), the
// /ws upgrade, the built-in OAuth server's endpoints and the protected-resource metadata — with a
// valid copy first or last; a single copy of each header still passes. The raw requests are made
// with node:http's array headers, which send each line as written.

import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret(randomBytes(18).toString('base64url'));
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'repeated', version: '1' } } });

interface Answer { status: number; body: string; upgraded: boolean }

/** One request with exactly these header lines (Host included: none is added). */
function send(url: string, method: string, path: string, headers: string[], body?: string): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const lines = [...headers, ...(body !== undefined ? ['content-length', String(Buffer.byteLength(body))] : [])];
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: lines, setHost: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => void (text += c)).on('end', () => resolve({ status: res.statusCode!, body: text, upgraded: false }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, body: '', upgraded: true });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Header lines without those named `name`. */
function dropHeader(lines: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += 2) if (lines[i]!.toLowerCase() !== name) out.push(lines[i]!, lines[i + 1]!);
  return out;
}

describe('a header that may appear once, sent twice: 400 on every route and transport (real svc serve)', function () {
  this.timeout(60_000);
  let srv: Served;
  let host: string;

  before(async () => {
    srv = await serveManifest({
      version: 1,
      name: 'repeated',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz', '/docs', '/metadata'], protected: ['/svc', '/mcp', '/ws'] },
      auth: { token: '${SVC_TOKEN}' },
      oauth: { enabled: true, provider: { type: 'memory' }, login: { mode: 'auto', subject: 'dev' } },
      profile: { scopes: ['notes.read'] },
      tools: [{ name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'none' }],
    }, { env: { SVC_TOKEN: TOKEN } });
    host = new URL(srv.url).host;
  });
  after(() => srv?.stop());

  const bearer = `Bearer ${TOKEN}`;
  const json = ['content-type', 'application/json', 'accept', 'application/json, text/event-stream'];
  const upgrade = ['connection', 'Upgrade', 'upgrade', 'websocket', 'sec-websocket-version', '13', 'sec-websocket-key', randomBytes(16).toString('base64'), 'sec-websocket-protocol', 'mcp'];

  /** Every route and transport: method, path, the headers it needs besides Host and Authorization, a body. */
  const routes: [string, string, string[], string?][] = [
    ['POST', '/mcp', json, INIT],
    ['POST', '/svc/tools/notes.list', json, '{}'],
    ['GET', '/svc', []],
    ['GET', '/ws', upgrade],
    ['GET', '/docs', []],
    ['GET', '/metadata', []],
    ['GET', '/healthz', []],
    ['GET', '/.well-known/oauth-authorization-server', []],
    ['GET', '/.well-known/oauth-protected-resource/mcp', []],
    ['POST', '/token', ['content-type', 'application/x-www-form-urlencoded'], 'grant_type=client_credentials'],
  ];
  /** The credential each route takes: the token endpoint a client's Basic credentials, the rest the bearer token. */
  const credential = (path: string) => (path === '/token' ? `Basic ${Buffer.from('some-client:some-secret').toString('base64')}` : bearer);

  it('one copy of each header passes (the baseline)', async () => {
    for (const [method, path, headers, body] of routes) {
      const r = await send(srv.url, method, path, ['host', host, 'authorization', credential(path), ...headers], body);
      assert.notEqual(r.status, 400, `${method} ${path}: ${r.body}`);
      if (path === '/ws') assert.equal(r.upgraded, true);
    }
  });

  for (const order of ['a valid token first, junk second', 'junk first, a valid token second']) {
    it(`two Authorization headers (${order}): 400 HEADER_REPEATED everywhere`, async () => {
      for (const [method, path, headers, body] of routes) {
        const valid = credential(path);
        const two = order.startsWith('a valid') ? ['authorization', valid, 'authorization', 'Bearer junk'] : ['authorization', 'Bearer junk', 'authorization', valid];
        const r = await send(srv.url, method, path, ['host', host, ...two, ...headers], body);
        assert.equal(r.status, 400, `${method} ${path}: ${r.status} ${r.body}`);
        assert.equal(r.upgraded, false);
        assert.equal(JSON.parse(r.body).error.code, 'HEADER_REPEATED', `${method} ${path}`);
      }
    });
  }

  it('two Authorization headers differing only in the case of their names: 400', async () => {
    const r = await send(srv.url, 'POST', '/svc/tools/notes.list', ['host', host, 'Authorization', bearer, 'AUTHORIZATION', 'Bearer junk', ...json], '{}');
    assert.equal(r.status, 400, r.body);
    assert.equal(JSON.parse(r.body).error.code, 'HEADER_REPEATED');
  });

  // HOST stands for the server's own host:port (known once it listens).
  const same: [string, string, string][] = [
    ['Host', 'HOST', 'evil.example'],
    ['DPoP', 'a.b.c', 'd.e.f'],
    ['Origin', 'http://HOST', 'https://evil.example'],
    ['Content-Type', 'application/json', 'text/plain'],
    ['Mcp-Session-Id', 'one', 'two'],
    ['Mcp-Protocol-Version', '2025-11-25', '2025-06-18'],
    ['Mcp-Method', 'tools/call', 'tools/list'],
    ['Mcp-Name', 'notes.list', 'other'],
    ['Mcp-Param-Region', 'eu', 'us'],
    ['Last-Event-ID', '1', '2'],
  ];
  for (const [name, firstValue, second] of same) {
    it(`two ${name} headers: 400 HEADER_REPEATED on every route`, async () => {
      const first = firstValue.replace('HOST', host);
      for (const [method, path, headers, body] of routes) {
        const rest = name === 'Host' ? [] : ['host', host];
        const without = name === 'Content-Type' ? dropHeader(headers, 'content-type') : headers;
        const r = await send(srv.url, method, path, [...rest, name, first, name.toLowerCase(), second, 'authorization', credential(path), ...without], body);
        assert.equal(r.status, 400, `${name} on ${method} ${path}: ${r.status} ${r.body}`);
        assert.equal(JSON.parse(r.body).error.code, 'HEADER_REPEATED', `${name} on ${method} ${path}`);
      }
    });
  }

  it('names the header in the answer and logs the refusal (never the header values)', async () => {
    const r = await send(srv.url, 'GET', '/svc', ['host', host, 'authorization', bearer, 'authorization', 'Bearer junk']);
    const error = JSON.parse(r.body).error;
    assert.equal(error.header, 'authorization');
    assert.equal(error.reason, 'header_repeated');
    const line = srv.logs().find((l) => l.event === 'front_door.refused' && l.reason === 'header_repeated');
    assert.ok(line, 'a front_door.refused line');
    assert.ok(!JSON.stringify(line).includes('junk'));
  });
});
