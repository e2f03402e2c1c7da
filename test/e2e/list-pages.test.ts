// MCP list pagination and lazily compiled input validators against the real `svc serve`
// (server.list_page_size: 5), with real clients of both eras: @modelcontextprotocol/client 2.4
// (2026-07-28, stateless) and the 1.x SDK client (2025-11-25 session). Walking nextCursor
// collects every tool the caller may see exactly once, under two different scope views; a
// short list is one page with no nextCursor; a forged, foreign or other-list cursor is -32602;
// a tool whose validator is compiled on its first call refuses bad input on that call and on
// later ones, and accepts good input. GET /svc pages its four lists the same way with one
// next_cursor, and its walk agrees with the /mcp walk for each token.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';

const TOOLS = 23;
const RESOURCES = 7;
// Even tools need a.read, odd ones b.read; the `partial` token holds a.read only.
const visibleToPartial = Array.from({ length: TOOLS }, (_, i) => i).filter((i) => i % 2 === 0).map((i) => `t${i}`);

function manifest(): string {
  const tools = Array.from({ length: TOOLS }, (_, i) => `  - name: t${i}
    description: Tool ${i}.
    input_schema: { type: object, properties: { n${i}: { type: integer, maximum: ${i + 1} } }, required: [n${i}], additionalProperties: false }
    required_scopes: [${i % 2 === 0 ? 'a.read' : 'b.read'}]
    template: "t${i}={{n${i}}}"`).join('\n');
  const resources = Array.from({ length: RESOURCES }, (_, i) => `  - { uri: "doc://r${i}", name: r${i}, text: "r${i}" }`).join('\n');
  return `version: 1
name: list-pages
description: Paged lists.
server: { host: 127.0.0.1, port: 0, list_page_size: 5 }
profile: { scopes: [a.read, b.read] }
auth:
  tokens:
    - { name: full, token: "\${FULL_TOKEN}", scopes: [a.read, b.read] }
    - { name: partial, token: "\${PARTIAL_TOKEN}", scopes: [a.read] }
tools:
${tools}
resources:
${resources}
prompts:
  - { name: p0, messages: [{ role: user, text: hi }] }
`;
}

type Lister = (cursor?: string) => Promise<{ names: string[]; nextCursor?: string }>;

async function walk(list: Lister): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await list(cursor);
    names.push(...page.names);
    cursor = page.nextCursor;
    pages++;
    assert.ok(pages <= 10, 'the cursor walk does not end');
  } while (cursor !== undefined);
  return { names, pages };
}

const code = (e: unknown) => (e as { code?: number }).code;

/** The first page of tools/list as the server sends it (client 2.4's listTools() without a cursor walks every page itself). */
async function firstToolsPage(url: string, token: string): Promise<{ names: string[]; nextCursor?: string }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });
  assert.equal(res.status, 200);
  const { result } = (await res.json()) as { result: { tools: { name: string }[]; nextCursor?: string } };
  return { names: result.tools.map((t) => t.name), nextCursor: result.nextCursor };
}

