// Progressive discovery through the real `svc serve`, on one server serving GitHub's REST description (an `openapi`
// source, @octokit/openapi, answered by Prism), @modelcontextprotocol/server-everything as an upstream (stdio) and
// the manifest's own tools, with `discovery: {mode: auto}`. Asserted: auto decided progressive and said so in the
// log; the first tools/list is the meta-tools and costs at most 2,000 o200k tokens; the MCP SDK 1.x client
// (2025-11-25, a session), the v2 client (@modelcontextprotocol/client, 2026-07-28) and the Python SDK's
// ClientSession each search → describe → call (a GitHub operation reaches Prism, an upstream's tool answers, the
// manifest's tool answers); a 2025 session loads tools, is told its list changed, sees them in tools/list and calls
// them directly; a task-augmented call_tool starts the real tool's task; a caller without a source's scope finds,
// describes and calls nothing it cannot call (call_tool's refusal is the direct call's); the audit log and the
// metrics name the real tools, never call_tool.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT } from '../helpers/cli.js';
import { legacyClient, modernClient, refusal } from '../helpers/gateway-front.js';
import { startPrism, type Prism } from '../helpers/prism.js';
import { pythonMcp } from '../helpers/python-mcp.js';
import { secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { everythingStdio, type StdioUpstream } from '../helpers/upstreams.js';
import { waitFor } from '../helpers/wait.js';
import { textCost } from '../../src/catalog/catalog-cost.js';

const GITHUB = 'node_modules/@octokit/openapi/generated/api.github.com.json';
const FULL = secret(randomBytes(24).toString('base64url'));
const NARROW = secret(randomBytes(24).toString('base64url'));
const GH_TOKEN = secret(`ghp_${randomBytes(18).toString('base64url')}`);
const META_2025 = ['search_tools', 'describe_tools', 'call_tool', 'load_tools'];
const META_2026 = ['search_tools', 'describe_tools', 'call_tool'];

type Json = Record<string, unknown>;
type ToolAnswer = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Json };
const text = (r: unknown) => (r as ToolAnswer).content.map((c) => c.text ?? '').join('');
const answer = (r: unknown) => JSON.parse(text(r)) as Json;
const names = (r: unknown) => (answer(r).matches as { name: string }[]).map((m) => m.name);

