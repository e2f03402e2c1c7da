// Every list page honours server.list_page_bytes, even when one entry alone is longer (issue 38,
// point 9): the real `svc serve` with list_page_bytes 4096 serves an `openapi` operation whose body
// schema is about 240 kB (L0 with ten properties of L1, … four levels), a hand-written tool with a
// 10,000-character description and a few small tools. Each GET /svc page's tools, and each page of the
// MCP SDK client's tools/list, is at most 4096 characters of JSON; every tool is listed exactly once;
// the long entry is listed in short — its top-level arguments and which are required, the description
// saying so — while a call is still checked against its whole schema; `fastsvc validate` says which
// entries are shortened (LIST_ENTRY_SHORTENED, once per source line).

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { run } from '../helpers/cli.js';
import { fanOut } from '../helpers/openapi-hostile.js';

const TOKEN = 'list-page-bytes-token-0123456789';
const BYTES = 4096;
const SMALL = Array.from({ length: 5 }, (_, i) => `  - name: small${i}\n    description: A small tool.\n    template: "hello ${i}"\n`).join('');
const MANIFEST = `version: 1\nname: pages\nserver:\n  list_page_bytes: ${BYTES}\nauth:\n  token: \${SVC_TOKEN}\ntools:\n${SMALL}`
  + `  - name: wordy\n    description: "${'word '.repeat(2000).trim()}"\n    template: "hello"\n`
  + `openapi:\n  - name: fan\n    document: fan.yaml\n    base_url: http://127.0.0.1:9\n`;

interface ListedTool { name: string; description: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] } }

describe('list pages honour server.list_page_bytes, even for one long entry', () => {
  let served: Served;
  before(async () => {
    served = await serveManifest(MANIFEST, { files: { 'fan.yaml': fanOut(4).replace('            schema: {$ref: "#/components/schemas/L0"}', '            schema: {$ref: "#/components/schemas/L0"}\n        required: true') }, env: { SVC_TOKEN: TOKEN } });
  });
  after(() => served?.stop());

  it('GET /svc: every page\'s tools within list_page_bytes, every tool once, the long ones in short', async () => {
    const seen: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const res = await fetch(`${served.url}/svc${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { tools: ListedTool[]; next_cursor?: string };
      assert.ok(JSON.stringify(body.tools).length <= BYTES, `a page of ${JSON.stringify(body.tools).length} characters`);
      seen.push(...body.tools);
      cursor = body.next_cursor;
    } while (cursor !== undefined);
    assert.deepEqual(seen.map((t) => t.name).sort(), ['fan0', 'small0', 'small1', 'small2', 'small3', 'small4', 'wordy']);
    const fan = seen.find((t) => t.name === 'fan0')!;
    assert.deepEqual(Object.keys(fan.inputSchema.properties!), ['body']);
    assert.deepEqual(fan.inputSchema.required, ['body']);
    assert.match(fan.description, /listed in short/i);
    const wordy = seen.find((t) => t.name === 'wordy')!;
    assert.match(wordy.description, /^word word .*…$/);
    assert.ok(wordy.description.length < 9999, 'shortened');
  });

  it('MCP tools/list: every page within list_page_bytes, every tool once', async () => {
    const client = new Client({ name: 'pages', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    try {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        assert.ok(JSON.stringify(page.tools).length <= BYTES, `a page of ${JSON.stringify(page.tools).length} characters`);
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.equal(names.length, 7);
      assert.equal(new Set(names).size, 7);
    } finally {
      await client.close();
    }
  });

  it('a call is checked against the whole schema, not the short listing', async () => {
    const res = await fetch(`${served.url}/svc/tools/fan0`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: { p0: { p1: { p2: { p3: 5 } } } } }),
    });
    assert.equal(res.status, 400);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'INVALID_INPUT');
    assert.match(err.message, /body\/p0\/p1\/p2\/p3/);
  });

  it('validate names the shortened entries: the tool, and the source\'s tools once at its line', async () => {
    const r = await run(['validate', served.file], { env: { ...process.env, SVC_TOKEN: TOKEN } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /svc\.yaml:\d+:\d+: warning: LIST_ENTRY_SHORTENED: tool wordy: /);
    assert.match(r.stderr, /svc\.yaml:\d+:\d+: warning: LIST_ENTRY_SHORTENED: tool fan0: .*server\.list_page_bytes/);
  });
});
