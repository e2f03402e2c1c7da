// @modelcontextprotocol/server-everything as an upstream of the real `svc serve`, over stdio and over
// Streamable HTTP (both started by test/helpers/upstreams.ts under the tap, which records what reached them),
// and a second fastsvc as an upstream: its tools (filtered by include/exclude, with its real-world input
// schemas validated by fastsvc), structured content, resources, resource templates and prompts are served
// on /svc and /mcp; the stdio child runs with only the env it is given; killed (its pid, from the tap's
// records), it is restarted with backoff (/readyz counts the restart) and serves again; neither child saw a
// caller's token in any message or header; the second fastsvc's audit log shows a denied call never
// reached it.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { alive } from '../helpers/process.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { everythingHttp, everythingStdio, type HttpUpstream, type StdioUpstream } from '../helpers/upstreams.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => waitFor(probe, what, 15_000, 50);

const call = async (srv: Served, name: string, args: unknown, token = TOKEN) => {
  const r = await fetch(`${srv.url}/svc/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: r.status, body: await r.json() as Record<string, unknown> };
};
const ADMIN = secret(randomBytes(24).toString('base64url'));
const base = (upstreams: unknown[]) => ({
  version: 1,
  name: 'gateway',
  auth: { token: '${SVC_TOKEN}', scopes: ['ev.read'], tokens: [{ name: 'admin', token: '${ADMIN}', scopes: ['ev.read', 'ev.admin'] }] },
  profile: { scopes: ['ev.read', 'ev.admin'] },
  routes: { public: ['/healthz', '/readyz', '/docs'], protected: ['/svc', '/mcp', '/ws'] },
  upstreams,
});

describe('upstreams: server-everything over stdio and Streamable HTTP, a second fastsvc', function () {
  this.timeout(90_000);

  describe('stdio', () => {
    let ev: StdioUpstream;
    let srv: Served;
    before(async () => {
      ev = everythingStdio();
      srv = await serveManifest(base([{
        name: 'everything',
        command: ev.command,
        env: { PATH: '${PATH}', SHOWN_TO_CHILD: 'yes' },
        restart: { min_ms: 1500, max_ms: 3000 },
        expose: { prefix: 'ev.', exclude: ['toggle-*', 'trigger-long*', 'trigger-sampling*', 'trigger-url*'], required_scopes: ['ev.read'], overrides: { 'get-env': { required_scopes: ['ev.admin'] } } },
      }]), { env: { SVC_TOKEN: TOKEN, ADMIN, NOT_SHOWN: 'not-for-the-child' } });
    });
    after(async () => {
      await srv?.stop();
      await ev?.stop();
    });

    it('imports the tools through include/exclude, with their upstream input schemas checked by fastsvc', async () => {
      const list = await (await fetch(`${srv.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as { tools: { name: string }[] };
      const names = list.tools.map((t) => t.name);
      assert.ok(names.includes('ev.echo') && names.includes('ev.get-sum'), names.join(' '));
      assert.ok(!names.some((n) => n.startsWith('ev.toggle-') || n.startsWith('ev.trigger-long')), names.join(' '));
      assert.ok(names.includes('ev.trigger-elicitation-request'), 'fastsvc declares elicitation upstream, so the upstream offers the tool');
      assert.ok(!names.includes('ev.get-env'), 'get-env needs ev.admin, which the token lacks');
      assert.equal((await call(srv, 'ev.get-sum', { a: 'one', b: 2 })).status, 400);
      const sum = await call(srv, 'ev.get-sum', { a: 1, b: 2 });
      assert.equal(sum.status, 200);
      assert.match(JSON.stringify(sum.body.content), /3/);
      assert.equal((await call(srv, 'ev.get-env', {})).status, 403);
    });

    it('/mcp (client 2.x): structured content, resources, a resource template and a prompt', async () => {
      const client = new ModernClient({ name: 'ev-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => TOKEN } }));
      try {
        const tools = (await client.listTools()).tools;
        const structured = tools.find((t) => t.name === 'ev.get-structured-content');
        assert.ok(structured?.outputSchema, 'the upstream output schema is listed');
        const res = await client.callTool({ name: 'ev.get-structured-content', arguments: { location: 'New York' } });
        assert.ok(res.structuredContent && typeof res.structuredContent === 'object', JSON.stringify(res));
        const resources = (await client.listResources()).resources;
        assert.ok(resources.length > 0);
        const read = await client.readResource({ uri: resources[0]!.uri });
        assert.equal(read.contents[0]?.uri, resources[0]!.uri);
        const templates = (await client.listResourceTemplates()).resourceTemplates;
        assert.ok(templates.length > 0, 'resource templates are imported');
        const prompts = (await client.listPrompts()).prompts;
        const simple = prompts.find((p) => p.name === 'ev.simple-prompt');
        assert.ok(simple, prompts.map((p) => p.name).join(' '));
        const got = await client.getPrompt({ name: 'ev.simple-prompt', arguments: {} });
        assert.ok(got.messages.length > 0);
      } finally {
        await client.close();
      }
    });

    it('the upstream\'s elicitation reaches a 2026-07-28 client (input_required round, the call run again) and a 2025-11-25 one', async () => {
      const answer = { action: 'accept' as const, content: { name: 'Ada' } };
      const modern = new ModernClient({ name: 'ev-e2e-ask', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
      let asked = 0;
      modern.setRequestHandler('elicitation/create', async () => {
        asked++;
        return answer;
      });
      await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => TOKEN } }));
      try {
        assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
        const res = await modern.callTool({ name: 'ev.trigger-elicitation-request', arguments: {} });
        assert.match(JSON.stringify(res.content), /Name: Ada/);
        assert.equal(asked, 1);
      } finally {
        await modern.close();
      }
      const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
      const legacy = new LegacyClient({ name: 'ev-e2e-ask-legacy', version: '1' }, { capabilities: { elicitation: {} } });
      legacy.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }));
      await legacy.connect(transport);
      try {
        const res = await legacy.callTool({ name: 'ev.trigger-elicitation-request', arguments: {} });
        assert.match(JSON.stringify(res.content), /Name: Grace/);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await legacy.close();
      }
    });

    it('the child sees only the env it was given (get-env, which only ev.admin may call)', async () => {
      const env = await call(srv, 'ev.get-env', {}, ADMIN);
      assert.equal(env.status, 200);
      const text = JSON.stringify(env.body.content);
      assert.match(text, /SHOWN_TO_CHILD/);
      assert.doesNotMatch(text, /NOT_SHOWN|not-for-the-child|SVC_TOKEN|ADMIN/);
    });

    it('a killed child is restarted with backoff; its calls fail with UPSTREAM_UNAVAILABLE meanwhile, then work', async () => {
      const [pid] = ev.pids();
      assert.equal(childOf(srv.proc.pid!), pid, 'the tap recorded the child svc serve started');
      process.kill(pid!, 'SIGKILL');
      const state = async () => ((await (await fetch(`${srv.url}/readyz`)).json()) as { upstreams: Record<string, { state: string }> }).upstreams.everything!.state;
      await until('the upstream to be seen lost', async () => ((await state()) === 'restarting' ? true : undefined));
      const meanwhile = await call(srv, 'ev.echo', { message: 'meanwhile' });
      assert.equal(meanwhile.status, 503);
      assert.equal((meanwhile.body.error as { code: string }).code, 'UPSTREAM_UNAVAILABLE');
      assert.equal((await fetch(`${srv.url}/readyz`)).status, 200, 'the server stays ready without one upstream');
      const ready = await until('the restart', async () => {
        const r = await (await fetch(`${srv.url}/readyz`)).json() as { upstreams: Record<string, { state: string; restarts: number }> };
        return r.upstreams.everything!.restarts >= 1 && r.upstreams.everything!.state === 'ready' ? r : undefined;
      });
      assert.equal(ready.upstreams.everything!.restarts, 1);
      const echo = await call(srv, 'ev.echo', { message: 'back' });
      assert.equal(echo.status, 200);
      assert.equal(ev.pids().length, 2, 'one more child started');
      assert.equal(childOf(srv.proc.pid!), ev.pids()[1]);
      assert.notEqual(ev.pids()[1], pid);
      await until('the upstream.lost log line', () => srv.logs().find((l) => l.event === 'upstream.lost'));
    });

    it('no message the children read held a caller\'s token', () => {
      const messages = ev.recorded().filter((r) => r.kind === 'message');
      assert.ok(messages.some((r) => r.message?.method === 'tools/call'), 'the calls were recorded');
      const all = JSON.stringify(messages);
      assert.ok(![TOKEN, ADMIN].some((t) => all.includes(t)));
    });

    it('shutdown ends the child', async () => {
      const pid = childOf(srv.proc.pid!);
      await srv.stop();
      await until('the child to end', () => (alive(pid) ? undefined : true));
    });
  });

  describe('Streamable HTTP (server-everything streamableHttp) and a second fastsvc', () => {
    let everything: HttpUpstream;
    let upstream: Served;
    let srv: Served;
    let audit: string;
    before(async () => {
      everything = await everythingHttp();
      upstream = await serveManifest({
        version: 1, name: 'inner',
        auth: { token: '${UP_TOKEN}', scopes: ['inner.use', 'inner.admin'] },
        profile: { scopes: ['inner.use', 'inner.admin'] },
        audit: { to: { file: 'audit.jsonl' } },
        routes: { public: ['/healthz'], protected: ['/svc', '/mcp'] },
        tools: [
          { name: 'inner.hello', description: 'Greets.', input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, required_scopes: ['inner.use'], template: 'Hello, {{who}}!' },
          { name: 'inner.wipe', description: 'Dangerous.', input_schema: { type: 'object', properties: {} }, required_scopes: ['inner.admin'], template: 'wiped' },
        ],
      }, { env: { UP_TOKEN } });
      audit = join(upstream.dir, 'audit.jsonl');
      srv = await serveManifest(base([
        { name: 'everything', url: everything.url, expose: { prefix: 'ev.', include: ['echo', 'get-sum'], required_scopes: ['ev.read'] } },
        { name: 'inner', url: `${upstream.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, expose: { required_scopes: ['ev.read'], overrides: { 'inner.wipe': { required_scopes: ['ev.admin'] } } } },
      ]), { env: { SVC_TOKEN: TOKEN, ADMIN, UP_TOKEN } });
    });
    after(async () => {
      await srv?.stop();
      await upstream?.stop();
      await everything?.stop();
    });

    it('server-everything over HTTP: only the included tools, and they answer', async () => {
      const list = await (await fetch(`${srv.url}/svc`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as { tools: { name: string }[] };
      assert.deepEqual(list.tools.map((t) => t.name).filter((n) => n.startsWith('ev.')).sort(), ['ev.echo', 'ev.get-sum']);
      const echo = await call(srv, 'ev.echo', { message: 'over http' });
      assert.equal(echo.status, 200);
      assert.match(JSON.stringify(echo.body.content), /over http/);
      assert.equal((await call(srv, 'ev.get-sum', { a: 1, b: 2 }, ADMIN)).status, 200);
      const headers = everything.recorded().flatMap((r) => (r.kind === 'http' ? [r.headers] : []));
      assert.ok(headers.length >= 4, `${headers.length} requests`);
      for (const h of headers) {
        assert.equal(h.authorization, undefined, 'no Authorization header: the manifest gives this upstream none');
        assert.ok(![TOKEN, ADMIN].some((t) => JSON.stringify(h).includes(t)));
      }
    });

    it('a second fastsvc (2026-07-28 upstream): its tools are imported; a denied one never reaches it (its audit log)', async () => {
      const r = await (await fetch(`${srv.url}/readyz`)).json() as { upstreams: Record<string, { protocol_version: string }> };
      assert.equal(r.upstreams.inner?.protocol_version, '2026-07-28');
      const hello = await call(srv, 'inner.hello', { who: 'gateway' });
      assert.equal(hello.status, 200);
      assert.deepEqual(hello.body.content, [{ type: 'text', text: 'Hello, gateway!' }]);
      assert.equal((await call(srv, 'inner.wipe', {})).status, 403);
      await until('the audit line of inner.hello', () => (readFileSync(audit, 'utf8').includes('inner.hello') ? true : undefined));
      const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(!lines.some((l) => JSON.stringify(l).includes('inner.wipe')), 'inner.wipe never reached the inner server');
    });
  });
});

/** The one child process of `pid` (the stdio upstream of a svc serve). */
function childOf(pid: number): number {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean).map(Number);
  assert.equal(out.length, 1, `children of ${pid}: ${out.join(' ')}`);
  return out[0]!;
}

