// Tasks against the real `svc serve` on all three transports: a long `exec` tool declared
// `task: required` is started, polled and cancelled over /svc (plain HTTP), /mcp (the 1.x SDK
// client's task API in 2025-11-25, raw 2026-07-28 requests with the tasks extension) and /ws;
// after each cancel the process the tool started is gone (its pid no longer exists) and the
// task says `cancelled` and by whom. Another principal gets not-found for the same id; a plain
// call to the task-required tool gets the documented error in each era; SIGTERM with a running
// task exits within drain_timeout_ms, cancelling it and logging that it did. A tool declaring
// ask_before_task asks its question as an input_required round of tools/call (no task exists
// yet), becomes a task on the answered round, and the task's result carries the answer.
// subscriptions/listen with taskIds streams notifications/tasks for the caller's own tasks
// (not another principal's) and needs the tasks extension.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { secret } from '../helpers/secrets.js';
import { frames } from '../helpers/sse.js';
import { alive } from '../helpers/process.js';

const ALICE = secret(randomBytes(24).toString('base64url'));
const BOB = secret(randomBytes(24).toString('base64url'));
const V2026 = '2026-07-28';
type Json = Record<string, any>;
const EXT = 'io.modelcontextprotocol/tasks';

const MANIFEST = `version: 1
name: tasks-e2e
description: Tasks end to end.
server:
  drain_timeout_ms: 1500
  task_poll_interval_ms: 100
routes:
  public: [/healthz, /readyz, /metadata]
  protected: [/svc, /mcp, /ws]
profile:
  scopes:
    - { name: jobs.run, description: Run jobs. }
auth:
  token: \${ALICE_TOKEN}
  subject: alice
  tokens:
    - name: bob
      token: \${BOB_TOKEN}
      scopes: [jobs.run]
tools:
  - name: job.sleep
    description: Writes its pid to a file, then sleeps a minute.
    task: required
    required_scopes: [jobs.run]
    input_schema:
      type: object
      properties: { pidfile: { type: string } }
      required: [pidfile]
    exec:
      argv: [/bin/sh, -c, 'echo $$ > "$0"; exec sleep 60', '{{pidfile}}']
      timeout_ms: 120000
  - name: job.quick
    description: Answers at once; a task only when asked.
    task: optional
    input_schema: { type: object, properties: { x: { type: string } } }
    template: "done {{x}}"
  - name: ask.greet
    description: Asks a name before it becomes a task.
    task: required
    ask_before_task: true
    module: ./ask.js#greet
`;

const ASK_MODULE = `export async function greet(_input, ctx) {
  const a = await ctx.channel.request('elicitation/create', { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }, { key: 'user_name' });
  ctx.channel.startTask();
  return 'Hello, ' + a.content.name + '!';
}
`;

