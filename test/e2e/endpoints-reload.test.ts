// Named endpoints across a reload, through the real `svc serve` (watching its manifest):
// - list_changed per endpoint: SDK 1.x sessions on /mcp/a and /mcp/b; a reload that adds a tool only a selects
//   notifies a's session and not b's. "Not b" is shown by order on b's own GET stream, not by waiting: b is subscribed
//   to a resource of its own, and a second reload that changes only that resource's text sends b resources/updated —
//   anything the first reload had sent b would have come before it on the same stream, and nothing did; a third
//   reload that adds a tool to b's selection is then b's first tools/list_changed, and the tools/list b asks for when
//   it arrives holds that tool.
// - the door kept after entering: a reload that adds required_scopes to endpoint ops, which a caller lacks, closes
//   its open /ws/ops socket with 4403 (naming the scope), ends its /mcp/ops 2025 session's GET stream (the session is
//   gone: its id then gets the door's 403) and ends its 2026-07-28 listen stream on /mcp/ops with the door's
//   INSUFFICIENT_SCOPE as the listen's error — each before any notification of that change — and logs
//   access.denied (kind endpoint) for each; a caller holding the scope keeps its socket and session.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { frames, getStreamWatch } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const ALL = secret(randomBytes(24).toString('base64url'));
const PLAIN = secret(randomBytes(24).toString('base64url'));
const V2026 = '2026-07-28';

interface Shape { a?: string[]; b?: string[]; note?: string; opsScopes?: string[] }

