// MCP Apps (io.modelcontextprotocol/ui) through the real `svc serve` with the real MCP SDK clients:
// @modelcontextprotocol/sdk 1.x (2025-11-25, initialize + session) and @modelcontextprotocol/client
// 2.x (2026-07-28, capabilities in each request's _meta), each once declaring the extension and
// once not. Asserted: the extension is advertised in both eras; a client that declares it sees a
// tool's _meta.ui.resourceUri, the app-only tool (and may call it), the view among resources with
// its _meta.ui, and reads the view as text/html;profile=mcp-app with _meta.ui; a client that does
// not declare it sees none of that and is refused the app-only tool as unknown; reading a view
// without its scope is refused on /mcp (both eras), /svc and /ws, and allowed with it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const VIEW = 'ui://views/orders.html';
const PAGE = '<!DOCTYPE html>\n<html><body><h1>Orders</h1><button id="refresh">Refresh</button></body></html>\n';
const APPS_CAPS = { extensions: { [UI]: { mimeTypes: [MIME] } } };

const MANIFEST = `name: shop
version: 1
description: MCP Apps end to end
auth:
  tokens:
    - { name: clerk, token: "\${CLERK_TOKEN}", scopes: [orders.read] }
    - { name: guest, token: "\${GUEST_TOKEN}", scopes: [] }
profile:
  scopes: [orders.read]
tools:
  - name: orders.list
    description: The open orders
    output_mode: json
    template: '{"rows": [{"id": 1, "item": "tea"}]}'
    required_scopes: [orders.read]
    ui:
      view: views/orders.html
      csp: { connect_domains: ["https://api.example.com"] }
      prefers_border: true
  - name: orders.refresh
    description: Refreshes the orders view
    template: refreshed
    required_scopes: [orders.read]
    ui: { visibility: [app] }
  - name: greet
    description: Says hello
    input_schema: { type: object, properties: { name: { type: string } } }
    template: "Hello, {{name}}!"
    ui: { template: "<p>Hello, {{input.name}}</p>" }
`;

type Era = 'legacy' | 'modern';
interface Conn {
  tools(): Promise<{ name: string; _meta?: Record<string, unknown> }[]>;
  resources(): Promise<{ uri: string; mimeType?: string; _meta?: Record<string, unknown> }[]>;
  read(uri: string): Promise<{ uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> }[]>;
  call(name: string): Promise<{ content: unknown[] }>;
  serverCaps(): Record<string, unknown> | undefined;
  /** Every HTTP answer's status and WWW-Authenticate header, in order. */
  answers: { status: number; challenge: string | null }[];
  close(): Promise<void>;
}

async function connect(srv: Served, era: Era, token: string, apps: boolean): Promise<Conn> {
  const url = new URL(`${srv.url}/mcp`);
  const capabilities = apps ? APPS_CAPS : {};
  const answers: Conn['answers'] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    answers.push({ status: res.status, challenge: res.headers.get('www-authenticate') });
    return res;
  };
  if (era === 'legacy') {
    const client = new LegacyClient({ name: 'apps-e2e-1x', version: '1.0.0' }, { capabilities });
    await client.connect(new LegacyTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: recording }));
    assert.equal(client.getServerVersion()?.name, 'shop');
    return {
      tools: async () => (await client.listTools()).tools,
      resources: async () => (await client.listResources()).resources,
      read: async (uri) => (await client.readResource({ uri })).contents as never,
      call: async (name) => (await client.callTool({ name, arguments: {} })) as never,
      serverCaps: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
      answers,
      close: () => client.close(),
    };
  }
  const client = new ModernClient({ name: 'apps-e2e-2x', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(new ModernTransport(url, { authProvider: { token: async () => token }, fetch: recording }));
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return {
    tools: async () => (await client.listTools()).tools as never,
    resources: async () => (await client.listResources()).resources as never,
    read: async (uri) => (await client.readResource({ uri })).contents as never,
    call: async (name) => (await client.callTool({ name, arguments: {} })) as never,
    serverCaps: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
    answers,
    close: () => client.close(),
  };
}

/** The JSON-RPC error code a rejected SDK call carried. */
async function rpcCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (e) {
    return (e as { code: number }).code;
  }
  assert.fail('the call was not refused');
}

