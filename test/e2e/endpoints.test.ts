// Named endpoints through the real `svc serve`: the MCP SDK 1.x client (2025-11-25 session) and the v2 client
// (2026-07-28) on /mcp/notes see only the endpoint's selection — listings, calls, reads, prompts, completions,
// subscriptions — with the endpoint's server name and instructions; a 2025 session id is unknown on another
// endpoint; a direct endpoint limited to one source (the Petstore `openapi` source, or the manifest's own) lists
// exactly that source; the endpoint's required_scopes are checked at the door (403 insufficient_scope naming them,
// one access.denied line saying which endpoint refused whom); a task made through one endpoint is not visible through
// another whose view lacks its tool; /ws/NAME and /svc/NAME serve the same views.

import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { run } from '../helpers/cli.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ALL = 'endpoints-e2e-all-0123456789';
const NOTES_ONLY = 'endpoints-e2e-notes-0123456789';

const MANIFEST = `
version: 1
name: house
routes:
  protected: [/svc, /mcp, /ws]
profile:
  scopes: [notes.read, ops, pets.read]
auth:
  tokens:
    - { name: all, token: ${ALL}, scopes: [notes.read, ops, pets.read] }
    - { name: reader, token: ${NOTES_ONLY}, scopes: [notes.read] }
tools:
  - { name: notes.hello, description: Greets., input_schema: { type: object, properties: { who: { type: string } } }, template: "Hello, {{who}}!" }
  - { name: notes.job, description: A job., task: required, template: "done" }
  - { name: ops.restart, description: Restarts., required_scopes: [ops], template: "restarted" }
resources:
  - { uri: "file:///notes/today", name: today, text: "buy milk" }
  - { uri: "file:///ops/log", name: log, text: "all quiet" }
prompts:
  - name: notes.summary
    description: Summarises a topic.
    arguments: [{ name: topic, required: true, values: [groceries, garden, gym] }]
    messages: [{ role: user, text: "Summarise {{topic}}" }]
openapi:
  - name: pets
    document: petstore-3.0.yaml
    base_url: http://127.0.0.1:9/api/v3
    required_scopes: [pets.read]
endpoints:
  notes:
    server_name: Notes
    instructions: Only notes here.
    select: { names: ["notes.*", "file:///notes/*"] }
  ops:
    required_scopes: [ops]
    select: { names: ["ops.*", "file:///ops/*"] }
  pets:
    select: { sources: [pets] }
  own:
    select: { sources: [manifest] }
`;

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function legacy(url: string, token: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'endpoints-e2e', version: '1' });
  await client.connect(new LegacyTransport(new URL(url), { requestInit: { headers: auth(token) } }));
  return client;
}

