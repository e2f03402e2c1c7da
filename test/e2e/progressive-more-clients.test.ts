// Two more MCP clients this project did not write, unmodified, on a progressive named endpoint (/mcp/prog, its own
// `discovery: {mode: progressive}`) of the real `svc serve`: the MCP Inspector's CLI mode
// (@modelcontextprotocol/inspector-cli, as a user runs it from a shell) and mcp-remote (the stdio bridge desktop hosts
// start, here with a bearer header from a --header-file), each listing the meta-tools and going search → describe →
// call; call_tool runs the real tool (the audit log names it), and a caller without the tool's scope is refused
// through call_tool as a direct call is. And a task through call_tool on 2026-07-28 with the v2 SDK: its Client
// (2.4.0) has no tasks runtime — it refuses a `resultType: task` answer as UnsupportedResultType — so the
// task-augmented call_tool (declaring io.modelcontextprotocol/tasks) goes over the v2 SDK's own Streamable HTTP
// transport; the task is the real tool's, and tasks/get by its id answers its result.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../helpers/cli.js';
import { logLine, secret } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const require = createRequire(import.meta.url);
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector-cli');
const MCP_REMOTE = join(ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
const FULL = secret(randomBytes(24).toString('base64url'));
const NARROW = secret(randomBytes(24).toString('base64url'));
const META_2025 = ['search_tools', 'describe_tools', 'call_tool', 'load_tools'];

type Json = Record<string, any>;
const textOf = (r: Json) => (r.content as { text?: string }[]).map((c) => c.text ?? '').join('');

describe('progressive discovery: the MCP Inspector CLI and mcp-remote on /mcp/prog', function () {
  this.timeout(60_000);
  let srv: Served;
  let tmp: string;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'fastsvc-more-clients-'));
    srv = await serveManifest({
      version: 1,
      name: 'more-clients',
      auth: { tokens: [{ name: 'full', token: '${FULL}', scopes: ['notes.read', 'ops'] }, { name: 'narrow', token: '${NARROW}', scopes: ['notes.read'] }] },
      profile: { scopes: ['notes.read', 'ops'] },
      audit: { to: { file: 'audit.log' } },
      tools: [
        { name: 'notes.hello', description: 'Greets someone by name.', input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, required_scopes: ['notes.read'], template: 'Hello, {{who}}!' },
        { name: 'notes.count', description: 'Counts the words of a text.', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, required_scopes: ['notes.read'], template: 'counted' },
        { name: 'ops.restart', description: 'Restarts the service.', required_scopes: ['ops'], template: 'restarted' },
        { name: 'notes.report', description: 'Writes the weekly notes report, a long job.', required_scopes: ['notes.read'], task: 'optional', template: 'the report is ready' },
      ],
      endpoints: { prog: { discovery: { mode: 'progressive' } } },
    }, { env: { FULL, NARROW } });
  });
  after(async () => {
    await srv?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** The inspector's CLI mode against /mcp/prog; stdout parsed. It runs from its build folder (see inspector-cli.test.ts). */
  const inspector = (token: string, ...args: string[]) => new Promise<{ code: number; out: Json; stderr: string }>((resolve) => {
    const argv = [INSPECTOR, '--cli', `${srv.url}/mcp/prog`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args];
    execFile(process.execPath, argv, { cwd: dirname(INSPECTOR), timeout: 30_000 }, (err, stdout, stderr) => {
      let out: Json = {};
      try {
        out = JSON.parse(stdout) as Json;
      } catch {
        // a failure prints to stderr
      }
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out, stderr });
    });
  });

  it('the inspector CLI lists the meta-tools, then searches, describes and calls a tool through call_tool', async () => {
    const listed = await inspector(FULL, '--method', 'tools/list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(listed.out.tools.map((t: Json) => t.name), META_2025);
    const found = await inspector(FULL, '--method', 'tools/call', '--tool-name', 'search_tools', '--tool-arg', 'query=greet someone by name');
    assert.equal(found.code, 0, found.stderr);
    assert.equal(JSON.parse(textOf(found.out)).matches[0].name, 'notes.hello');
    const described = await inspector(FULL, '--method', 'tools/call', '--tool-name', 'describe_tools', '--tool-arg', 'names=["notes.hello"]');
    assert.equal(described.code, 0, described.stderr);
    assert.deepEqual(JSON.parse(textOf(described.out)).tools[0].inputSchema.required, ['who']);
    const called = await inspector(FULL, '--method', 'tools/call', '--tool-name', 'call_tool', '--tool-arg', 'name=notes.hello', 'arguments={"who":"Inspector"}');
    assert.equal(called.code, 0, called.stderr);
    assert.equal(textOf(called.out), 'Hello, Inspector!');
    // A caller without ops: call_tool is refused as the direct call is.
    const through = await inspector(NARROW, '--method', 'tools/call', '--tool-name', 'call_tool', '--tool-arg', 'name=ops.restart', 'arguments={}');
    const direct = await inspector(NARROW, '--method', 'tools/call', '--tool-name', 'ops.restart');
    assert.notEqual(through.code, 0);
    assert.match(through.stderr, /INSUFFICIENT_SCOPE/);
    assert.notEqual(direct.code, 0);
    assert.match(direct.stderr, /INSUFFICIENT_SCOPE/);
  });

  it('mcp-remote (stdio bridge, bearer from a --header-file) lists the meta-tools, then searches, describes and calls through call_tool', async () => {
    const headers = join(tmp, 'headers.txt');
    writeFileSync(headers, `Authorization: Bearer ${FULL}\n`, { mode: 0o600 });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'DISPLAY' && k !== 'WAYLAND_DISPLAY') env[k] = v;
    Object.assign(env, { MCP_REMOTE_CONFIG_DIR: join(tmp, 'mcp-auth'), BROWSER: 'false' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [MCP_REMOTE, `${srv.url}/mcp/prog`, '--header-file', headers, '--transport', 'http-only'], cwd: ROOT, env, stderr: 'pipe' });
    transport.stderr!.on('data', (c: Buffer) => logLine('mcp-remote', c.toString('utf8')));
    const client = new Client({ name: 'via-mcp-remote', version: '1' });
    await client.connect(transport);
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), META_2025);
      const found = JSON.parse(textOf(await client.callTool({ name: 'search_tools', arguments: { query: 'count the words of a text' } }) as Json));
      assert.equal(found.matches[0].name, 'notes.count');
      const described = JSON.parse(textOf(await client.callTool({ name: 'describe_tools', arguments: { names: ['notes.count'] } }) as Json));
      assert.deepEqual(described.tools[0].inputSchema.required, ['text']);
      const called = await client.callTool({ name: 'call_tool', arguments: { name: 'notes.count', arguments: { text: 'one two' } } }) as Json;
      assert.notEqual(called.isError, true, JSON.stringify(called));
      assert.equal(textOf(called), 'counted');
    } finally {
      await client.close();
    }
  });

  it('the v2 SDK on 2026-07-28: a task-augmented call_tool starts the real tool\'s task, and tasks/get answers its result', async () => {
    const TASKS = 'io.modelcontextprotocol/tasks';
    const client = new ModernClient({ name: 'v2-task', version: '1' }, { versionNegotiation: { mode: 'auto' }, capabilities: { extensions: { [TASKS]: {} } } as never });
    await client.connect(new ModernTransport(new URL(`${srv.url}/mcp/prog`), { authProvider: { token: async () => FULL } }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'notes.report', arguments: {} } }), /Unsupported result type 'task' for tools\/call/);
    } finally {
      await client.close();
    }
    const transport = new ModernTransport(new URL(`${srv.url}/mcp/prog`), { authProvider: { token: async () => FULL } });
    const answers = new Map<number, Json>();
    transport.onmessage = (m) => void (typeof (m as Json).id === 'number' && answers.set((m as Json).id, m as Json));
    await transport.start();
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'v2-task', version: '1' } };
    let id = 0;
    const ask = async (method: string, params: Json) => {
      const n = ++id;
      await transport.send({ jsonrpc: '2.0', id: n, method, params: { ...params, _meta: meta } } as never);
      return waitFor(() => answers.get(n), `the answer to ${method}`);
    };
    try {
      const created = (await ask('tools/call', { name: 'call_tool', arguments: { name: 'notes.report', arguments: {} } })).result as Json;
      assert.equal(created.resultType, 'task', JSON.stringify(created));
      assert.equal(typeof created.taskId, 'string');
      const done = await waitFor(async () => {
        const r = (await ask('tasks/get', { taskId: created.taskId })).result as Json;
        return r.status === 'completed' ? r : undefined;
      }, 'the task to complete', 10_000, 50);
      assert.deepEqual(done.result.content, [{ type: 'text', text: 'the report is ready' }]);
    } finally {
      await transport.close();
    }
    const started = await waitFor(() => srv.logs().find((l) => l.event === 'task.started'), 'the task.started line');
    assert.equal(started.tool, 'notes.report', JSON.stringify(started));
  });

  // Declared last, in a suite of its own: mocha runs a suite's own tests first, and this one reads what they called.
  describe('afterwards', () => it('the audit log names the real tools the clients called, never call_tool', async () => {
    const tools = ['notes.hello', 'notes.count', 'ops.restart', 'notes.report'];
    // The audit file is written behind the answers (a task's line when it ends): wait for every tool's line.
    const called = await waitFor(() => {
      const audit = readFileSync(join(srv.dir, 'audit.log'), 'utf8').split('\n').filter((l) => l.endsWith('}')).map((l) => JSON.parse(l) as Json);
      const seen = new Set(audit.map((e) => e.capability));
      return tools.every((t) => seen.has(`tool:${t}`)) ? seen : undefined;
    }, `an audit line for each of ${tools.join(' ')}`);
    assert.ok(![...called].some((c) => /call_tool|search_tools|describe_tools|load_tools/.test(String(c))), [...called].join(' '));
  }));
});