describe('MCP Apps views through svc serve (SDK 1.x and 2.x, both eras)', function () {
  this.timeout(60_000);
  let srv: Served;
  const clerk = secret(randomBytes(24).toString('base64url'));
  const guest = secret(randomBytes(24).toString('base64url'));

  before(async () => {
    srv = await serveManifest(MANIFEST, { files: { 'views/orders.html': PAGE }, env: { CLERK_TOKEN: clerk, GUEST_TOKEN: guest } });
  });
  after(() => srv?.stop());

  for (const era of ['legacy', 'modern'] as const) {
    const label = era === 'legacy' ? 'SDK 1.x, MCP 2025-11-25' : 'client 2.x, MCP 2026-07-28';

    it(`${label}: a client declaring the extension sees _meta.ui, the app-only tool and the view, and reads it`, async () => {
      const c = await connect(srv, era, clerk, true);
      try {
        assert.deepEqual((c.serverCaps()?.extensions as Record<string, unknown> | undefined)?.[UI], {}, 'the server advertises the extension');
        const tools = await c.tools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['greet', 'orders.list', 'orders.refresh']);
        assert.deepEqual(tools.find((t) => t.name === 'orders.list')!._meta?.ui, { resourceUri: VIEW, visibility: ['model', 'app'] });
        assert.deepEqual(tools.find((t) => t.name === 'orders.refresh')!._meta?.ui, { visibility: ['app'] });
        assert.deepEqual(tools.find((t) => t.name === 'greet')!._meta?.ui, { resourceUri: 'ui://greet', visibility: ['model', 'app'] });
        const listed = (await c.resources()).find((r) => r.uri === VIEW);
        assert.equal(listed?.mimeType, MIME);
        assert.deepEqual(listed?._meta?.ui, { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true });
        const [page] = await c.read(VIEW);
        assert.deepEqual(page, { uri: VIEW, mimeType: MIME, text: PAGE, _meta: { ui: { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true } } });
        const [shell] = await c.read('ui://greet');
        assert.equal(shell!.mimeType, MIME);
        assert.match(shell!.text!, /^<!DOCTYPE html>/);
        assert.ok(shell!.text!.includes('ui/initialize'));
        assert.deepEqual((await c.call('orders.refresh')).content, [{ type: 'text', text: 'refreshed' }], 'a view may call the app-only tool');
      } finally {
        await c.close();
      }
    });

    it(`${label}: a client not declaring it sees no _meta.ui, no app-only tool, and is refused that tool as unknown`, async () => {
      const c = await connect(srv, era, clerk, false);
      try {
        const tools = await c.tools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['greet', 'orders.list']);
        assert.ok(tools.every((t) => t._meta?.ui === undefined), JSON.stringify(tools));
        const listed = await c.resources();
        assert.ok(listed.some((r) => r.uri === VIEW), 'the view is still a resource');
        assert.ok(listed.every((r) => r._meta?.ui === undefined));
        const [page] = await c.read(VIEW);
        assert.deepEqual(page, { uri: VIEW, mimeType: MIME, text: PAGE });
        // The unknown-tool answer: -32602 (NOT_FOUND), the same as for a tool that does not exist.
        assert.equal(await rpcCode(c.call('orders.refresh')), -32602);
        assert.equal(await rpcCode(c.call('no.such.tool')), -32602);
      } finally {
        await c.close();
      }
    });

    it(`${label}: reading a view without its scope is refused (the tool's scope, by default)`, async () => {
      const c = await connect(srv, era, guest, true);
      try {
        await assert.rejects(c.read(VIEW));
        // Over HTTP a missing scope is the 403 insufficient_scope challenge (RFC 6750) naming it, for a step-up.
        const refusal = c.answers.at(-1)!;
        assert.equal(refusal.status, 403);
        assert.match(refusal.challenge ?? '', /error="insufficient_scope"/);
        assert.match(refusal.challenge ?? '', /scope="[^"]*orders\.read/);
        assert.ok(!(await c.resources()).some((r) => r.uri === VIEW), 'nor is it listed');
        assert.equal((await c.read('ui://greet'))[0]!.mimeType, MIME, 'a view of an open tool is open');
      } finally {
        await c.close();
      }
    });
  }

  it('/svc: a view is read with its scope (403 without), and an app-only tool is neither listed nor called', async () => {
    const get = (token: string, path: string) => fetch(`${srv.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await get(guest, `/svc/resources?uri=${encodeURIComponent(VIEW)}`)).status, 403);
    const ok = await get(clerk, `/svc/resources?uri=${encodeURIComponent(VIEW)}`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { contents: [{ uri: VIEW, mimeType: MIME, text: PAGE }] });
    const listing = await (await get(clerk, '/svc')).json() as { tools: { name: string }[] };
    assert.deepEqual(listing.tools.map((t) => t.name).sort(), ['greet', 'orders.list']);
    const call = await fetch(`${srv.url}/svc/tools/orders.refresh`, { method: 'POST', headers: { authorization: `Bearer ${clerk}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(call.status, 404);
  });

  it('/ws: a 2025 session declaring the extension lists the app-only tool; a view read without its scope is refused', async () => {
    const session = async (token: string) => {
      const ws = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
      const waiters = new Map<number, (m: Record<string, unknown>) => void>();
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as Record<string, unknown>;
        if (typeof m.id === 'number') waiters.get(m.id)?.(m);
      });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      let id = 0;
      const ask = (method: string, params: Record<string, unknown> = {}) => new Promise<Record<string, unknown>>((resolve) => {
        waiters.set(++id, resolve);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
      const init = await ask('initialize', { protocolVersion: '2025-11-25', capabilities: APPS_CAPS, clientInfo: { name: 'ws-apps', version: '1' } });
      assert.deepEqual(((init.result as { capabilities: { extensions: Record<string, unknown> } }).capabilities.extensions)[UI], {});
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      return { ask, close: () => ws.close() };
    };
    const asClerk = await session(clerk);
    const asGuest = await session(guest);
    try {
      const tools = ((await asClerk.ask('tools/list')).result as { tools: { name: string; _meta?: { ui?: unknown } }[] }).tools;
      assert.deepEqual(tools.find((t) => t.name === 'orders.refresh')?._meta?.ui, { visibility: ['app'] });
      const read = (await asClerk.ask('resources/read', { uri: VIEW })).result as { contents: { mimeType: string }[] };
      assert.equal(read.contents[0]!.mimeType, MIME);
      const refused = await asGuest.ask('resources/read', { uri: VIEW });
      assert.equal((refused.error as { code: number }).code, -32003);
    } finally {
      asClerk.close();
      asGuest.close();
    }
  });
});