describe('named endpoints (real svc serve, real clients)', function () {
  this.timeout(60_000);
  let srv: Served;

  before(async () => {
    srv = await serveManifest(MANIFEST, { copy: { 'petstore-3.0.yaml': 'test/fixtures/openapi/petstore-3.0.yaml' } });
  });
  after(() => srv?.stop());

  it('SDK 1.x on /mcp/notes: its name and instructions, and only its tools, resources and prompts — calls, reads, gets, completions, subscriptions', async () => {
    const client = await legacy(`${srv.url}/mcp/notes`, ALL);
    try {
      assert.deepEqual(client.getServerVersion()?.name, 'Notes');
      assert.equal(client.getInstructions(), 'Only notes here.');
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['notes.hello', 'notes.job']);
      assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), ['file:///notes/today']);
      assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['notes.summary']);
      const called = await client.callTool({ name: 'notes.hello', arguments: { who: 'Ann' } });
      assert.deepEqual(called.content, [{ type: 'text', text: 'Hello, Ann!' }]);
      // Outside the endpoint a tool does not exist: what an unknown name gets.
      await assert.rejects(client.callTool({ name: 'ops.restart', arguments: {} }), /no tool named ops\.restart/);
      assert.deepEqual((await client.readResource({ uri: 'file:///notes/today' })).contents.map((c) => (c as { text: string }).text), ['buy milk']);
      await assert.rejects(client.readResource({ uri: 'file:///ops/log' }), /no resource file:\/\/\/ops\/log/);
      const got = await client.getPrompt({ name: 'notes.summary', arguments: { topic: 'garden' } });
      assert.match(JSON.stringify(got.messages), /Summarise garden/);
      const done = await client.complete({ ref: { type: 'ref/prompt', name: 'notes.summary' }, argument: { name: 'topic', value: 'g' } });
      assert.deepEqual(done.completion.values, ['groceries', 'garden', 'gym']);
      await client.subscribeResource({ uri: 'file:///notes/today' });
      await assert.rejects(client.subscribeResource({ uri: 'file:///ops/log' }), /no resource/);
    } finally {
      await client.close();
    }
  });

  it('the v2 client (2026-07-28) on /mcp/notes lists and calls only the selection; the default /mcp lists everything', async () => {
    const modern = async (path: string) => {
      const client = new ModernClient({ name: 'endpoints-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new ModernTransport(new URL(`${srv.url}${path}`), { authProvider: { token: async () => ALL } }));
      return client;
    };
    const notes = await modern('/mcp/notes');
    const whole = await modern('/mcp');
    try {
      assert.equal(notes.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.deepEqual((await notes.listTools()).tools.map((t) => t.name).sort(), ['notes.hello', 'notes.job']);
      const r = await notes.callTool({ name: 'notes.hello', arguments: { who: 'Bo' } });
      assert.deepEqual(r.content, [{ type: 'text', text: 'Hello, Bo!' }]);
      await assert.rejects(notes.callTool({ name: 'ops.restart', arguments: {} }), /no tool named ops\.restart/);
      const all = (await whole.listTools()).tools.map((t) => t.name);
      assert.ok(all.includes('ops.restart') && all.includes('notes.hello') && all.some((n) => !n.startsWith('notes.') && !n.startsWith('ops.')), JSON.stringify(all));
    } finally {
      await notes.close();
      await whole.close();
    }
  });

  it('a 2025 session is bound to the endpoint it was opened on: its id is unknown (404) on another endpoint and on /mcp', async () => {
    const init = await fetch(`${srv.url}/mcp/notes`, {
      method: 'POST', headers: { ...auth(ALL), ...JSON_HEADERS },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bind', version: '1' } } }),
    });
    const sid = init.headers.get('mcp-session-id');
    assert.ok(sid);
    const list = (path: string) => fetch(`${srv.url}${path}`, {
      method: 'POST', headers: { ...auth(ALL), ...JSON_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    assert.equal((await list('/mcp/notes')).status, 200);
    assert.equal((await list('/mcp/ops')).status, 404);
    assert.equal((await list('/mcp')).status, 404);
  });

  it('a direct endpoint limited to one source lists exactly that source (the openapi source; the manifest\'s own)', async () => {
    const list = async (path: string) => ((await (await fetch(`${srv.url}${path}`, { headers: auth(ALL) })).json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
    const everything = await list('/svc');
    const pets = await list('/svc/pets');
    const own = await list('/svc/own');
    assert.deepEqual(own, ['notes.hello', 'notes.job', 'ops.restart']);
    assert.ok(pets.length > 5, JSON.stringify(pets));
    assert.deepEqual([...pets, ...own].sort(), everything, 'the two sources partition the catalog');
    const client = await legacy(`${srv.url}/mcp/pets`, ALL);
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), pets);
      assert.deepEqual((await client.listResources()).resources, []);
    } finally {
      await client.close();
    }
  });

  it('the endpoint\'s required_scopes at the door: 403 insufficient_scope naming them on /mcp, /svc and /ws, logged as which endpoint refused whom', async () => {
    const mcp = await fetch(`${srv.url}/mcp/ops`, {
      method: 'POST', headers: { ...auth(NOTES_ONLY), ...JSON_HEADERS },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'door', version: '1' } } }),
    });
    assert.equal(mcp.status, 403);
    assert.match(mcp.headers.get('www-authenticate') ?? '', /^Bearer .*error="insufficient_scope".*scope="ops"/);
    const svc = await fetch(`${srv.url}/svc/ops`, { headers: auth(NOTES_ONLY) });
    assert.equal(svc.status, 403);
    assert.equal(((await svc.json()) as { error: { code: string } }).error.code, 'INSUFFICIENT_SCOPE');
    const ws = await new Promise<number>((resolve) => {
      const s = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws/ops`, 'mcp', { headers: auth(NOTES_ONLY) });
      s.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
      s.on('open', () => {
        s.close();
        resolve(101);
      });
      s.on('error', () => {});
    });
    assert.equal(ws, 403);
    const line = await waitFor(() => srv.logs().find((l) => l.event === 'access.denied' && l.kind === 'endpoint' && l.name === 'ops' && l.sub === 'reader'), 'the door\'s access.denied line');
    assert.deepEqual(line.missing, ['ops']);
    // The same caller is let in where it holds what the endpoint asks.
    assert.equal((await fetch(`${srv.url}/svc/notes`, { headers: auth(NOTES_ONLY) })).status, 200);
  });

  it('/svc/NAME and /ws/NAME serve the same view; a task made through one endpoint is not visible through another whose view lacks its tool', async () => {
    const started = await fetch(`${srv.url}/svc/notes/tools/notes.job`, { method: 'POST', headers: { ...auth(ALL), 'content-type': 'application/json' }, body: '{}' });
    assert.equal(started.status, 202);
    const location = started.headers.get('location')!;
    assert.match(location, /^\/svc\/notes\/tasks\//);
    const id = location.split('/').pop()!;
    assert.equal((await fetch(`${srv.url}/svc/notes/tasks/${id}`, { headers: auth(ALL) })).status, 200);
    assert.equal((await fetch(`${srv.url}/svc/pets/tasks/${id}`, { headers: auth(ALL) })).status, 404);
    assert.equal((await fetch(`${srv.url}/svc/tasks/${id}`, { headers: auth(ALL) })).status, 200, 'the default endpoint serves every tool');
    const called = await fetch(`${srv.url}/svc/notes/tools/ops.restart`, { method: 'POST', headers: { ...auth(ALL), 'content-type': 'application/json' }, body: '{}' });
    assert.equal(called.status, 404);

    const s = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws/notes`, 'mcp', { headers: auth(ALL) });
    const answers = new Map<number, Record<string, unknown>>();
    const waiters = new Map<number, () => void>();
    s.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown> };
      if (typeof m.id === 'number' && m.result) {
        answers.set(m.id, m.result);
        waiters.get(m.id)?.();
      }
    });
    const ask = (id: number, method: string, params: Record<string, unknown>) => new Promise<Record<string, unknown>>((resolve) => {
      waiters.set(id, () => resolve(answers.get(id)!));
      s.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    await new Promise((resolve, reject) => {
      s.on('open', resolve);
      s.on('error', reject);
    });
    try {
      const init = await ask(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } });
      assert.equal((init.serverInfo as { name: string }).name, 'Notes');
      s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const tools = await ask(2, 'tools/list', {});
      assert.deepEqual((tools.tools as { name: string }[]).map((t) => t.name).sort(), ['notes.hello', 'notes.job']);
    } finally {
      s.close();
    }
  });

  it('explain knows endpoints (GET /svc/explain?endpoint=, the CLI\'s --endpoint, each endpoint without it); diff reports a new endpoint and a widened selection as widenings', async () => {
    type Ex = { capabilities: { id: string; visible: boolean; reasons: string[] }[]; endpoint?: { enters: boolean; missing?: string[] }; endpoints?: { name: string; enters: boolean; visible: string[] }[] };
    const explain = async (q: string, token: string) => (await (await fetch(`${srv.url}/svc/explain${q}`, { headers: auth(token) })).json()) as Ex;
    const ops = await explain('?endpoint=ops', NOTES_ONLY);
    assert.deepEqual([ops.endpoint?.enters, ops.endpoint?.missing], [false, ['ops']]);
    assert.ok(ops.capabilities.every((c) => !c.visible), 'nothing is reached through a door the caller cannot pass');
    const each = await explain('', NOTES_ONLY);
    assert.deepEqual(each.endpoints?.find((e) => e.name === 'notes')?.visible.sort(), ['prompt:notes.summary', 'resource:file:///notes/today', 'tool:notes.hello', 'tool:notes.job']);
    assert.equal(each.endpoints?.find((e) => e.name === 'ops')?.enters, false);
    const cli = await run(['explain', srv.file, '--scopes', 'notes.read ops', '--endpoint', 'ops', '--json', '--allow-unset-env']);
    assert.equal(cli.code, 0, cli.stderr);
    const viaCli = JSON.parse(cli.stdout) as Ex;
    assert.deepEqual(viaCli.capabilities.map((c) => c.id), ['resource:file:///ops/log', 'tool:ops.restart']);
    const refused = await run(['explain', srv.file, '--scopes', 'notes.read ops', '--endpoint', 'ops', '--capability', 'tool:notes.hello', '--allow-unset-env']);
    assert.equal(refused.code, 1, 'outside the endpoint the capability does not exist');
    assert.match(refused.stderr, /no capability tool:notes\.hello/);
    const door = await run(['explain', srv.file, '--scopes', 'notes.read', '--endpoint', 'ops', '--capability', 'tool:ops.restart', '--allow-unset-env']);
    assert.equal(door.code, 1, 'a caller the door refuses is refused there, first');
    assert.match(door.stdout, /^tool:ops\.restart: refused — INSUFFICIENT_SCOPE: endpoint ops requires scope ops at its door/);

    const wider = MANIFEST.replace('select: { names: ["ops.*", "file:///ops/*"] }', 'select: { names: ["ops.*", "file:///ops/*", "notes.hello"] }')
      .replace('  own:\n', '  extra:\n    select: { names: ["notes.*"] }\n  own:\n');
    const next = join(srv.dir, 'wider.yaml');
    writeFileSync(next, wider);
    const diff = await run(['diff', srv.file, next, '--json', '--fail-on-widen', '--allow-unset-env']);
    assert.equal(diff.code, 3, diff.stderr);
    const widenings = (JSON.parse(diff.stdout) as { widenings: { capability: string }[] }).widenings.map((w) => w.capability);
    assert.ok(widenings.includes('endpoint:ops:tool:notes.hello'), JSON.stringify(widenings));
    assert.ok(widenings.includes('endpoint:extra'), JSON.stringify(widenings));
  });
});
