// Hostile input against the real `svc serve` (node dist/cli.js, port 0), spoken to over
// raw TCP sockets because well-behaved clients cannot send it: a Host header that is
// not host[:port] is answered 400 INVALID_HOST on every route and on the /ws upgrade
// (the direct paths included); a client that trickles its headers one byte a second is
// disconnected by the server (server.headers_timeout_ms); a client that disconnects
// mid-body is logged as `request.aborted` at info, never as an error with a stack.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { CLI } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret(randomBytes(18).toString('base64url'));
const BAD_HOSTS = ['a@b', 'x/y', 'h#f', 'h:70000'];

interface RawAnswer { status: number; head: string; body: string }

/** Writes `request` on a fresh socket, reads until the socket closes (the server's doing unless `request` destroys it), and parses the status line. */
function raw(port: number, request: string | ((sock: net.Socket) => void)): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (text += c));
    sock.on('error', reject);
    sock.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body });
    });
    sock.on('connect', () => {
      if (typeof request === 'string') sock.write(request);
      else request(sock);
    });
  });
}

const codeOf = (a: RawAnswer) => (JSON.parse(a.body) as { error: { code: string } }).error.code;

describe('hostile clients against svc serve', function () {
  this.timeout(30_000);
  let s: Served;
  let port: number;

  before(async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    s = await serveManifest({
      version: 1,
      name: 'hostile',
      description: 'Hostile-input test service.',
      server: { host: '127.0.0.1', headers_timeout_ms: 1000, request_timeout_ms: 2000 },
      profile: { scopes: ['x.use'] },
      auth: { token: TOKEN },
      tools: [{ name: 'x', description: 'Says x.', required_scopes: ['x.use'], template: 'x' }],
    }, { args: ['--no-watch'], env: { LOG_LEVEL: 'debug', NODE_ENV: 'production' } });
    port = Number(new URL(s.url).port);
  });
  after(() => s?.stop());

  const requests = (host: string): [string, string][] => {
    const post = (path: string, body: string, extra = '') =>
      `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    return [
      ['GET /healthz', `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`],
      ['POST /mcp', post('/mcp', init, 'Accept: application/json, text/event-stream\r\n')],
      ['POST /svc/tools/x', post('/svc/tools/x', '{}')],
      ['the /ws upgrade', `GET /ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`],
    ];
  };

  for (const host of BAD_HOSTS) {
    it(`Host: ${host} is 400 INVALID_HOST on every route and on the /ws upgrade`, async () => {
      for (const [what, req] of requests(host)) {
        const a = await raw(port, req);
        assert.equal(a.status, 400, `${what}: ${a.head}`);
        assert.equal(codeOf(a), 'INVALID_HOST', what);
      }
    });
  }

  it('the same requests with a valid Host are served (the Host made the difference)', async () => {
    const expected: Record<string, number> = { 'GET /healthz': 200, 'POST /mcp': 200, 'POST /svc/tools/x': 200, 'the /ws upgrade': 101 };
    for (const [what, req] of requests(`127.0.0.1:${port}`)) {
      const a = await raw(port, (sock) => {
        sock.write(req);
        if (what === 'the /ws upgrade') sock.once('data', () => sock.destroy());
      });
      assert.equal(a.status, expected[what], `${what}: ${a.head}`);
    }
  });

  it('a client sending one header byte a second is disconnected by the server (408)', async () => {
    let timer: NodeJS.Timeout | undefined;
    const a = await raw(port, (sock) => {
      sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      timer = setInterval(() => sock.writable && sock.write('a'), 1000);
    });
    clearInterval(timer); // raw() resolved: the socket closed, and this side never closes it
    assert.equal(a.status, 408, a.head);
  });

  it('a client that disconnects mid-body is logged as request.aborted at info, with no error line or stack', async () => {
    for (const path of ['/svc/tools/x', '/mcp']) {
      const before = s.logs().filter((l) => l.event === 'request.aborted').length;
      const sock = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => {
        sock.on('error', reject);
        sock.on('connect', () => sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: 1000\r\n\r\n`));
        // The server says 100 Continue just before it hands the request to its handler: the body is awaited now.
        sock.once('data', (c) => {
          assert.match(String(c), /^HTTP\/1\.1 100 /);
          sock.write('{"half": ', () => resolve());
        });
      });
      sock.destroy();
      const line = await waitFor(() => s.logs().filter((l) => l.event === 'request.aborted')[before], `request.aborted after a cut ${path} body`);
      assert.equal(line.level, 30, 'logged at info');
    }
    const bad = s.logs().filter((l) => (l.level as number) >= 50 || JSON.stringify(l).includes('    at '));
    assert.deepEqual(bad, [], 'no error-level line and no stack');
  });
});
