// The issue-28 case, end to end through `svc serve` (port 0, the manifest watched): a static
// token starts tasks on a tenant-bound tool (`tenant:{{tenant}}.read`) on /svc, /mcp in both
// eras and /ws in both eras; a hot reload then takes `tenant:acme.read` from that token. Every
// read of the acme tasks is refused from then on — get, result, list, cancel — on every
// transport, with INSUFFICIENT_SCOPE naming tenant:acme.read (HTTP: 403 with the step-up
// challenge), while the token's globex task stays readable (nothing is refused too broadly).

import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { RawMcp, RawWs } from '../helpers/mcp-app.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'tenant-token-for-tasks-1';
const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };

const manifest = (scopes: string[]) => `
version: 1
name: task-reauth
auth:
  tokens:
    - { name: ci, token: "\${CI_TOKEN}", scopes: ${JSON.stringify(scopes)} }
profile:
  scopes: ["tenant:acme.read", "tenant:globex.read"]
routes:
  public: [/healthz]
  protected: [/svc, /mcp, /ws]
tools:
  - name: report.run
    description: One tenant's report, run as a task.
    task: required
    input_schema: { type: object, properties: { tenant: { type: string, pattern: "^[a-z]+$" } }, required: [tenant] }
    required_scopes: ["tenant:{{tenant}}.read"]
    template: "report for {{tenant}}"
`;

type Json = Record<string, any>;

