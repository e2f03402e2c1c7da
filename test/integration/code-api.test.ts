// The code door: FastSvc built in code, createApp(svc, config), app.listen() —
// the same routes, auth and transports as the manifest door, /ws included.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { FastSvc, createApp, type AppHandle } from '../../src/index.js';

describe('code API: createApp + app.listen', () => {
  let handle: AppHandle;
  let server: Server;
  let base: string;

  before(async () => {
    const svc = new FastSvc({ name: 'code-api' });
    svc.tool({
      name: 'notes.echo',
      description: 'Echoes text with the caller.',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      required_scopes: ['notes.read'],
      handler: async ({ text }, ctx) => `${ctx.principal.sub} said ${text}`,
    });
    svc.tool({ name: 'notes.wipe', description: 'Needs a scope the token lacks.', required_scopes: ['notes.admin'], handler: () => 'wiped' });
    handle = await createApp(svc, {
      auth: { token: 'code-token', subject: 'coder', scopes: ['notes.read'] },
      profile: { scopes: ['notes.read', 'notes.admin'] },
    });
    server = await new Promise<Server>((resolve) => {
      const s = handle.app.listen(0, '127.0.0.1', () => resolve(s as unknown as Server));
    });
    base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await handle.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('applies the schema defaults to a partial config', () => {
    assert.equal(handle.config.server.body_limit, '1mb');
    assert.deepEqual(handle.config.routes.protected, ['/svc', '/mcp', '/ws', '/metrics']);
  });

  it('serves /svc with the configured token and scopes', async () => {
    const ok = await fetch(`http://${base}/svc/tools/notes.echo`, { method: 'POST', headers: { authorization: 'Bearer code-token', 'content-type': 'application/json' }, body: '{"text":"hi"}' });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).result, 'coder said hi');
    const denied = await fetch(`http://${base}/svc/tools/notes.wipe`, { method: 'POST', headers: { authorization: 'Bearer code-token' } });
    assert.equal(denied.status, 403);
    assert.match(denied.headers.get('www-authenticate') ?? '', /^Bearer .*error="insufficient_scope".*scope="notes.admin"/);
  });

  it('serves /ws on the server app.listen() made', async () => {
    const ws = new WebSocket(`ws://${base}/ws`, 'mcp', { headers: { authorization: 'Bearer code-token' } });
    const answers = new Map<number, any>();
    const waiting = new Map<number, (v: any) => void>();
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.id !== undefined) (waiting.get(m.id) ?? ((v: any) => answers.set(m.id, v)))(m);
    });
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const call = (id: number, method: string, params: object) => new Promise<any>((resolve) => {
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    const init = await call(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    assert.equal(init.result.serverInfo.name, 'code-api');
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const res = await call(2, 'tools/call', { name: 'notes.echo', arguments: { text: 'over ws' } });
    assert.equal(res.result.content[0].text, 'coder said over ws');
    ws.close();
  });
});
