// `server.workers: 2` on the real `svc serve` (port 0): both workers answer on the one port (the
// fastsvc-worker header names the pid that served), and what one worker does the other sees at
// once — an OAuth code issued through one redeems on the other and a token revoked through one is
// refused by the other (built-in server on the memory provider → the primary's temporary SQLite
// file), a task started on one is read and cancelled on the other, a quota counts calls on both, a
// reload applies to both and an invalid edit to neither, /metrics sums both, both write their
// audit lines to the one file; a worker killed with SIGKILL is replaced and the port keeps
// answering; SIGTERM drains both and exits 0. Each request that must reach a given worker goes
// over a connection pinned to it (a keep-alive agent with one socket, kept once it reached that pid).

import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { authorize, discover, register } from './oauth-harness.js';
import { secret } from '../helpers/secrets.js';

const TOKEN = secret(randomBytes(24).toString('base64url'))!;

const manifest = (extra = '') => `
version: 1
name: workers
server:
  workers: 2
  host: 127.0.0.1
routes:
  public: [/healthz, /metrics]
  protected: [/svc, /mcp, /ws]
auth:
  token: \${SVC_TOKEN}
  subject: alice
oauth:
  enabled: true
  provider: { type: memory }
  login: { mode: auto, subject: dev }
  registration: { enabled: true }
profile:
  scopes: [notes.read]
audit:
  to: { file: audit.log }
tools:
  - name: notes.hello
    description: Greets someone.
    required_scopes: [notes.read]
    template: "Hello!"
  - name: notes.limited
    description: Two calls an hour per caller.
    required_scopes: [notes.read]
    limits: { requests: 2, window_ms: 3600000 }
    template: "counted"
  - name: job.sleep
    description: Sleeps a minute.
    task: required
    required_scopes: [notes.read]
    exec:
      argv: [/bin/sh, -c, 'exec sleep 60']
${extra}`;

interface Answer { status: number; pid: string; body: string }

/** A connection pinned to one worker: a keep-alive agent with one socket. */
class Pinned {
  constructor(readonly url: string, readonly agent: http.Agent, readonly pid: string) {}

  request(method: string, path: string, o: { token?: string; body?: string; type?: string } = {}): Promise<Answer> {
    const u = new URL(path, this.url);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.body !== undefined) headers['content-type'] = o.type ?? 'application/json';
      const req = http.request({ host: u.hostname, port: u.port, method, path: u.pathname + u.search, headers, agent: this.agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => void (body += c)).on('end', () => {
          const pid = String(res.headers['fastsvc-worker']);
          if (pid !== this.pid) reject(new Error(`answered by ${pid}, pinned to ${this.pid}`));
          else resolve({ status: res.statusCode!, pid, body });
        });
      });
      req.on('error', reject);
      req.end(o.body);
    });
  }
}

/** A fresh connection's first answer names its worker: open connections until one reaches a worker `want` accepts. */
async function pin(url: string, want: (pid: string) => boolean): Promise<Pinned> {
  return waitFor(async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const pid = await new Promise<string>((resolve, reject) => {
      http.get(`${url}/healthz`, { agent }, (res) => {
        res.resume().on('end', () => resolve(String(res.headers['fastsvc-worker'])));
      }).on('error', reject);
    });
    if (want(pid)) return new Pinned(url, agent, pid);
    agent.destroy();
    return undefined;
  }, 'a connection to the wanted worker', 10_000, 1);
}