describe('a task is re-authorised with its own arguments on every read, on every transport (svc serve, hot reload)', () => {
  let srv: Served;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const ids: Record<string, string> = {};

  const svcPost = (tenant: string) => fetch(`${srv.url}/svc/tools/report.run`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ tenant }) });
  const modern = (method: string, params: Json, name?: string) => fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method, ...(name && { 'mcp-name': name }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: modernMeta } }),
  });
  const wsCall = async (ws: RawWs, method: string, params: Json, era: 'legacy' | 'modern') => ws.call(method, era === 'modern' ? { ...params, _meta: modernMeta } : params);

  before(async () => {
    srv = await serveManifest(manifest(['tenant:acme.read', 'tenant:globex.read']), { env: { CI_TOKEN: TOKEN } });

    const s = await svcPost('acme');
    assert.equal(s.status, 202);
    ids.svc = ((await s.json()) as Json).task_id;
    const g = await svcPost('globex');
    assert.equal(g.status, 202);
    ids.globex = ((await g.json()) as Json).task_id;

    const legacy = new RawMcp(srv.url, TOKEN);
    await legacy.initialize();
    const l = await legacy.request('tools/call', { name: 'report.run', arguments: { tenant: 'acme' }, task: { ttl: 60_000 } });
    ids.mcp2025 = (l.answer as Json).result.task.taskId;

    const m = (await (await modern('tools/call', { name: 'report.run', arguments: { tenant: 'acme' } }, 'report.run')).json()) as Json;
    assert.equal(m.result.resultType, 'task', JSON.stringify(m));
    ids.mcp2026 = m.result.taskId;

    const ws = RawWs.open(srv.url, TOKEN);
    await ws.initialize();
    ids.ws2025 = ((await wsCall(ws, 'tools/call', { name: 'report.run', arguments: { tenant: 'acme' }, task: { ttl: 60_000 } }, 'legacy')) as Json).result.task.taskId;
    ids.ws2026 = ((await wsCall(ws, 'tools/call', { name: 'report.run', arguments: { tenant: 'acme' } }, 'modern')) as Json).result.taskId;
    ws.socket.close();

    // Every task has finished and is readable by its owner before the reload.
    for (const id of Object.values(ids)) {
      const t = await waitFor(async () => {
        const body = (await (await fetch(`${srv.url}/svc/tasks/${id}`, { headers: auth })).json()) as Json;
        return body.status === 'completed' ? body : undefined;
      }, `task ${id} to complete`);
      assert.match(t.result.result, /^report for (acme|globex)$/);
    }

    const reloads = srv.logs().filter((l) => l.event === 'config.reloaded').length;
    srv.write(manifest(['tenant:globex.read']));
    await waitFor(() => srv.logs().filter((l) => l.event === 'config.reloaded').length > reloads || undefined, 'the reload', 15_000);
  });

  after(async () => {
    await srv?.stop();
  });

  const deniedAcme = (data: Json | undefined) => {
    assert.equal(data?.code, 'INSUFFICIENT_SCOPE', JSON.stringify(data));
    assert.deepEqual(data?.missing, ['tenant:acme.read']);
  };

  it('a new call for acme is refused (the reload took effect)', async () => {
    const r = await svcPost('acme');
    assert.equal(r.status, 403);
    deniedAcme(((await r.json()) as Json).error);
  });

  it('/svc: GET /svc/tasks/ID and DELETE are 403 with the challenge; GET /svc/tasks leaves the acme tasks out', async () => {
    for (const id of [ids.svc!, ids.mcp2025!, ids.ws2026!]) {
      for (const method of ['GET', 'DELETE']) {
        const r = await fetch(`${srv.url}/svc/tasks/${id}`, { method, headers: auth });
        assert.equal(r.status, 403, `${method} ${id}`);
        assert.match(r.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="tenant:acme.read"/);
        deniedAcme(((await r.json()) as Json).error);
      }
    }
    const list = (await (await fetch(`${srv.url}/svc/tasks`, { headers: auth })).json()) as Json;
    assert.deepEqual(list.tasks.map((t: Json) => t.task_id), [ids.globex]);
    assert.equal(((await (await fetch(`${srv.url}/svc/tasks/${ids.globex}`, { headers: auth })).json()) as Json).status, 'completed');
  });

  it('/mcp 2025 session: tasks/get, tasks/result and tasks/cancel are 403 with the JSON-RPC error; tasks/list leaves them out', async () => {
    const c = new RawMcp(srv.url, TOKEN);
    await c.initialize();
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const { res, answer } = await c.request(method, { taskId: ids.mcp2025 });
      assert.equal(res.status, 403, method);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
      assert.equal((answer as Json).error.code, -32003);
      deniedAcme((answer as Json).error.data);
    }
    const list = (await c.request('tasks/list')).answer as Json;
    assert.deepEqual(list.result.tasks.map((t: Json) => t.taskId), [ids.globex]);
  });

  it('/mcp 2026-07-28: tasks/get and tasks/cancel are 403 with the JSON-RPC error', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const r = await modern(method, { taskId: ids.mcp2026 }, ids.mcp2026);
      assert.equal(r.status, 403, method);
      const body = (await r.json()) as Json;
      assert.equal(body.error.code, -32003);
      deniedAcme(body.error.data);
    }
    const ok = (await (await modern('tasks/get', { taskId: ids.globex }, ids.globex)).json()) as Json;
    assert.equal(ok.result.status, 'completed');
  });

  it('/ws in both eras: tasks/get (and the 2025 result) answer the JSON-RPC INSUFFICIENT_SCOPE error', async () => {
    const ws = RawWs.open(srv.url, TOKEN);
    await ws.initialize();
    for (const [method, era, id] of [['tasks/get', 'legacy', ids.ws2025], ['tasks/result', 'legacy', ids.ws2025], ['tasks/get', 'modern', ids.ws2026], ['tasks/get', 'modern', ids.svc]] as const) {
      const a = (await wsCall(ws, method, { taskId: id }, era)) as Json;
      assert.equal(a.error?.code, -32003, `${era} ${method}: ${JSON.stringify(a)}`);
      deniedAcme(a.error.data);
    }
    const list = (await wsCall(ws, 'tasks/list', {}, 'legacy')) as Json;
    assert.deepEqual(list.result.tasks.map((t: Json) => t.taskId), [ids.globex]);
    ws.socket.close();
  });
});
