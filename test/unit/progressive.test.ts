// Progressive discovery at the MCP method layer (src/catalog/discovery.ts, meta-tools.ts, src/mcp/progressive.ts),
// over the real Runtime and a 2025 session without sockets: what auto decides; the first tools/list is the
// meta-tools; search_tools and describe_tools show only what the caller may call, and say the same for a hidden
// name as for an unknown one; call_tool is the real call (its answer and its refusal); load_tools lists tools in
// the session, notifies list_changed, and a reload that removes one drops it; a real tool named like a meta-tool
// is hidden by it but reached through call_tool. On GitHub's catalog (@octokit/openapi as an `openapi` source):
// the first tools/list costs at most 2,000 o200k tokens and a 5-match search answer at most 1,500.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog, type Catalog } from '../../src/core/catalog.js';
import type { DiscoverySettings, JsonSchemaObject, Principal } from '../../src/core/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { McpSession } from '../../src/mcp/protocol.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../src/mcp/jsonrpc.js';
import { discoveryOf, instructionsOf, PROGRESSIVE_INSTRUCTIONS } from '../../src/catalog/discovery.js';
import { textCost } from '../../src/catalog/catalog-cost.js';
import { loadManifest } from '../../src/manifest/index.js';
import { compileEndpoint } from '../../src/core/endpoint.js';
import { viewOf } from '../../src/catalog/endpoint-view.js';

const log = pino({ level: 'silent' });
const schema: JsonSchemaObject = { type: 'object', properties: { who: { type: 'string', description: 'who to greet' } }, required: ['who'] };

function app(discovery: DiscoverySettings | undefined, o: { drop?: string; shadow?: boolean; tools?: number } = {}): Catalog {
  const svc = new FastSvc({ name: 'unit', instructions: 'be nice', ...(discovery && { discovery }) });
  const add = (name: string, description: string, scopes: string[] = []) => {
    if (name !== o.drop) svc.tool({ name, description, input_schema: schema, required_scopes: scopes, handler: (i) => `${name}:${i.who}` });
  };
  add('greet.hello', 'Greets someone by name.', ['read']);
  add('greet.secret', 'Greets a secret agent by name.', ['admin']);
  add('notes.add', 'Adds a note about someone.', ['read']);
  for (let i = 0; i < (o.tools ?? 0); i++) add(`filler.t${i}`, `Filler tool number ${i}.`);
  if (o.shadow) svc.tool({ name: 'search_tools', description: 'A real tool named like the meta-tool.', handler: () => 'the real search_tools' });
  svc.prompt({ name: 'greet.prompt', description: 'A prompt that greets.', required_scopes: ['admin'], get: () => [] });
  return buildCatalog(svc);
}

const reader: Principal = { sub: 'r', kind: 'static', scopes: new Set(['read']) };
const admin: Principal = { sub: 'a', kind: 'static', scopes: new Set(['read', 'admin']) };

async function session(runtime: Runtime, sent: JsonRpcMessage[] = []): Promise<McpSession> {
  const s = new McpSession({ runtime, logger: log, transport: 'mcp', send: (m) => (sent.push(m), true) });
  await s.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, reader);
  await s.handle({ jsonrpc: '2.0', method: 'notifications/initialized' }, reader);
  return s;
}

let seq = 0;
async function rpc(s: McpSession, method: string, params: Record<string, unknown>, p = reader): Promise<JsonRpcResponse> {
  return (await s.handle({ jsonrpc: '2.0', id: ++seq, method, params }, p)) as JsonRpcResponse;
}
const meta = async (s: McpSession, name: string, args: Record<string, unknown>, p = reader) => (await rpc(s, 'tools/call', { name, arguments: args }, p)).result as { content: { text: string }[]; isError?: boolean };
const parsed = (r: { content: { text: string }[] }) => JSON.parse(r.content[0]!.text) as Record<string, unknown>;
const listed = async (s: McpSession, p = reader) => ((await rpc(s, 'tools/list', {}, p)).result as { tools: { name: string }[] }).tools.map((t) => t.name);

