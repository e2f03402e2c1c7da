// The server's direct paths (POST /mcp, POST /svc/tools/NAME without Express's router)
// must answer exactly as the Express routes do. The same requests go to serve() (direct
// paths on) and to createApp(...).app.listen() (Express only); answers must match.
import assert from 'node:assert/strict';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { FastSvc, createApp, serve, type AppHandle, type SvcServerConfig } from '../../src/index.js';

function build(): FastSvc {
  const svc = new FastSvc({ name: 'direct' });
  svc.tool({
    name: 'echo.say', description: 'Echo.', required_scopes: ['echo.use'],
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    handler: ({ text }) => String(text),
  });
  svc.tool({ name: 'echo.admin', description: 'Needs more.', required_scopes: ['echo.admin'], handler: () => 'x' });
  return svc;
}

const config: SvcServerConfig = {
  server: { body_limit: 256 },
  auth: { token: 'reader-token', scopes: ['echo.use'] },
  profile: { scopes: ['echo.use', 'echo.admin'] },
};

type Req = { path: string; headers?: Record<string, string>; body?: string | Buffer };
const auth = { authorization: 'Bearer reader-token', 'content-type': 'application/json' };
const CASES: Record<string, Req> = {
  'a good call': { path: '/svc/tools/echo.say', headers: auth, body: '{"text":"hi"}' },
  'an empty body': { path: '/svc/tools/echo.say', headers: auth },
  'invalid JSON': { path: '/svc/tools/echo.say', headers: auth, body: '{"text":' },
  'a body over the limit': { path: '/svc/tools/echo.say', headers: auth, body: JSON.stringify({ text: 'x'.repeat(400) }) },
  'a compressed body': { path: '/svc/tools/echo.say', headers: { ...auth, 'content-encoding': 'gzip' }, body: gzipSync('{"text":"hi"}') },
  'no token': { path: '/svc/tools/echo.say', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' },
  'a wrong token': { path: '/svc/tools/echo.say', headers: { ...auth, authorization: 'Bearer nope' }, body: '{"text":"hi"}' },
  'a missing scope': { path: '/svc/tools/echo.admin', headers: auth, body: '{}' },
  'an unknown tool': { path: '/svc/tools/echo.nope', headers: auth, body: '{}' },
  'a token in the query': { path: '/svc/tools/echo.say?access_token=reader-token', headers: { 'content-type': 'application/json' }, body: '{"text":"hi"}' },
  'a foreign Host': { path: '/svc/tools/echo.say', headers: { ...auth, host: 'evil.example.com' }, body: '{"text":"hi"}' },
  'a foreign Origin on /mcp': { path: '/mcp', headers: { ...auth, origin: 'http://evil.example.com', accept: 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
  '/mcp without a session': { path: '/mcp', headers: { ...auth, accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
  '/mcp with a wrong token': { path: '/mcp', headers: { ...auth, authorization: 'Bearer nope', accept: 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
  '/mcp with invalid JSON': { path: '/mcp', headers: { ...auth, accept: 'application/json' }, body: '{' },
};

/** node:http rather than fetch, which would drop a Host header of our choosing. */
function send(base: string, r: Req): Promise<{ status: number; challenge: string | undefined; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: r.path, method: 'POST', headers: r.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, challenge: res.headers['www-authenticate'], body }));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

describe('direct paths answer exactly as the Express routes', () => {
  let direct: Awaited<ReturnType<typeof serve>>;
  let expressOnly: { handle: AppHandle; server: Server; base: string };

  before(async () => {
    direct = await serve(build(), config, { host: '127.0.0.1', port: 0 });
    const handle = await createApp(build(), config);
    const server = await new Promise<Server>((resolve) => {
      const s = handle.app.listen(0, '127.0.0.1', () => resolve(s as unknown as Server));
    });
    expressOnly = { handle, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  });

  after(async () => {
    await direct.close();
    await expressOnly.handle.close();
    expressOnly.server.closeAllConnections();
    await new Promise((r) => expressOnly.server.close(r));
  });

  for (const [name, req] of Object.entries(CASES)) {
    it(name, async () => {
      const a = await send(direct.url, req);
      const b = await send(expressOnly.base, req);
      assert.equal(a.status, b.status);
      assert.equal(a.challenge, b.challenge);
      // Error bodies may carry a request id only for 500s, which no case here produces.
      assert.deepEqual(JSON.parse(a.body || 'null'), JSON.parse(b.body || 'null'));
    });
  }

  it('covers the answers that matter (the table is not vacuous)', async () => {
    const statuses = await Promise.all(Object.values(CASES).map((r) => send(direct.url, r).then((x) => x.status)));
    assert.deepEqual([...new Set(statuses)].sort(), [200, 400, 401, 403, 404, 413]);
  });
});