describe('tasks on /svc, /mcp and /ws (real svc serve)', function () {
  this.timeout(60_000);
  let dir: string;
  let srv: Served;
  let n = 0;
  const pidfile = () => join(dir, `pid-${++n}`);
  /** The pid the tool wrote, once it did. */
  const pidIn = (file: string) => waitFor(() => {
    const s = (() => { try { return readFileSync(file, 'utf8'); } catch { return ''; } })();
    return /^\d+\n$/.test(s) ? Number(s) : undefined;
  }, `a pid in ${file}`);
  const gone = (pid: number) => waitFor(() => (alive(pid) ? undefined : true), `process ${pid} to be gone`);

  const svc = (path: string, token: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  /** One 2026-07-28 request over HTTP, with the headers the revision requires (the raw response). */
  const modernRaw = (token: string, method: string, params: Record<string, unknown>, ext = true, caps: Record<string, unknown> = {}) => {
    const name = method === 'tools/call' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
    return fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V2026, 'mcp-method': method, ...(typeof name === 'string' && { 'mcp-name': name }),
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: ++n, method,
        params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': { ...caps, ...(ext && { extensions: { [EXT]: {} } }) } } },
      }),
    });
  };
  const modern = async (token: string, method: string, params: Record<string, unknown>, ext = true, caps: Record<string, unknown> = {}) => {
    const res = await modernRaw(token, method, params, ext, caps);
    return { status: res.status, body: await res.json() as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } };
  };

  const legacyClient = async (token: string) => {
    const client = new Client({ name: 'tasks-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };

  before(async () => {
    srv = await serveManifest(MANIFEST, { files: { 'ask.js': ASK_MODULE }, env: { ALICE_TOKEN: ALICE, BOB_TOKEN: BOB } });
    dir = srv.dir;
  });

  after(() => srv?.stop());

  it('/svc: 202 with a Location, poll, another principal gets 404, DELETE kills the process and says cancelled by whom', async () => {
    const file = pidfile();
    const started = await svc('/svc/tools/job.sleep', ALICE, { method: 'POST', body: JSON.stringify({ pidfile: file }) });
    assert.equal(started.status, 202);
    const task = await started.json() as Record<string, unknown>;
    assert.equal(started.headers.get('location'), `/svc/tasks/${task.task_id}`);
    assert.equal(task.status, 'working');
    assert.match(String(task.task_id), /^[A-Za-z0-9_-]{22}$/);
    const pid = await pidIn(file);
    assert.ok(alive(pid));

    const polled = await svc(started.headers.get('location')!, ALICE);
    assert.equal(polled.status, 200);
    assert.equal((await polled.json() as { status: string }).status, 'working');
    const listed = await (await svc('/svc/tasks', ALICE)).json() as { tasks: { task_id: string }[] };
    assert.ok(listed.tasks.some((t) => t.task_id === task.task_id));

    const foreign = await svc(`/svc/tasks/${task.task_id}`, BOB);
    assert.equal(foreign.status, 404);
    assert.equal((await foreign.json() as { error: { code: string } }).error.code, 'NOT_FOUND');
    assert.equal((await svc(`/svc/tasks/${task.task_id}`, BOB, { method: 'DELETE' })).status, 404);
    assert.deepEqual((await (await svc('/svc/tasks', BOB)).json() as { tasks: unknown[] }).tasks, []);
    assert.ok(alive(pid), 'a foreign DELETE must not touch the work');

    const cancelled = await svc(`/svc/tasks/${task.task_id}`, ALICE, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    const body = await cancelled.json() as Record<string, unknown>;
    assert.equal(body.status, 'cancelled');
    assert.equal(body.cancelled_by, 'alice');
    await gone(pid);
    const after = await (await svc(`/svc/tasks/${task.task_id}`, ALICE)).json() as Record<string, unknown>;
    assert.equal(after.status, 'cancelled');
    // Log lines travel on their own pipe and may arrive after the answers that followed them.
    const line = await waitFor(() => srv.logs().find((l) => l.event === 'task.cancelled' && l.task_id === task.task_id), 'the task.cancelled log line');
    assert.equal(line?.sub, 'alice');
    assert.equal(line?.tool, 'job.sleep');
  });

  it('/svc: an optional task tool answers at once, or 202 with Prefer: respond-async and a result to GET', async () => {
    const sync = await svc('/svc/tools/job.quick', ALICE, { method: 'POST', body: JSON.stringify({ x: 'now' }) });
    assert.equal(sync.status, 200);
    assert.equal((await sync.json() as { result: string }).result, 'done now');
    const started = await svc('/svc/tools/job.quick', ALICE, { method: 'POST', body: JSON.stringify({ x: 'later' }), headers: { prefer: 'respond-async' } });
    assert.equal(started.status, 202);
    const done = await waitFor(async () => {
      const t = await (await svc(started.headers.get('location')!, ALICE)).json() as { status: string; result?: { result: string } };
      return t.status === 'completed' ? t : undefined;
    }, 'the task to complete');
    assert.equal(done.result?.result, 'done later');
  });

  it('/mcp 2025-11-25 with the 1.x SDK task API: create, get, list, cancel (process gone); bob cannot see it; a plain call is refused', async () => {
    const client = await legacyClient(ALICE);
    const bob = await legacyClient(BOB);
    try {
      const listedTools = await client.listTools();
      assert.deepEqual(listedTools.tools.find((t) => t.name === 'job.sleep')?.execution, { taskSupport: 'required' });
      const file = pidfile();
      const stream = client.experimental.tasks.callToolStream({ name: 'job.sleep', arguments: { pidfile: file } }, undefined, { task: { ttl: 60_000 } });
      const first = (await stream.next()).value as { type: string; task: { taskId: string; status: string } };
      await stream.return(undefined);
      assert.equal(first.type, 'taskCreated');
      const id = first.task.taskId;
      const pid = await pidIn(file);
      assert.equal((await client.experimental.tasks.getTask(id)).status, 'working');
      assert.ok((await client.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === id));
      await assert.rejects(bob.experimental.tasks.getTask(id), (e: McpError) => e.code === -32602);
      await assert.rejects(bob.experimental.tasks.cancelTask(id), (e: McpError) => e.code === -32602);
      assert.ok(!(await bob.experimental.tasks.listTasks()).tasks.some((t) => t.taskId === id));

      const cancelled = await client.experimental.tasks.cancelTask(id);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.statusMessage, 'cancelled by alice');
      await gone(pid);
      assert.equal((await client.experimental.tasks.getTask(id)).status, 'cancelled');
      await assert.rejects(client.experimental.tasks.cancelTask(id), (e: McpError) => e.code === -32602);

      // The SDK's callTool refuses a task-required tool itself; a plain tools/call request reaches the server.
      await assert.rejects(client.request({ method: 'tools/call', params: { name: 'job.sleep', arguments: { pidfile: pidfile() } } }, CallToolResultSchema),
        (e: McpError) => e.code === -32601 && /Task augmentation required/.test(e.message));
    } finally {
      await client.close();
      await bob.close();
    }
  });

  it('/mcp 2025-11-25: tasks/result waits for the end and returns the tool result', async () => {
    const client = await legacyClient(ALICE);
    try {
      const stream = client.experimental.tasks.callToolStream({ name: 'job.quick', arguments: { x: 'sdk' } }, undefined, { task: { ttl: 60_000 } });
      const seen: string[] = [];
      let result: { content: { text: string }[] } | undefined;
      for await (const m of stream) {
        seen.push(m.type);
        if (m.type === 'result') result = m.result as typeof result;
      }
      assert.equal(seen[0], 'taskCreated');
      assert.equal(result?.content[0]?.text, 'done sdk');
    } finally {
      await client.close();
    }
  });

  it('/mcp 2026-07-28 with the tasks extension: CreateTaskResult, tasks/get, tasks/cancel (process gone); -32021 without the extension', async () => {
    const file = pidfile();
    const created = await modern(ALICE, 'tools/call', { name: 'job.sleep', arguments: { pidfile: file } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const r = created.body.result!;
    assert.equal(r.resultType, 'task');
    assert.equal(r.status, 'working');
    assert.equal(typeof r.ttlMs, 'number');
    const id = r.taskId as string;
    const pid = await pidIn(file);
    assert.equal((await modern(ALICE, 'tasks/get', { taskId: id })).body.result?.status, 'working');
    assert.equal((await modern(BOB, 'tasks/get', { taskId: id })).body.error?.code, -32602);
    assert.equal((await modern(BOB, 'tasks/cancel', { taskId: id })).body.error?.code, -32602);
    const ack = await modern(ALICE, 'tasks/cancel', { taskId: id });
    assert.equal(ack.body.result?.resultType, 'complete');
    assert.ok(!('status' in ack.body.result!));
    await gone(pid);
    const got = (await modern(ALICE, 'tasks/get', { taskId: id })).body.result!;
    assert.equal(got.status, 'cancelled');
    assert.equal(got.statusMessage, 'cancelled by alice');

    const plain = await modern(ALICE, 'tools/call', { name: 'job.sleep', arguments: { pidfile: pidfile() } }, false);
    assert.equal(plain.status, 400);
    assert.equal(plain.body.error?.code, -32021);
    assert.deepEqual(plain.body.error?.data, { requiredCapabilities: { extensions: { [EXT]: {} } } });
    assert.equal((await modern(ALICE, 'tasks/get', { taskId: id }, false)).body.error?.code, -32021);
    // Invalid arguments start no task: the call answers an isError result, as a plain call does.
    const invalid = (await modern(ALICE, 'tools/call', { name: 'job.sleep', arguments: {} })).body.result!;
    assert.equal(invalid.isError, true);
    assert.equal(invalid.resultType, 'complete');
    assert.equal((invalid.structuredContent as { error: { code: string } }).error.code, 'INVALID_INPUT');
  });

  it('/mcp 2026-07-28 ask_before_task: an input_required round without a task, then a task whose result carries the answer', async () => {
    const caps = { elicitation: {} };
    const round1 = await modern(ALICE, 'tools/call', { name: 'ask.greet', arguments: {} }, true, caps);
    assert.equal(round1.body.result?.resultType, 'input_required', JSON.stringify(round1.body));
    assert.equal(round1.body.result?.taskId, undefined);
    assert.deepEqual(Object.keys(round1.body.result?.inputRequests as object), ['user_name']);
    assert.equal(typeof round1.body.result?.requestState, 'string');
    assert.ok(!srv.logs().some((l) => l.event === 'task.started' && l.tool === 'ask.greet'), 'no task before the answer');

    const round2 = await modern(ALICE, 'tools/call', {
      name: 'ask.greet', arguments: {}, requestState: round1.body.result?.requestState,
      inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
    }, true, caps);
    const created = round2.body.result!;
    assert.equal(created.resultType, 'task', JSON.stringify(round2.body));
    assert.equal(typeof created.taskId, 'string');
    assert.equal(created.requestState, undefined);
    assert.equal(created.inputRequests, undefined);
    const done = await waitFor(async () => {
      const t = (await modern(ALICE, 'tasks/get', { taskId: created.taskId })).body.result;
      return t?.status === 'completed' ? t : undefined;
    }, 'the task to complete');
    assert.deepEqual((done.result as { content: unknown[] }).content, [{ type: 'text', text: 'Hello, Alice!' }]);
    // Log lines travel on their own pipe and may arrive after the answers that followed them.
    await waitFor(() => (srv.logs().some((l) => l.event === 'task.started' && l.tool === 'ask.greet') ? true : undefined), 'the task.started log line');
    assert.equal(srv.logs().filter((l) => l.event === 'task.started' && l.tool === 'ask.greet').length, 1);
  });

  it('/mcp 2026-07-28 subscriptions/listen with taskIds: notifications/tasks for the caller\'s own task; -32021 without the extension', async () => {
    const created = (await modern(ALICE, 'tools/call', { name: 'job.sleep', arguments: { pidfile: pidfile() } })).body.result!;
    const id = created.taskId as string;
    const refused = await modernRaw(ALICE, 'subscriptions/listen', { notifications: { taskIds: [id] } }, false);
    assert.equal(refused.status, 400);
    assert.equal((await refused.json() as { error: { code: number } }).error.code, -32021);

    const mine = await modernRaw(ALICE, 'subscriptions/listen', { notifications: { taskIds: [id, 'no-such-task'] } });
    const foreign = await modernRaw(BOB, 'subscriptions/listen', { notifications: { taskIds: [id] } });
    const it = frames(mine.body!);
    const theirs = frames(foreign.body!);
    const ack = (await it.next()).value!;
    assert.deepEqual((ack.params as Json).notifications, { taskIds: [id] }, 'the ack echoes only the caller\'s own task');
    assert.deepEqual(((await theirs.next()).value!.params as Json).notifications, { taskIds: [] });

    assert.equal((await modern(ALICE, 'tasks/cancel', { taskId: id })).status, 200);
    const note = (await it.next()).value!;
    assert.equal(note.method, 'notifications/tasks');
    const params = note.params as Json;
    assert.deepEqual([params.taskId, params.status, params.statusMessage], [id, 'cancelled', 'cancelled by alice']);
    assert.deepEqual(params._meta, { 'io.modelcontextprotocol/subscriptionId': (ack.params as Json)._meta['io.modelcontextprotocol/subscriptionId'] });
    assert.equal(typeof params._meta['io.modelcontextprotocol/subscriptionId'], 'number');
    await it.return(undefined); // ends the listen streams
    await theirs.return(undefined);
  });

  it('/ws: the same methods as /mcp — create, get, cancel (process gone), bob gets not-found, a plain call is refused', async () => {
    const open = (token: string) => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`${srv.url.replace('http', 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
    const notes: { method: string; params: Record<string, unknown> }[] = [];
    const rpc = (ws: WebSocket) => {
      let id = 0;
      const waiting = new Map<number, (m: Record<string, unknown>) => void>();
      ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (typeof m.id === 'number') waiting.get(m.id)?.(m);
        else if (ws === a) notes.push(m);
      });
      return (method: string, params: Record<string, unknown> = {}) => new Promise<{ result?: Record<string, unknown>; error?: { code: number } }>((resolve) => {
        waiting.set(++id, resolve as never);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    };
    const a = await open(ALICE);
    const b = await open(BOB);
    try {
      const ca = rpc(a);
      const cb = rpc(b);
      for (const c of [ca, cb]) await c('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } });
      const file = pidfile();
      const created = await ca('tools/call', { name: 'job.sleep', arguments: { pidfile: file }, task: { ttl: 60_000 } });
      const id = (created.result?.task as { taskId: string }).taskId;
      const pid = await pidIn(file);
      assert.equal((await ca('tasks/get', { taskId: id })).result?.status, 'working');
      assert.equal((await cb('tasks/get', { taskId: id })).error?.code, -32602);
      assert.equal((await ca('tasks/cancel', { taskId: id })).result?.status, 'cancelled');
      await gone(pid);
      assert.equal((await ca('tasks/get', { taskId: id })).result?.status, 'cancelled');
      // The session that started the task is told of its status change (2025-11-25 notifications/tasks/status).
      const note = await waitFor(() => notes.find((m) => m.method === 'notifications/tasks/status' && m.params.taskId === id), 'a task status notification');
      assert.equal(note.params.status, 'cancelled');
      assert.equal((await ca('tools/call', { name: 'job.sleep', arguments: { pidfile: pidfile() } })).error?.code, -32601);
    } finally {
      a.close();
      b.close();
    }
  });

  it('/metadata and /readyz report running tasks', async () => {
    const started = await svc('/svc/tools/job.sleep', ALICE, { method: 'POST', body: JSON.stringify({ pidfile: pidfile() }) });
    const id = (await started.json() as { task_id: string }).task_id;
    const meta = await (await fetch(`${srv.url}/metadata`)).json() as { tasks: { running: number } };
    assert.equal(meta.tasks.running, 1);
    await svc(`/svc/tasks/${id}`, ALICE, { method: 'DELETE' });
    const ready = await (await fetch(`${srv.url}/readyz`)).json() as { tasks: { running: number } };
    assert.equal(ready.tasks.running, 0);
  });

  it('SIGTERM with a running task: the task is cancelled by shutdown, its process is gone, the server exits within the drain timeout', async () => {
    const own = await srv.again();
    const file = pidfile();
    const started = await fetch(`${own.url}/svc/tools/job.sleep`, { method: 'POST', headers: { authorization: `Bearer ${ALICE}` }, body: JSON.stringify({ pidfile: file }) });
    assert.equal(started.status, 202);
    const id = (await started.json() as { task_id: string }).task_id;
    const pid = await pidIn(file);
    const exited = await own.stop();
    assert.equal(exited.code, 0);
    await gone(pid);
    const drain = own.logs().find((l) => l.event === 'task.drain') as { cancelled: string[]; finished: string[] } | undefined;
    assert.deepEqual(drain?.cancelled, [id]);
    const cancelled = own.logs().find((l) => l.event === 'task.cancelled' && l.task_id === id);
    assert.equal(cancelled?.cancelled_by, 'shutdown');
  });
});