describe('progressive discovery', () => {
  it('decides per catalog: direct without a setting, progressive, and auto by tool count or by tokens', () => {
    assert.equal(discoveryOf(app(undefined)).progressive, false);
    assert.equal(discoveryOf(app({ mode: 'direct' })).progressive, false);
    assert.equal(discoveryOf(app({ mode: 'progressive' })).progressive, true);
    const few = discoveryOf(app({ mode: 'auto', auto_tools: 40, auto_tokens: 20000 }));
    assert.equal(few.progressive, false);
    assert.match(few.why, /^auto → direct: 3 tools \(auto_tools 40\), \d+ tokens/);
    assert.match(discoveryOf(app({ mode: 'auto', auto_tools: 40, auto_tokens: 20000 }, { tools: 41 })).why, /^auto → progressive: 44 tools, more than auto_tools 40/);
    assert.match(discoveryOf(app({ mode: 'auto', auto_tools: 40, auto_tokens: 50 })).why, /^auto → progressive: the listing costs \d+ tokens, more than auto_tokens 50/);
    assert.equal(instructionsOf(app(undefined)), 'be nice');
    assert.equal(instructionsOf(app({ mode: 'progressive' })), `be nice\n\n${PROGRESSIVE_INSTRUCTIONS}`);
  });

  it('lists the meta-tools; search and describe reveal only what the caller may call, a hidden name as an unknown one', async () => {
    const s = await session(new Runtime(app({ mode: 'progressive' }), { inlineLimit: 16384, logger: log }));
    assert.deepEqual(await listed(s), ['search_tools', 'describe_tools', 'call_tool', 'load_tools']);
    const found = parsed(await meta(s, 'search_tools', { query: 'greet someone' }));
    assert.deepEqual((found.matches as { name: string }[]).map((m) => m.name), ['greet.hello', 'notes.add']);
    assert.equal(found.total, 2);
    const m = (found.matches as Record<string, unknown>[])[0]!;
    assert.deepEqual(Object.keys(m).sort(), ['args', 'name', 'summary', 'why']);
    assert.equal(m.args, 'who');
    const asAdmin = parsed(await meta(s, 'search_tools', { query: 'greet someone' }, admin));
    assert.deepEqual((asAdmin.matches as { name: string }[]).map((x) => x.name).sort(), ['greet.hello', 'greet.secret', 'notes.add']);
    assert.equal(asAdmin.total, 3);
    // Prompts are searched the same way, under the same policy.
    assert.deepEqual(parsed(await meta(s, 'search_tools', { query: 'greet', kind: 'prompt' })).matches, []);
    assert.deepEqual((parsed(await meta(s, 'search_tools', { query: 'greet', kind: 'prompt' }, admin)).matches as { name: string }[]).map((x) => x.name), ['greet.prompt']);

    const described = parsed(await meta(s, 'describe_tools', { names: ['greet.hello', 'greet.secret'] }));
    assert.deepEqual((described.tools as { name: string; inputSchema: unknown }[]).map((t) => [t.name, t.inputSchema]), [['greet.hello', schema]]);
    assert.deepEqual(described.not_found, ['greet.secret']);
    const hidden = await meta(s, 'describe_tools', { names: ['greet.secret'] });
    const unknown = await meta(s, 'describe_tools', { names: ['greet.nothing'] });
    assert.equal(hidden.isError, true);
    assert.equal(hidden.content[0]!.text.replace('greet.secret', 'X'), unknown.content[0]!.text.replace('greet.nothing', 'X'));
    const bad = await meta(s, 'search_tools', { query: '' });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0]!.text, /^INVALID_INPUT/);
  });

  it('call_tool is the real call: its answer, and the refusal a direct call gets', async () => {
    const s = await session(new Runtime(app({ mode: 'progressive' }), { inlineLimit: 16384, logger: log }));
    assert.deepEqual((await rpc(s, 'tools/call', { name: 'call_tool', arguments: { name: 'greet.hello', arguments: { who: 'Ann' } } })).result, { content: [{ type: 'text', text: 'greet.hello:Ann' }] });
    for (const name of ['greet.secret', 'greet.nothing']) {
      const through = await rpc(s, 'tools/call', { name: 'call_tool', arguments: { name, arguments: { who: 'Ann' } } });
      const direct = await rpc(s, 'tools/call', { name, arguments: { who: 'Ann' } });
      assert.ok(through.error, name);
      assert.deepEqual({ ...through.error }, { ...direct.error });
    }
    const invalid = (await rpc(s, 'tools/call', { name: 'call_tool', arguments: { name: 'greet.hello', arguments: {} } })).result as { isError: boolean; content: { text: string }[] };
    assert.equal(invalid.isError, true);
    assert.match(invalid.content[0]!.text, /^INVALID_INPUT/);
  });

  it('load_tools lists tools in the session and notifies; a reload that removes one drops it', async () => {
    const runtime = new Runtime(app({ mode: 'progressive' }), { inlineLimit: 16384, logger: log });
    const sent: JsonRpcMessage[] = [];
    const s = await session(runtime, sent);
    const refused = await meta(s, 'load_tools', { names: ['greet.secret'] });
    assert.equal(refused.isError, true);
    assert.equal(sent.length, 0);
    const loaded = parsed(await meta(s, 'load_tools', { names: ['greet.hello', 'notes.add', 'greet.secret'] }));
    assert.deepEqual(loaded.loaded, ['greet.hello', 'notes.add']);
    assert.deepEqual(loaded.not_found, ['greet.secret']);
    assert.deepEqual(sent.map((m) => (m as { method?: string }).method), ['notifications/tools/list_changed']);
    assert.deepEqual(await listed(s), ['search_tools', 'describe_tools', 'call_tool', 'load_tools', 'greet.hello', 'notes.add']);
    assert.deepEqual((await rpc(s, 'tools/call', { name: 'notes.add', arguments: { who: 'Bo' } })).result, { content: [{ type: 'text', text: 'notes.add:Bo' }] });
    runtime.swap(app({ mode: 'progressive' }, { drop: 'notes.add' }));
    assert.equal(sent.filter((m) => (m as { method?: string }).method === 'notifications/tools/list_changed').length, 2);
    assert.deepEqual(await listed(s), ['search_tools', 'describe_tools', 'call_tool', 'load_tools', 'greet.hello']);
    runtime.swap(app({ mode: 'progressive' }));
    assert.deepEqual(await listed(s), ['search_tools', 'describe_tools', 'call_tool', 'load_tools', 'greet.hello'], 'a dropped tool stays dropped');
  });

  it('a meta-tool hides a real tool of its name, which call_tool still reaches; a direct endpoint lists it as before', async () => {
    const s = await session(new Runtime(app({ mode: 'progressive' }, { shadow: true }), { inlineLimit: 16384, logger: log }));
    assert.equal((parsed(await meta(s, 'search_tools', { query: 'a real tool named like the meta-tool' })).matches as { name: string }[])[0]?.name, 'search_tools');
    assert.deepEqual((await rpc(s, 'tools/call', { name: 'call_tool', arguments: { name: 'search_tools' } })).result, { content: [{ type: 'text', text: 'the real search_tools' }] });
    const direct = await session(new Runtime(app(undefined, { shadow: true }), { inlineLimit: 16384, logger: log }));
    assert.deepEqual(await listed(direct), ['greet.hello', 'notes.add', 'search_tools']);
  });

  it('a named endpoint is progressive by its own discovery, beside a direct default endpoint (and the other way round)', async () => {
    const svc = new FastSvc({ name: 'unit', discovery: { mode: 'progressive' } });
    for (const name of ['greet.hello', 'notes.add']) svc.tool({ name, description: `${name} does it.`, handler: () => name });
    svc.endpoint(compileEndpoint('greet', { select: { names: ['greet.*'] }, discovery: { mode: 'progressive' } }));
    svc.endpoint(compileEndpoint('direct', { select: { names: ['notes.*'] } }));
    const cat = buildCatalog(svc);
    assert.equal(discoveryOf(cat).progressive, true);
    assert.equal(discoveryOf(viewOf(cat, 'greet')).progressive, true);
    assert.equal(discoveryOf(viewOf(cat, 'direct')).progressive, false, 'an endpoint without discovery is direct, whatever the default endpoint is');
    const s = await session(new Runtime(cat, { inlineLimit: 16384, logger: log }));
    const on = async (view: Catalog, name: string, args: Record<string, unknown>) => ((await s.handle({ jsonrpc: '2.0', id: ++seq, method: 'tools/call', params: { name, arguments: args } }, reader, { catalog: view })) as JsonRpcResponse);
    const found = parsed((await on(viewOf(cat, 'greet'), 'search_tools', { query: 'hello notes add' })).result as { content: { text: string }[] }) as { matches: { name: string }[] };
    assert.deepEqual(found.matches.map((m) => m.name), ['greet.hello'], 'the endpoint\'s search sees only its selection');
    assert.equal(((await on(viewOf(cat, 'greet'), 'call_tool', { name: 'notes.add' })).error?.data as { code?: string } | undefined)?.code, 'NOT_FOUND');
    const direct = (await s.handle({ jsonrpc: '2.0', id: ++seq, method: 'tools/list', params: {} }, reader, { catalog: viewOf(cat, 'direct') })) as JsonRpcResponse;
    assert.deepEqual((direct.result as { tools: { name: string }[] }).tools.map((t) => t.name), ['notes.add']);
  });

  describe('on GitHub\'s catalog (@octokit/openapi as an openapi source)', function () {
    this.timeout(60_000);
    let cat: Catalog;
    const dir = mkdtempSync(join(tmpdir(), 'progressive-'));
    before(async () => {
      const doc = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
      writeFileSync(join(dir, 'svc.yaml'), `version: 1\nname: gh\nauth: { token: "\${SVC_TOKEN}" }\ndiscovery: { mode: auto }\nopenapi:\n  - { name: github, document: ${JSON.stringify(doc)}, base_url: "http://127.0.0.1:9" }\n`);
      cat = buildCatalog((await loadManifest(join(dir, 'svc.yaml'), { SVC_TOKEN: 'unit-progressive-token-0123456789' })).svc);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('auto makes it progressive; the first tools/list costs at most 2,000 tokens, the direct listing far more', async () => {
      assert.ok(cat.tools.size > 1000, `${cat.tools.size} tools`);
      assert.match(discoveryOf(cat).why, /^auto → progressive: \d+ tools, more than auto_tools 40/);
      const s = await session(new Runtime(cat, { inlineLimit: 16384, logger: log }));
      const first = (await rpc(s, 'tools/list', {})).result as { tools: unknown[] };
      const tokens = textCost(JSON.stringify(first)).tokens;
      assert.ok(tokens <= 2000, `first tools/list: ${tokens} tokens`);
      const direct = textCost(JSON.stringify({ tools: [...cat.tools.values()].map((e) => e.wire) })).tokens;
      assert.ok(direct > 100 * tokens, `direct listing: ${direct} tokens`);
    });

    it('a search answer of 5 matches costs at most 1,500 tokens and finds the tool', async () => {
      const s = await session(new Runtime(cat, { inlineLimit: 16384, logger: log }));
      for (const [query, tool] of [['open a new issue in a repository', 'issues.create'], ['list the branches of a repo', 'repos.list-branches'], ['star a repository for the user', 'activity.star-repo-for-authenticated-user'], ['delete a label from an issue', 'issues.remove-label']] as const) {
        const r = await meta(s, 'search_tools', { query });
        const tokens = textCost(JSON.stringify(r)).tokens;
        const names = (parsed(r).matches as { name: string }[]).map((m) => m.name);
        assert.equal(names.length, 5, query);
        assert.ok(tokens <= 1500, `${query}: ${tokens} tokens`);
        assert.ok(names.includes(tool), `${query}: ${names.join(', ')}`);
      }
    });
  });
});