const tool = (name: string) => ({ name, description: `Tool ${name}.`, template: name });
const manifest = (s: Shape = {}) => ({
  version: 1,
  name: 'house',
  routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp', '/ws'] },
  profile: { scopes: ['base', 'ops'] },
  auth: { tokens: [{ name: 'all', token: '${ALL}', scopes: ['base', 'ops'] }, { name: 'plain', token: '${PLAIN}', scopes: ['base'] }] },
  tools: [...(s.a ?? ['a.one']).map(tool), ...(s.b ?? ['b.one']).map(tool), tool('ops.restart')],
  resources: [{ uri: 'file:///b/notes', name: 'notes', text: s.note ?? 'first' }],
  endpoints: {
    a: { select: { names: ['a.*'] } },
    b: { select: { names: ['b.*', 'file:///b/*'] } },
    ops: { ...(s.opsScopes && { required_scopes: s.opsScopes }), select: { names: ['ops.*'] } },
  },
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe('named endpoints across a reload (svc serve watching its manifest)', function () {
  this.timeout(60_000);
  let srv: Served;
  const hash = async () => ((await (await fetch(`${srv.url}/readyz`)).json()) as { config_hash: string }).config_hash;
  /** Writes the manifest and waits until the server serves it (a new config hash). */
  const reload = async (s: Shape) => {
    const before = await hash();
    srv.write(manifest(s));
    await waitFor(async () => ((await hash()) !== before ? true : undefined), 'the reload', 10_000);
  };
  const legacy = async (path: string, token: string, setup: (c: Client) => void = () => {}) => {
    const client = new Client({ name: 'endpoints-reload', version: '1' });
    setup(client);
    const stream = getStreamWatch();
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}${path}`), { requestInit: { headers: auth(token) }, fetch: stream.fetch });
    await client.connect(transport);
    await stream.opened(); // the session's GET stream carries list_changed and resources/updated
    return { client, transport };
  };

  beforeEach(async () => {
    srv = await serveManifest(manifest(), { env: { ALL, PLAIN } });
  });
  afterEach(() => srv?.stop());

  it('a reload that changes only what a selects notifies a\'s session and not b\'s (b\'s first list_changed is the reload that changed b)', async () => {
    const aChanged: number[] = [];
    const bEvents: string[] = [];
    let bListedAtFirst: Promise<string[]> | undefined;
    const a = await legacy('/mcp/a', ALL, (c) => c.setNotificationHandler(ToolListChangedNotificationSchema, () => void aChanged.push(1)));
    const b = await legacy('/mcp/b', ALL, (c) => {
      c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        bEvents.push('tools/list_changed');
        bListedAtFirst ??= c.listTools().then((r) => r.tools.map((t) => t.name).sort());
      });
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void bEvents.push(`resources/updated ${n.params.uri}`));
    });
    try {
      await b.client.subscribeResource({ uri: 'file:///b/notes' });
      assert.deepEqual((await b.client.listTools()).tools.map((t) => t.name), ['b.one']);

      await reload({ a: ['a.one', 'a.two'] });
      await waitFor(() => (aChanged.length ? true : undefined), 'a\'s tools/list_changed');
      assert.deepEqual((await a.client.listTools()).tools.map((t) => t.name).sort(), ['a.one', 'a.two']);

      // The anchor on b's own stream: a change of b's resource only. What the first reload sent b came before it.
      await reload({ a: ['a.one', 'a.two'], note: 'second' });
      await waitFor(() => (bEvents.length ? true : undefined), 'b\'s resources/updated');
      assert.deepEqual(bEvents, ['resources/updated file:///b/notes'], 'the reload that changed only a told b nothing');

      await reload({ a: ['a.one', 'a.two'], b: ['b.one', 'b.two'], note: 'second' });
      await waitFor(() => (bListedAtFirst ? true : undefined), 'b\'s tools/list_changed');
      assert.deepEqual(await bListedAtFirst, ['b.one', 'b.two'], 'b\'s first list_changed came with the reload that changed b');
      assert.deepEqual(bEvents, ['resources/updated file:///b/notes', 'tools/list_changed']);
    } finally {
      for (const s of [a, b]) {
        await s.transport.terminateSession().catch(() => undefined);
        await s.client.close();
      }
    }
  });

  it('a reload that adds required_scopes to an endpoint shuts a caller without them out of what it holds open there: /ws (4403), the /mcp 2025 session and its GET stream, the 2026 listen stream', async () => {
    // /ws/ops for a caller without `ops`, and for one with it.
    const socket = async (token: string) => {
      const ws = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws/ops`, 'mcp', { headers: auth(token) });
      const messages: Record<string, any>[] = [];
      const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
      ws.on('message', (d) => void messages.push(JSON.parse(String(d))));
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      let id = 0;
      const ask = async (method: string, params: Record<string, unknown> = {}) => {
        const n = ++id;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }));
        return waitFor(() => messages.find((m) => m.id === n), `the answer to ${method}`);
      };
      await ask('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } });
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      return { ws, messages, closed, ask };
    };
    const shut = await socket(PLAIN);
    const kept = await socket(ALL);
    assert.deepEqual((await shut.ask('tools/list')).result.tools.map((t: { name: string }) => t.name), ['ops.restart']);

    // A 2025 session on /mcp/ops and its GET stream, opened by hand so the stream's end is seen.
    const post = (body: unknown, extra: Record<string, string> = {}) => fetch(`${srv.url}/mcp/ops`, {
      method: 'POST', headers: { ...auth(PLAIN), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra }, body: JSON.stringify(body),
    });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'by-hand', version: '1' } } });
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    const inSession = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, inSession)).status, 202);
    const get = await fetch(`${srv.url}/mcp/ops`, { headers: { ...auth(PLAIN), accept: 'text/event-stream', ...inSession } });
    assert.equal(get.status, 200);
    const getEvents: Record<string, unknown>[] = [];
    const getEnded = (async () => {
      for await (const f of frames(get.body!)) getEvents.push(f);
    })();
    const keptSession = await legacy('/mcp/ops', ALL);

    // A 2026-07-28 listen stream on /mcp/ops.
    const listen = await fetch(`${srv.url}/mcp/ops`, {
      method: 'POST',
      headers: { ...auth(PLAIN), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V2026, 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    assert.equal(listen.status, 200);
    const listened = frames(listen.body!);
    assert.equal((await listened.next()).value?.method, 'notifications/subscriptions/acknowledged');

    try {
      // One reload: the door now asks for `ops`, and ops's tools change (which its listeners would otherwise hear of).
      await reload({ opsScopes: ['ops'], a: ['a.one', 'ops.more'] });
      const closed = await shut.closed;
      assert.equal(closed.code, 4403);
      assert.match(closed.reason, /endpoint ops requires scope ops/);
      assert.ok(!shut.messages.some((m) => m.method === 'notifications/tools/list_changed'), 'the socket heard nothing of the change');

      await getEnded;
      assert.deepEqual(getEvents, [], 'the GET stream ended without carrying the change');

      const rest: Record<string, any>[] = [];
      for await (const f of listened) rest.push(f);
      assert.equal(rest.length, 1, JSON.stringify(rest));
      assert.equal(rest[0]!.id, 9);
      assert.equal(rest[0]!.error?.data?.code, 'INSUFFICIENT_SCOPE', JSON.stringify(rest[0]));

      // One access.denied line for each thing shut: the socket, the session, the listen.
      const denied = () => srv.logs().filter((l) => l.event === 'access.denied' && l.kind === 'endpoint' && l.name === 'ops' && l.sub === 'plain').map((l) => l.transport);
      await waitFor(() => (denied().length >= 3 ? true : undefined), 'three access.denied lines');
      assert.deepEqual(denied().sort(), ['mcp', 'mcp', 'ws']);
      const again = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, inSession);
      assert.equal(again.status, 403, 'the session\'s id now meets the door');
      assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'INSUFFICIENT_SCOPE');

      // A caller holding the scope keeps both, and sees the change.
      assert.deepEqual((await kept.ask('tools/list')).result.tools.map((t: { name: string }) => t.name).sort(), ['ops.more', 'ops.restart']);
      assert.deepEqual((await keptSession.client.listTools()).tools.map((t) => t.name).sort(), ['ops.more', 'ops.restart']);
    } finally {
      kept.ws.close();
      await keptSession.transport.terminateSession().catch(() => undefined);
      await keptSession.client.close();
    }
  });
});