describe('server.workers: 2 (real svc serve, port 0)', function () {
  this.timeout(60_000);
  let srv: Served;
  let a: Pinned;
  let b: Pinned;

  before(async () => {
    srv = await serveManifest(manifest(), { env: { SVC_TOKEN: TOKEN } });
    a = await pin(srv.url, () => true);
    b = await pin(srv.url, (pid) => pid !== a.pid);
  });
  after(async () => {
    a?.agent.destroy();
    b?.agent.destroy();
    await srv?.stop();
  });

  it('prints one listening line, and both workers answer on its port', async () => {
    assert.equal(srv.stdout().split('\n').filter((l) => l.startsWith('listening on ')).length, 1);
    const pids = new Set<string>();
    await waitFor(async () => {
      const r = await fetch(`${srv.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}`, connection: 'close' } });
      assert.equal(r.status, 200);
      pids.add(r.headers.get('fastsvc-worker')!);
      return pids.size === 2 ? true : undefined;
    }, 'answers from two workers');
    assert.ok(pids.has(a.pid) && pids.has(b.pid));
  });

  it('an OAuth code issued through one worker redeems on the other; a token revoked through one is refused by the other at once', async () => {
    const as = await discover(srv.url);
    const client = await register(as);
    // The callback's redirect (the code) comes from whichever worker the browser reached last.
    const flow = await authorize(as, client, { scope: 'notes.read', resource: `${srv.url}/svc` });
    assert.ok(flow.callback, 'the authorization ended at the callback');
    const issuer = flow.res.headers.get('fastsvc-worker')!;
    const other = issuer === a.pid ? b : a;
    const form = new URLSearchParams({
      grant_type: 'authorization_code', code: flow.callback!.searchParams.get('code')!, redirect_uri: flow.redirectUri,
      code_verifier: flow.verifier, client_id: client.client_id, resource: `${srv.url}/svc`,
    });
    const token = await other.request('POST', '/token', { body: form.toString(), type: 'application/x-www-form-urlencoded' });
    assert.equal(token.status, 200, token.body);
    const access = secret(JSON.parse(token.body).access_token as string)!;
    // Each worker verifies (and caches) it.
    assert.equal((await a.request('GET', '/svc', { token: access })).status, 200);
    assert.equal((await b.request('GET', '/svc', { token: access })).status, 200);
    const revoked = await a.request('POST', '/revoke', { body: new URLSearchParams({ token: access, client_id: client.client_id }).toString(), type: 'application/x-www-form-urlencoded' });
    assert.equal(revoked.status, 200, revoked.body);
    assert.equal((await b.request('GET', '/svc', { token: access })).status, 401);
    assert.equal((await a.request('GET', '/svc', { token: access })).status, 401);
  });

  it('a task started on one worker is read and cancelled on the other', async () => {
    const started = await a.request('POST', '/svc/tools/job.sleep', { token: TOKEN, body: '{}' });
    assert.equal(started.status, 202, started.body);
    const id = JSON.parse(started.body).task_id as string;
    const read = await b.request('GET', `/svc/tasks/${id}`, { token: TOKEN });
    assert.equal(read.status, 200, read.body);
    assert.equal(JSON.parse(read.body).status, 'working');
    const cancelled = await b.request('DELETE', `/svc/tasks/${id}`, { token: TOKEN });
    assert.equal(cancelled.status, 200, cancelled.body);
    assert.equal(JSON.parse(cancelled.body).status, 'cancelled');
    // The worker running it hears the cancel and ends the call.
    await waitFor(() => srv.logs().find((l) => l.event === 'task.cancelled' && l.task_id === id), 'the task.cancelled line');
    assert.equal(JSON.parse((await a.request('GET', `/svc/tasks/${id}`, { token: TOKEN })).body).status, 'cancelled');
  });

  it('a quota counts the calls made on both workers', async () => {
    assert.equal((await a.request('POST', '/svc/tools/notes.limited', { token: TOKEN, body: '{}' })).status, 200);
    assert.equal((await b.request('POST', '/svc/tools/notes.limited', { token: TOKEN, body: '{}' })).status, 200);
    assert.equal((await a.request('POST', '/svc/tools/notes.limited', { token: TOKEN, body: '{}' })).status, 429);
    assert.equal((await b.request('POST', '/svc/tools/notes.limited', { token: TOKEN, body: '{}' })).status, 429);
  });

  it('/metrics on either worker sums both; audit lines of both land in the one file', async () => {
    const calls = async () => {
      const text = (await a.request('GET', '/metrics')).body;
      const line = text.split('\n').find((l) => l.startsWith('fastsvc_calls_total{') && l.includes('capability="notes.hello"') && l.includes('outcome="ok"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await calls();
    assert.equal((await a.request('POST', '/svc/tools/notes.hello', { token: TOKEN, body: '{}' })).status, 200);
    assert.equal((await b.request('POST', '/svc/tools/notes.hello', { token: TOKEN, body: '{}' })).status, 200);
    assert.equal(await calls(), before + 2);
    const viaB = (await b.request('GET', '/metrics')).body;
    assert.match(viaB, /fastsvc_calls_total\{[^}]*capability="notes.hello"[^}]*outcome="ok"[^}]*\} /);
    const file = join(srv.dir, 'audit.log');
    const lines = await waitFor(() => {
      if (!existsSync(file)) return undefined;
      const all = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      const hello = all.filter((l) => l.capability === 'tool:notes.hello' && l.decision === 'allow');
      return hello.length >= before + 2 ? hello : undefined;
    }, 'both workers\' audit lines in audit.log');
    assert.equal(lines.length, before + 2, 'each call once, whichever worker made it');
  });

  it('a reload applies to both workers, and an invalid edit to neither; each counts once in /metrics and the audit stream', async () => {
    const tools = async (p: Pinned) => JSON.parse((await p.request('GET', '/svc', { token: TOKEN })).body) as { tools: { name: string }[] };
    const count = () => srv.logs().filter((l) => l.event === 'workers.reloaded').length;
    const reloads = async (result: string) => {
      const line = (await b.request('GET', '/metrics')).body.split('\n').find((l) => l.startsWith(`fastsvc_reloads_total{result="${result}"}`));
      return Number(line?.split(' ').pop());
    };
    const file = join(srv.dir, 'audit.log');
    const audit = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
    /** The reload decisions audited so far, once a call made now on each worker is in the file (each worker's lines arrive in order). */
    const audited = async () => {
      const marks = audit().filter((l) => l.capability === 'tool:notes.hello').length;
      for (const p of [a, b]) assert.equal((await p.request('POST', '/svc/tools/notes.hello', { token: TOKEN, body: '{}' })).status, 200);
      const all = await waitFor(() => {
        const now = audit();
        return now.filter((l) => l.capability === 'tool:notes.hello').length >= marks + 2 ? now : undefined;
      }, 'the calls\' audit lines');
      return all.filter((l) => typeof l.decision === 'string' && l.decision.startsWith('reload_')).map((l) => l.decision);
    };
    const seen = count();
    const [applied0, rejected0, audited0] = [await reloads('applied'), await reloads('rejected'), (await audited()).length];
    srv.write(manifest(`  - name: notes.added
    description: Added by a reload.
    required_scopes: [notes.read]
    template: "new"
`));
    const applied = await waitFor(() => srv.logs().filter((l) => l.event === 'workers.reloaded')[seen], 'the reload');
    assert.equal(applied.applied, true);
    for (const p of [a, b]) assert.ok((await tools(p)).tools.some((t) => t.name === 'notes.added'), `worker ${p.pid} serves the added tool`);
    assert.equal(await reloads('applied'), applied0 + 1, 'one reload counts once, however many workers applied it');
    assert.deepEqual((await audited()).slice(audited0), ['reload_applied'], 'one audit event for one reload');
    srv.write(manifest(`  - name: notes.broken
    description: Requires a scope nobody declared.
    required_scopes: [notes.nope]
    template: "never"
`));
    const rejected = await waitFor(() => srv.logs().filter((l) => l.event === 'workers.reloaded')[seen + 1], 'the rejected reload');
    assert.equal(rejected.rejected, true);
    for (const p of [a, b]) {
      const names = (await tools(p)).tools.map((t) => t.name);
      assert.ok(names.includes('notes.added') && !names.includes('notes.broken'), `worker ${p.pid} kept the last good generation`);
    }
    assert.equal(await reloads('rejected'), rejected0 + 1, 'one rejected reload counts once');
    assert.deepEqual((await audited()).slice(audited0), ['reload_applied', 'reload_rejected'], 'one audit event for the rejected reload');
  });

  it('a worker killed with SIGKILL is replaced, and the port keeps answering', async () => {
    process.kill(Number(a.pid), 'SIGKILL');
    const exited = await waitFor(() => srv.logs().find((l) => l.event === 'worker.exited' && String(l.pid) === a.pid), 'the exit line');
    assert.equal(exited.signal, 'SIGKILL');
    const fresh = await waitFor(() => srv.logs().find((l) => l.event === 'worker.ready' && String(l.pid) !== a.pid && String(l.pid) !== b.pid), 'a new worker');
    const c = await pin(srv.url, (pid) => pid === String(fresh.pid));
    assert.equal((await c.request('GET', '/svc', { token: TOKEN })).status, 200);
    assert.equal((await b.request('GET', '/svc', { token: TOKEN })).status, 200);
    c.agent.destroy();
  });

  it('SIGTERM drains every worker and exits 0', async () => {
    a.agent.destroy();
    b.agent.destroy();
    const exit = await srv.stop();
    assert.equal(exit.code, 0);
    for (const pid of [b.pid]) assert.throws(() => process.kill(Number(pid), 0), /ESRCH/);
  });
});

describe('svc serve run as a worker of someone else\'s node:cluster primary', function () {
  this.timeout(60_000);

  it('serves alone (the worker path is only for workers fastsvc\'s primary forked)', async () => {
    const srv = await serveManifest(`
version: 1
name: embedded
server: { host: 127.0.0.1 }
auth:
  token: \${SVC_TOKEN}
tools:
  - name: hello
    description: Greets.
    template: "Hello!"
`, { env: { SVC_TOKEN: TOKEN }, nodeArgs: ['--import', join(process.cwd(), 'test/e2e/fixtures/foreign-cluster.mjs')] });
    try {
      const res = await fetch(`${srv.url}/svc/tools/hello`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('fastsvc-worker'), null, 'not a fastsvc worker');
    } finally {
      assert.equal((await srv.stop()).code, 0);
    }
  });
});