describe('MCP list pages and lazy input validators (real svc serve, list_page_size 5)', function () {
  this.timeout(60_000);
  let srv: Served;
  const full = secret(randomBytes(24).toString('base64url'));
  const partial = secret(randomBytes(24).toString('base64url'));

  before(async () => {
    srv = await serveManifest(manifest(), { env: { FULL_TOKEN: full, PARTIAL_TOKEN: partial } });
  });
  after(() => srv?.stop());

  async function modern(token: string): Promise<ModernClient> {
    const client = new ModernClient({ name: 'pages-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => token } }));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    return client;
  }

  async function legacy(token: string): Promise<LegacyClient> {
    const client = new LegacyClient({ name: 'pages-e2e', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  }

  it('2026-07-28: the cursor walk returns every tool exactly once, per scope view, in pages of 5', async () => {
    for (const [token, want] of [[full, Array.from({ length: TOOLS }, (_, i) => `t${i}`)], [partial, visibleToPartial]] as const) {
      const client = await modern(token);
      try {
        const { names, pages } = await walk(async (cursor) => {
          const r = cursor === undefined ? await firstToolsPage(srv.url, token) : await client.listTools({ cursor }).then((x) => ({ names: x.tools.map((t) => t.name), nextCursor: x.nextCursor }));
          assert.ok(r.names.length <= 5, `a page of ${r.names.length}`);
          return r;
        });
        assert.deepEqual(names, want);
        assert.equal(pages, Math.ceil(want.length / 5));
        // The client's own walk (listTools() without a cursor follows nextCursor) gets the same list.
        assert.deepEqual((await client.listTools()).tools.map((t) => t.name), want);
      } finally {
        await client.close();
      }
    }
  });

  it('2025-11-25 session: tools, resources and prompts page the same way; a short list has no nextCursor', async () => {
    const client = await legacy(full);
    try {
      const tools = await walk(async (cursor) => {
        const r = await client.listTools(cursor === undefined ? {} : { cursor });
        return { names: r.tools.map((t) => t.name), nextCursor: r.nextCursor };
      });
      assert.deepEqual(tools.names, Array.from({ length: TOOLS }, (_, i) => `t${i}`));
      const resources = await walk(async (cursor) => {
        const r = await client.listResources(cursor === undefined ? {} : { cursor });
        return { names: r.resources.map((x) => x.uri), nextCursor: r.nextCursor };
      });
      assert.deepEqual(resources, { names: Array.from({ length: RESOURCES }, (_, i) => `doc://r${i}`), pages: 2 });
      const prompts = await client.listPrompts();
      assert.deepEqual(prompts.prompts.map((p) => p.name), ['p0']);
      assert.equal(prompts.nextCursor, undefined);
    } finally {
      await client.close();
    }
  });

  it('refuses a forged cursor, a cursor of another list and one for an item the caller cannot see with -32602', async () => {
    const client = await legacy(full);
    const narrow = await modern(partial);
    try {
      const first = await client.listTools();
      assert.ok(first.nextCursor, 'the first page has a nextCursor');
      await assert.rejects(client.listTools({ cursor: 'not-a-cursor' }), (e) => code(e) === -32602);
      await assert.rejects(client.listResources({ cursor: first.nextCursor }), (e) => code(e) === -32602);
      // The full view's second page starts at t5, which the partial token does not see.
      await assert.rejects(narrow.listTools({ cursor: first.nextCursor }), (e) => code(e) === -32602);
      // A cursor the partial view issued works for it.
      const own = await firstToolsPage(srv.url, partial);
      assert.deepEqual((await narrow.listTools({ cursor: own.nextCursor })).tools.map((t) => t.name), visibleToPartial.slice(5, 10));
    } finally {
      await client.close();
      await narrow.close();
    }
  });

  /** GET /svc with ?cursor=; the status and the parsed body. */
  async function svcPage(token: string, cursor?: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${srv.url}/svc${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('GET /svc: next_cursor walks every tool, resource and prompt exactly once per scope view, agreeing with /mcp', async () => {
    for (const token of [full, partial]) {
      const seen: Record<string, string[]> = { tools: [], resources: [], resource_templates: [], prompts: [] };
      const { pages } = await walk(async (cursor) => {
        const { status, body } = await svcPage(token, cursor);
        assert.equal(status, 200, JSON.stringify(body));
        for (const k of Object.keys(seen)) {
          const items = body[k] as { name: string; uri: string }[];
          assert.ok(items.length <= 5, `a page of ${items.length} ${k}`);
          seen[k]!.push(...items.map((x) => (k === 'resources' ? x.uri : x.name)));
        }
        return { names: [], nextCursor: body.next_cursor as string | undefined };
      });
      const client = await modern(token);
      try {
        assert.deepEqual(seen.tools, (await client.listTools()).tools.map((t) => t.name));
        assert.deepEqual(seen.resources, (await client.listResources()).resources.map((r) => r.uri));
        assert.deepEqual(seen.prompts, (await client.listPrompts()).prompts.map((p) => p.name));
      } finally {
        await client.close();
      }
      const want = token === full ? TOOLS : visibleToPartial.length;
      assert.equal(seen.tools.length, want);
      assert.equal(pages, Math.ceil(want / 5));
      assert.deepEqual(seen.resource_templates, []);
    }
  });

  it('GET /svc: a forged cursor, an MCP cursor and one for an item the caller cannot see are 400 INVALID_CURSOR', async () => {
    const first = await svcPage(full);
    assert.equal(typeof first.body.next_cursor, 'string');
    const mcpCursor = (await firstToolsPage(srv.url, full)).nextCursor!;
    // The full view's next page starts at t5, which the partial token does not see.
    for (const [token, cursor] of [[full, 'not-a-cursor'], [full, mcpCursor], [partial, first.body.next_cursor as string]] as const) {
      const r = await svcPage(token, cursor);
      assert.equal(r.status, 400);
      assert.equal((r.body.error as { code: string }).code, 'INVALID_CURSOR');
    }
  });

  it('a validator compiled on first use refuses bad input on the first and later calls and accepts good input', async () => {
    const client = await modern(full);
    try {
      for (const tool of ['t7', 't8']) {
        const bound = Number(tool.slice(1)) + 1;
        for (let k = 0; k < 2; k++) {
          const bad = await client.callTool({ name: tool, arguments: { [`n${tool.slice(1)}`]: bound + 1 } });
          assert.equal(bad.isError, true, `${tool} call ${k} accepted ${bound + 1}: ${JSON.stringify(bad)}`);
          const extra = await client.callTool({ name: tool, arguments: { [`n${tool.slice(1)}`]: 1, other: 1 } });
          assert.equal(extra.isError, true, `${tool} call ${k} accepted an unknown property`);
        }
        const good = await client.callTool({ name: tool, arguments: { [`n${tool.slice(1)}`]: bound } });
        assert.deepEqual(good.content, [{ type: 'text', text: `${tool}=${bound}` }]);
      }
    } finally {
      await client.close();
    }
  });
});
