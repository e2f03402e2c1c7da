// Imported tools run as tasks (expose.overrides.NAME.task) behind the real `svc serve`, with a recording
// SDK 1.x upstream (test/helpers/recording-upstream.ts): on /svc (a required task from a plain POST, an
// optional one with Prefer: respond-async), on /mcp 2025-11-25 (the 1.x SDK's task API) and 2026-07-28
// (the tasks extension); a task's result is the upstream's, and cancelling the task cancels the call
// upstream (the upstream's request signal aborts) on every one of them.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const V2026 = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';

describe('upstreams: imported tools as tasks (/svc, /mcp 2025-11-25 and 2026-07-28), cancellation reaching the upstream', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let srv: Served;
  let n = 0;

  const svc = (path: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers } });
  const modern = async (method: string, params: Record<string, unknown>) => {
    const name = method === 'tools/call' ? params.name : params.taskId;
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V2026, 'mcp-method': method, 'mcp-name': String(name),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++n, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } } } } }),
    });
    return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } };
  };
  /** Waits until the upstream has seen one more `slow` call than `before`, then one more cancellation than `cancelled`. */
  const startedThenCancelled = async (calls: number, cancelled: number, cancel: () => Promise<unknown>) => {
    await waitFor(() => (up.calls.filter((c) => c.name === 'slow').length > calls ? true : undefined), 'the slow call upstream');
    await cancel();
    await waitFor(() => (up.cancelled.length > cancelled ? true : undefined), 'the cancellation upstream');
  };

  before(async () => {
    up = await startRecordingUpstream();
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['rec.use'] },
      profile: { scopes: ['rec.use'] },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
      upstreams: [{
        name: 'rec',
        url: up.url,
        expose: { prefix: 'rec.', include: ['echo', 'slow'], required_scopes: ['rec.use'], overrides: { echo: { task: 'required' }, slow: { task: 'optional' } } },
      }],
    }, { env: { TOKEN } });
  });

  after(async () => {
    await srv?.stop();
    await up?.close();
  });

  it('lists the overrides as execution.taskSupport (client 1.x)', async () => {
    const client = new Client({ name: 'up-tasks', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    try {
      const tools = (await client.listTools()).tools;
      assert.deepEqual(tools.find((t) => t.name === 'rec.echo')?.execution, { taskSupport: 'required' });
      assert.deepEqual(tools.find((t) => t.name === 'rec.slow')?.execution, { taskSupport: 'optional' });
    } finally {
      await client.close();
    }
  });

  it('/svc: a task-required tool answers 202 and its task completes with the upstream\'s result', async () => {
    const r = await svc('/svc/tools/rec.echo', { method: 'POST', body: JSON.stringify({ text: 'as a task' }) });
    assert.equal(r.status, 202);
    const { task_id: id } = (await r.json()) as { task_id: string };
    const done = await waitFor(async () => {
      const t = (await (await svc(`/svc/tasks/${id}`)).json()) as { status: string; result?: { content: unknown[] } };
      return t.status === 'working' ? undefined : t;
    }, 'the task to end');
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.result?.content, [{ type: 'text', text: 'as a task' }]);
    assert.deepEqual(up.calls.filter((c) => c.name === 'echo').map((c) => c.args), [{ text: 'as a task' }]);
  });

  it('/svc: DELETE of an optional task (Prefer: respond-async) cancels the call upstream', async () => {
    const calls = up.calls.filter((c) => c.name === 'slow').length;
    const r = await svc('/svc/tools/rec.slow', { method: 'POST', headers: { prefer: 'respond-async' }, body: JSON.stringify({ ms: 600_000 }) });
    assert.equal(r.status, 202);
    const { task_id: id } = (await r.json()) as { task_id: string };
    await startedThenCancelled(calls, up.cancelled.length, async () => {
      const del = (await (await svc(`/svc/tasks/${id}`, { method: 'DELETE' })).json()) as { status: string };
      assert.equal(del.status, 'cancelled');
    });
  });

  it('/mcp 2025-11-25: a task through the 1.x SDK\'s task API; tasks/cancel cancels the call upstream', async () => {
    const client = new Client({ name: 'up-tasks-legacy', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    try {
      let result: { content: unknown[] } | undefined;
      for await (const m of client.experimental.tasks.callToolStream({ name: 'rec.echo', arguments: { text: 'legacy task' } }, undefined, { task: { ttl: 60_000 } })) {
        if (m.type === 'result') result = m.result as typeof result;
      }
      assert.deepEqual(result?.content, [{ type: 'text', text: 'legacy task' }]);

      const calls = up.calls.filter((c) => c.name === 'slow').length;
      const stream = client.experimental.tasks.callToolStream({ name: 'rec.slow', arguments: { ms: 600_000 } }, undefined, { task: { ttl: 60_000 } });
      const first = (await stream.next()).value as { type: string; task: { taskId: string } };
      await stream.return(undefined);
      assert.equal(first.type, 'taskCreated');
      await startedThenCancelled(calls, up.cancelled.length, async () => {
        assert.equal((await client.experimental.tasks.cancelTask(first.task.taskId)).status, 'cancelled');
      });
    } finally {
      await client.close();
    }
  });

  it('/mcp 2026-07-28 (tasks extension): CreateTaskResult, the result through tasks/get; tasks/cancel cancels the call upstream', async () => {
    const created = (await modern('tools/call', { name: 'rec.echo', arguments: { text: 'modern task' } })).result!;
    assert.equal(created.resultType, 'task');
    const done = await waitFor(async () => {
      const t = (await modern('tasks/get', { taskId: created.taskId })).result!;
      return t.status === 'working' ? undefined : t;
    }, 'the 2026 task to end');
    assert.equal(done.status, 'completed');
    assert.deepEqual((done.result as { content: unknown[] }).content, [{ type: 'text', text: 'modern task' }]);

    const calls = up.calls.filter((c) => c.name === 'slow').length;
    const slow = (await modern('tools/call', { name: 'rec.slow', arguments: { ms: 600_000 } })).result!;
    assert.equal(slow.resultType, 'task');
    await startedThenCancelled(calls, up.cancelled.length, () => modern('tasks/cancel', { taskId: slow.taskId }));
    assert.equal((await modern('tasks/get', { taskId: slow.taskId })).result?.status, 'cancelled');
  });
});
