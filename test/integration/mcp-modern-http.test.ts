// MCP 2026-07-28 on /mcp over plain HTTP against the real `svc serve` (watching its manifest):
// GET and DELETE are 405 for a modern request and still serve 2025 sessions; a batch under a
// modern header is refused; a notification is 202; subscriptions/listen is an SSE stream that
// opens with the acknowledgement and then carries list_changed, tagged with the listen's id,
// when the manifest is edited — only the lists asked for; the server's shutdown ends the stream
// with the final response.

import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { serveManifest, type Served } from '../helpers/serve.js';
import { frames } from '../helpers/sse.js';

const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
const SUB = 'io.modelcontextprotocol/subscriptionId';

function manifest(tools: string[], prompts = ['p']): string {
  return stringify({
    version: 1, name: 'modern-http',
    routes: { public: ['/', '/healthz', '/mcp'], protected: [] },
    tools: tools.map((name) => ({ name, description: `tool ${name}`, template: name })),
    prompts: prompts.map((name) => ({ name, description: `prompt ${name}`, messages: [{ role: 'user', text: 'hi' }] })),
  });
}

describe('MCP 2026-07-28 over HTTP on the real server', function () {
  this.timeout(30_000);
  let file: string;
  let srv: Served;

  const write = (tools: string[], prompts?: string[]) => {
    writeFileSync(`${file}.tmp`, manifest(tools, prompts));
    renameSync(`${file}.tmp`, file);
  };
  const post = (body: unknown, headers: Record<string, string> = {}) => fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, ...headers },
    body: JSON.stringify(body),
  });

  before(async () => {
    srv = await serveManifest(manifest(['a']));
    file = srv.file;
  });

  after(() => srv?.stop());

  it('GET and DELETE answer 405 (Allow: POST) to a modern request; without a version header GET is still the 2025 session stream (400 without a session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${srv.url}/mcp`, { method, headers: { accept: 'text/event-stream', 'mcp-protocol-version': V } });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'POST');
    }
    const legacy = await fetch(`${srv.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    assert.equal(legacy.status, 400);
  });

  it('a batch under a modern header is 400; a notification is 202; no response mints a session', async () => {
    const batch = await post([{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }], { 'mcp-method': 'tools/list' });
    assert.equal(batch.status, 400);
    const note = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
    assert.equal(note.status, 202);
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } }, { 'mcp-method': 'tools/list' });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('mcp-session-id'), null);
    const body = await list.json() as { result: { tools: { name: string }[]; resultType: string; ttlMs: number; cacheScope: string } };
    assert.deepEqual(body.result.tools.map((t) => t.name), ['a']);
    assert.deepEqual([body.result.resultType, body.result.ttlMs, body.result.cacheScope], ['complete', 60000, 'public']);
  });

  it('subscriptions/listen: the acknowledgement first, then tools/list_changed tagged with the listen id after an edit, nothing for lists not asked for; shutdown sends the final response', async () => {
    const r = await post({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } }, { 'mcp-method': 'subscriptions/listen' });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const it = frames(r.body!);
    const ack = (await it.next()).value!;
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params, { _meta: { [SUB]: 'listen-1' }, notifications: { toolsListChanged: true } });

    write(['a', 'b'], ['p', 'q']); // tools and prompts both change; only tools were asked for
    const change = (await it.next()).value!;
    assert.deepEqual(change, { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUB]: 'listen-1' } } });

    const stopped = srv.stop();
    const final = (await it.next()).value!;
    assert.deepEqual(final, { jsonrpc: '2.0', id: 'listen-1', result: { resultType: 'complete', _meta: { [SUB]: 'listen-1' } } });
    assert.equal((await it.next()).done, true, 'the stream ends after the final response');
    assert.equal((await stopped).code, 0);
  });
});
