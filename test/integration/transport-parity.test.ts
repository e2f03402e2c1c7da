// One table of {capability, scopes held, expected outcome}, run against /svc, /mcp and /ws alike:
// every transport must reach the same decision (allowed with the same value, denied with the same
// missing scopes, not found, invalid input, backend failure) for the same caller.

import assert from 'node:assert/strict';
import { RawMcp, RawWs, startMcpApp, type McpApp } from '../helpers/mcp-app.js';

type Who = 'operator' | 'reader' | 'nobody';
type Capability = { kind: 'tool' | 'prompt'; name: string; args?: Record<string, unknown> } | { kind: 'resource'; uri: string };
type Outcome = { ok: string } | { denied: string[] } | 'not_found' | 'invalid' | 'backend_failed';
interface Case { cap: Capability; as: Who; expect: Outcome }

const tool = (name: string, args: Record<string, unknown> = {}): Capability => ({ kind: 'tool', name, args });
const prompt = (name: string, args: Record<string, unknown> = {}): Capability => ({ kind: 'prompt', name, args });
const resource = (uri: string): Capability => ({ kind: 'resource', uri });

// Scopes held: operator = notes.read notes.write notes.admin, reader = notes.read, nobody = none.
const CASES: Case[] = [
  { cap: tool('echo', { text: 'hi' }), as: 'nobody', expect: { ok: 'hi' } },
  { cap: tool('notes.read'), as: 'reader', expect: { ok: 'all notes' } },
  { cap: tool('notes.read'), as: 'nobody', expect: { denied: ['notes.read'] } },
  { cap: tool('notes.write'), as: 'reader', expect: { denied: ['notes.write'] } },
  { cap: tool('notes.write'), as: 'nobody', expect: { denied: ['notes.read', 'notes.write'] } },
  { cap: tool('notes.write'), as: 'operator', expect: { ok: 'written' } },
  { cap: tool('no.such.tool'), as: 'operator', expect: 'not_found' },
  { cap: tool('echo', { text: 42 }), as: 'reader', expect: 'invalid' },
  { cap: tool('fail'), as: 'operator', expect: 'backend_failed' },
  { cap: resource('notes://readme'), as: 'nobody', expect: { ok: 'read me' } },
  { cap: resource('notes://secret'), as: 'reader', expect: { denied: ['notes.admin'] } },
  { cap: resource('notes://secret'), as: 'operator', expect: { ok: 'the secret' } },
  { cap: resource('notes://missing'), as: 'operator', expect: 'not_found' },
  { cap: prompt('summarize', { topic: 'cats' }), as: 'nobody', expect: { ok: 'Summarize cats' } },
  { cap: prompt('summarize'), as: 'reader', expect: 'invalid' },
  { cap: prompt('audit'), as: 'reader', expect: { denied: ['notes.admin'] } },
  { cap: prompt('audit'), as: 'operator', expect: { ok: 'audit' } },
];

type Json = Record<string, any>;

/** The outcome an MCP answer (JSON-RPC response) stands for; `status` is the HTTP status on /mcp. */
function mcpOutcome(cap: Capability, answer: Json, status = 200): Outcome {
  if (status === 403 || answer.error?.code === -32003) return { denied: answer.error.data.missing };
  if (answer.error) {
    const code = answer.error.data?.code;
    return code === 'NOT_FOUND' ? 'not_found' : code === 'INVALID_INPUT' ? 'invalid' : assert.fail(`unexpected error ${JSON.stringify(answer.error)}`);
  }
  const r = answer.result;
  if (cap.kind === 'tool') {
    const text = r.content.map((c: Json) => c.text).join('');
    if (r.isError) return text.startsWith('INVALID_INPUT') ? 'invalid' : text.startsWith('BACKEND_FAILED') ? 'backend_failed' : assert.fail(text);
    return { ok: text };
  }
  return { ok: cap.kind === 'resource' ? r.contents[0].text : r.messages[0].content.text };
}

function mcpRequest(cap: Capability): [string, Json] {
  if (cap.kind === 'resource') return ['resources/read', { uri: cap.uri }];
  return [cap.kind === 'tool' ? 'tools/call' : 'prompts/get', { name: cap.name, arguments: cap.args }];
}

interface Driver { name: string; run(c: Case): Promise<Outcome>; close?(): void }

function svcDriver(app: McpApp): Driver {
  return {
    name: '/svc',
    async run({ cap, as }) {
      const headers = { authorization: `Bearer ${app.tokens[as]}`, 'content-type': 'application/json' };
      const res = cap.kind === 'resource'
        ? await fetch(`${app.url}/svc/resources?uri=${encodeURIComponent(cap.uri)}`, { headers })
        : await fetch(`${app.url}/svc/${cap.kind}s/${encodeURIComponent(cap.name)}`, { method: 'POST', headers, body: JSON.stringify(cap.args ?? {}) });
      const body = (await res.json()) as Json;
      if (res.status === 403) return { denied: body.error.missing };
      if (res.status === 404) return 'not_found';
      if (res.status === 400 && body.error.code === 'INVALID_INPUT') return 'invalid';
      if (res.status === 502) return 'backend_failed';
      assert.equal(res.status, 200, JSON.stringify(body));
      if (cap.kind === 'tool') return { ok: body.result };
      return { ok: cap.kind === 'resource' ? body.contents[0].text : body.messages[0].content.text };
    },
  };
}

function mcpDriver(app: McpApp): Driver {
  const clients = new Map<Who, Promise<RawMcp>>();
  const client = (who: Who) => {
    let c = clients.get(who);
    if (!c) {
      const m = new RawMcp(app.url, app.tokens[who]);
      clients.set(who, (c = m.initialize().then(() => m)));
    }
    return c;
  };
  return {
    name: '/mcp',
    async run({ cap, as }) {
      const [method, params] = mcpRequest(cap);
      const { res, answer } = await (await client(as)).request(method, params);
      return mcpOutcome(cap, answer as Json, res.status);
    },
  };
}

function wsDriver(app: McpApp): Driver {
  const sockets = new Map<Who, Promise<RawWs>>();
  const socket = (who: Who) => {
    let s = sockets.get(who);
    if (!s) {
      const w = RawWs.open(app.url, app.tokens[who]);
      sockets.set(who, (s = w.initialize().then(() => w)));
    }
    return s;
  };
  return {
    name: '/ws',
    async run({ cap, as }) {
      const [method, params] = mcpRequest(cap);
      return mcpOutcome(cap, await (await socket(as)).call(method, params));
    },
    close() {
      for (const s of sockets.values()) void s.then((w) => w.socket.close());
    },
  };
}

describe('transport parity: one capability table on /svc, /mcp and /ws', () => {
  let app: McpApp;
  const drivers: Driver[] = [];
  before(async () => {
    app = await startMcpApp();
    drivers.push(svcDriver(app), mcpDriver(app), wsDriver(app));
  });
  after(async () => {
    for (const d of drivers) d.close?.();
    await app.close();
  });

  for (const c of CASES) {
    const what = c.cap.kind === 'resource' ? c.cap.uri : c.cap.name;
    it(`${c.cap.kind} ${what} as ${c.as} → ${typeof c.expect === 'string' ? c.expect : Object.keys(c.expect)[0]}`, async () => {
      for (const d of drivers) assert.deepEqual(await d.run(c), c.expect, d.name);
    });
  }
});
