// Idle keep-alive connections through the real `svc serve` with the default server settings: the server
// advertises Keep-Alive: timeout=65 (server.keep_alive_timeout_ms, longer than a load balancer's 60 s idle
// timeout), and a connection idle for longer than the old 5 s default is still open and serves the next
// request on the same socket — a client that pauses (an SDK compiling validators, a person) never reuses a
// socket the server has just closed ("other side closed"). The pause is the property under test: a busy
// machine can only make it longer, never make the socket close sooner.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { Socket } from 'node:net';
import { serveManifest, type Served } from '../helpers/serve.js';

const TOKEN = 'keep-alive-token-0123456789abcdef';

function get(agent: http.Agent, url: string): Promise<{ status: number; keepAlive: string | undefined; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/svc`, { agent, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, keepAlive: res.headers['keep-alive'] as string | undefined, socket: req.socket! }));
    });
    req.on('error', reject);
  });
}

describe('keep-alive: idle connections outlast a client\'s pause (svc serve, default settings)', function () {
  this.timeout(60_000);
  let srv: Served;
  before(async () => {
    srv = await serveManifest({ version: 1, name: 'keep-alive', auth: { token: '${SVC_TOKEN}' }, tools: [{ name: 'k.ping', description: 'x', template: 'pong' }] }, { env: { SVC_TOKEN: TOKEN } });
  });
  after(() => srv?.stop());

  it('advertises timeout=65 and serves the next request on the same socket after a 6 s pause', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(agent, srv.url);
      assert.equal(first.status, 200);
      assert.equal(first.keepAlive, 'timeout=65');
      let closed = false;
      first.socket.once('close', () => (closed = true));
      await new Promise((r) => setTimeout(r, 6_000));
      assert.equal(closed, false, 'the idle socket is still open past the old 5 s default');
      const second = await get(agent, srv.url);
      assert.equal(second.status, 200);
      assert.equal(second.socket, first.socket, 'the same connection served the second request');
    } finally {
      agent.destroy();
    }
  });
});