describe('progressive discovery: GitHub (Prism), server-everything and the manifest\'s tools on one auto endpoint, three MCP clients', function () {
  this.timeout(120_000);
  let prism: Prism;
  let ev: StdioUpstream;
  let srv: Served;

  before(async () => {
    [prism, ev] = [await startPrism(join(ROOT, GITHUB), { timeoutMs: 100_000 }), everythingStdio()];
    srv = await serveManifest({
      version: 1,
      name: 'progressive-e2e',
      server: { host: '127.0.0.1' },
      auth: { tokens: [
        { name: 'full', token: '${FULL}', scopes: ['github.use', 'ev.read', 'notes.read'] },
        { name: 'narrow', token: '${NARROW}', scopes: ['notes.read'] },
      ] },
      profile: { scopes: ['github.use', 'ev.read', 'notes.read'] },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp', '/ws', '/metrics'] },
      audit: { to: { file: 'audit.log' } },
      discovery: { mode: 'auto' },
      tools: [
        { name: 'notes.hello', description: 'Greets someone by name.', input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, required_scopes: ['notes.read'], template: 'Hello, {{who}}!' },
        { name: 'notes.report', description: 'Writes the weekly notes report, a long job.', required_scopes: ['notes.read'], task: 'optional', template: 'the report is ready' },
      ],
      openapi: [{ name: 'github', document: 'apis/github.json', base_url: prism.url, auth: { static: { bearer: '${GH_TOKEN}' } }, required_scopes: ['github.use'] }],
      upstreams: [{ name: 'everything', command: ev.command, env: { PATH: '${PATH}' }, expose: { prefix: 'ev.', include: ['echo', 'get-sum'], required_scopes: ['ev.read'] } }],
    }, { copy: { 'apis/github.json': GITHUB }, env: { FULL, NARROW, GH_TOKEN } });
  });
  after(async () => {
    await srv?.stop();
    await ev?.stop();
    await prism?.stop();
  });

  it('auto decided progressive from the catalog\'s size, and logged it', async () => {
    const line = await waitFor(() => srv.logs().find((l) => l.event === 'discovery'), 'the discovery log line');
    assert.equal(line.progressive, true);
    assert.match(String(line.msg), /^endpoint default: auto → progressive: \d{4} tools, more than auto_tools 40$/);
  });

  describe('sdk 1.x (2025-11-25, a session)', () => {
    let c: Awaited<ReturnType<typeof legacyClient>>;
    before(async () => {
      c = await legacyClient(srv.url, FULL);
    });
    after(() => c?.close());

    it('lists the meta-tools within 2,000 tokens, then searches, describes and calls a GitHub operation through Prism', async () => {
      const first = await c.client.listTools();
      assert.deepEqual(first.tools.map((t) => t.name), META_2025);
      const tokens = textCost(JSON.stringify({ tools: first.tools })).tokens;
      assert.ok(tokens <= 2000, `${tokens} tokens`);
      const found = await c.client.callTool({ name: 'search_tools', arguments: { query: 'open a new issue in a repository' } });
      assert.ok(names(found).includes('issues.create'), names(found).join(' '));
      assert.ok(textCost(JSON.stringify(found)).tokens <= 1500);
      const described = answer(await c.client.callTool({ name: 'describe_tools', arguments: { names: ['issues.create'] } }));
      const def = (described.tools as { name: string; inputSchema: { required: string[] } }[])[0]!;
      assert.equal(def.name, 'issues.create');
      assert.deepEqual(def.inputSchema.required.slice().sort(), ['body', 'owner', 'repo']);
      const before = prism.received().length;
      const created = await c.client.callTool({ name: 'call_tool', arguments: { name: 'issues.create', arguments: { owner: 'octo', repo: 'hello', body: { title: 'Found a bug' } } } });
      assert.notEqual(created.isError, true, text(created));
      assert.deepEqual(prism.received().slice(before), [{ method: 'post', path: '/repos/octo/hello/issues' }]);
    });

    it('searches and calls an upstream\'s tool; loads tools, is told the list changed, lists and calls them directly', async () => {
      const found = await c.client.callTool({ name: 'search_tools', arguments: { query: 'echo back a message' } });
      assert.equal(names(found)[0], 'ev.echo');
      assert.match(text(await c.client.callTool({ name: 'call_tool', arguments: { name: 'ev.echo', arguments: { message: 'through call_tool' } } })), /through call_tool/);
      let changed = 0;
      c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      await c.streamOpen();
      const loaded = answer(await c.client.callTool({ name: 'load_tools', arguments: { names: ['ev.echo', 'notes.hello'] } }));
      assert.deepEqual(loaded.loaded, ['ev.echo', 'notes.hello']);
      await waitFor(() => (changed > 0 ? true : undefined), 'notifications/tools/list_changed');
      assert.deepEqual((await c.client.listTools()).tools.map((t) => t.name), [...META_2025, 'notes.hello', 'ev.echo']);
      assert.equal(text(await c.client.callTool({ name: 'notes.hello', arguments: { who: 'Ann' } })), 'Hello, Ann!');
    });

    it('a task-augmented call_tool starts the real tool\'s task', async () => {
      const stream = c.client.experimental.tasks.callToolStream({ name: 'call_tool', arguments: { name: 'notes.report', arguments: {} } }, undefined, { task: { ttl: 60_000 } });
      const seen: { type: string; task?: { taskId: string }; result?: unknown }[] = [];
      for await (const m of stream) seen.push(m as (typeof seen)[number]);
      assert.equal(seen[0]?.type, 'taskCreated', JSON.stringify(seen));
      const last = seen.at(-1)!;
      assert.equal(last.type, 'result', JSON.stringify(seen));
      assert.equal(text(last.result), 'the report is ready');
    });
  });

  it('sdk 2.x (2026-07-28, no session): the three meta-tools; search → describe → call', async () => {
    const c = await modernClient(srv.url, FULL);
    try {
      assert.equal(c.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.deepEqual((await c.listTools()).tools.map((t) => t.name), META_2026);
      const found = await c.callTool({ name: 'search_tools', arguments: { query: 'the sum of two numbers' } });
      assert.ok(names(found).includes('ev.get-sum'), names(found).join(' '));
      assert.equal((answer(await c.callTool({ name: 'describe_tools', arguments: { names: ['ev.get-sum'] } })).tools as Json[]).length, 1);
      assert.match(text(await c.callTool({ name: 'call_tool', arguments: { name: 'ev.get-sum', arguments: { a: 2, b: 3 } } })), /5/);
      assert.equal(text(await c.callTool({ name: 'call_tool', arguments: { name: 'notes.hello', arguments: { who: 'Bo' } } })), 'Hello, Bo!');
    } finally {
      await c.close();
    }
  });

  it('the Python SDK\'s ClientSession: search → describe → call', async () => {
    const python = await pythonMcp();
    const { stdout } = await promisify(execFile)(python, [join(ROOT, 'test', 'e2e', 'fixtures', 'progressive-client.py'), `${srv.url}/mcp`, FULL, 'greet someone by name', 'notes.hello', '{"who": "Py"}'], { timeout: 60_000 });
    const out = JSON.parse(stdout) as { listed: string[]; found: string[]; schema: Json; result: { isError: boolean; text: string } };
    assert.deepEqual(out.listed, META_2025);
    assert.equal(out.found[0], 'notes.hello');
    assert.deepEqual(out.schema.required, ['who']);
    assert.deepEqual(out.result, { isError: false, text: 'Hello, Py!' });
  });

  it('a caller without a source\'s scope finds, describes and calls nothing it cannot call', async () => {
    const c = await legacyClient(srv.url, NARROW);
    try {
      for (const query of ['open a new issue in a repository', 'echo back a message', 'weekly report']) {
        const found = names(await c.client.callTool({ name: 'search_tools', arguments: { query, limit: 20 } }));
        assert.ok(found.every((n) => n.startsWith('notes.')), `${query}: ${found.join(' ')}`);
      }
      const hidden = await c.client.callTool({ name: 'describe_tools', arguments: { names: ['issues.create'] } });
      const unknown = await c.client.callTool({ name: 'describe_tools', arguments: { names: ['issues.nothing'] } });
      assert.equal(hidden.isError, true);
      assert.equal(text(hidden).replace('issues.create', 'X'), text(unknown).replace('issues.nothing', 'X'));
      const through = await c.client.callTool({ name: 'call_tool', arguments: { name: 'issues.create', arguments: { owner: 'o', repo: 'r', body: { title: 't' } } } }).then((r) => ({ result: r }), refusal);
      const direct = await c.client.callTool({ name: 'issues.create', arguments: { owner: 'o', repo: 'r', body: { title: 't' } } }).then((r) => ({ result: r }), refusal);
      assert.deepEqual(through, { refused: 'INSUFFICIENT_SCOPE' });
      assert.deepEqual(direct, through);
      assert.equal((answer(await c.client.callTool({ name: 'load_tools', arguments: { names: ['notes.hello'] } })).loaded as string[]).length, 1);
      assert.equal((await c.client.callTool({ name: 'load_tools', arguments: { names: ['ev.echo'] } })).isError, true);
    } finally {
      await c.close();
    }
  });

  // A suite of its own, declared last: mocha runs a suite's own tests before its sub-suites, and this one reads what they called.
  describe('afterwards', () => it('the audit log and the metrics name the real tools, never call_tool', async () => {
    const tools = ['issues.create', 'ev.echo', 'ev.get-sum', 'notes.hello', 'notes.report'];
    // The audit file is written behind the answers (a task's line when it ends): wait for every tool's line.
    const capabilities = await waitFor(() => {
      const audit = readFileSync(join(srv.dir, 'audit.log'), 'utf8').split('\n').filter((l) => l.endsWith('}')).map((l) => JSON.parse(l) as Json);
      const seen = new Set(audit.map((e) => e.capability));
      return tools.every((t) => seen.has(`tool:${t}`)) ? seen : undefined;
    }, `an audit line for each of ${tools.join(' ')}`);
    assert.ok(![...capabilities].some((c) => /call_tool|search_tools|describe_tools|load_tools/.test(String(c))), [...capabilities].join(' '));
    const metrics = await (await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${FULL}` } })).text();
    assert.match(metrics, /fastsvc_calls_total\{[^}]*capability="issues\.create"/);
    assert.match(metrics, /fastsvc_calls_total\{[^}]*capability="notes\.report"/);
    assert.doesNotMatch(metrics, /capability="(call_tool|search_tools|describe_tools|load_tools)"/);
  }));
});
