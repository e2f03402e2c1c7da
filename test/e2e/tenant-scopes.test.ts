// Tenant-bound scopes through `svc serve examples/tenant-scoped/svc.yaml`: one case table
// {tool, arguments, caller, expected} run on /svc, /mcp (2025 session) and /ws. Own tenant
// allowed; another tenant 403 naming the concrete scope (and the challenge names it too); a
// bound argument is filled from the token's claim, and a different value — or a token with
// no such claim — is refused with ARGUMENT_BOUND. Lists show a tenant-bound tool to callers
// that hold its scope for at least one tenant (for the claimed tenant when bound).

import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { RawMcp, RawWs } from '../helpers/mcp-app.js';

type Who = 'acme' | 'globex' | 'ops';
const TOKENS: Record<Who, string> = { acme: 'acme-token-1', globex: 'globex-token-1', ops: 'ops-token-1' };
type Outcome = { ok: string } | { denied: string[] } | 'bound';
interface Case { tool: string; args: Record<string, unknown>; as: Who; expect: Outcome }

const CASES: Case[] = [
  { tool: 'orders.count', args: { tenant: 'acme' }, as: 'acme', expect: { ok: 'orders of acme: 3' } },
  { tool: 'orders.count', args: { tenant: 'globex' }, as: 'acme', expect: { denied: ['tenant:globex.read'] } },
  { tool: 'orders.count', args: { tenant: 'acme' }, as: 'globex', expect: { denied: ['tenant:acme.read'] } },
  { tool: 'orders.count', args: { tenant: 'globex' }, as: 'ops', expect: { ok: 'orders of globex: 3' } },
  { tool: 'orders.count', args: { tenant: 'acme.x' }, as: 'acme', expect: { denied: ['tenant:{{tenant}}.read'] } },
  { tool: 'orders.mine', args: {}, as: 'acme', expect: { ok: 'your orders at acme: 3' } },
  { tool: 'orders.mine', args: {}, as: 'globex', expect: { ok: 'your orders at globex: 3' } },
  { tool: 'orders.mine', args: { tenant: 'acme' }, as: 'acme', expect: { ok: 'your orders at acme: 3' } },
  { tool: 'orders.mine', args: { tenant: 'globex' }, as: 'acme', expect: 'bound' },
  { tool: 'orders.mine', args: {}, as: 'ops', expect: 'bound' },
];

const LISTS: Record<Who, string[]> = {
  acme: ['acme.greet', 'orders.count', 'orders.mine'],
  globex: ['globex.greet', 'orders.count', 'orders.mine'],
  ops: ['acme.greet', 'globex.greet', 'orders.count'],
};

type Json = Record<string, any>;

function rpcOutcome(answer: Json, status = 200): Outcome {
  if (answer.error?.data?.code === 'ARGUMENT_BOUND') return 'bound';
  if (status === 403 || answer.error?.data?.code === 'INSUFFICIENT_SCOPE') return { denied: answer.error.data.missing };
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  assert.notEqual(answer.result.isError, true, JSON.stringify(answer.result));
  return { ok: answer.result.content.map((c: Json) => c.text).join('') };
}

interface Driver { name: string; call(c: Case): Promise<{ outcome: Outcome; challenge?: string | null }>; list(who: Who): Promise<string[]>; close(): void }

describe('tenant-bound scopes: one case table on /svc, /mcp and /ws (svc serve)', () => {
  let srv: Served;
  const drivers: Driver[] = [];
  before(async () => {
    srv = await serveManifest({ file: 'examples/tenant-scoped/svc.yaml' }, { args: ['--no-watch'], env: { ACME_TOKEN: TOKENS.acme, GLOBEX_TOKEN: TOKENS.globex, OPS_TOKEN: TOKENS.ops } });
    const url = srv.url;
    const headers = (who: Who) => ({ authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json' });
    drivers.push({
      name: '/svc',
      async call({ tool, args, as }) {
        const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: headers(as), body: JSON.stringify(args) });
        const body = (await res.json()) as Json;
        if (res.status === 403 && body.error.code === 'ARGUMENT_BOUND') return { outcome: 'bound' };
        if (res.status === 403) return { outcome: { denied: body.error.missing }, challenge: res.headers.get('www-authenticate') };
        assert.equal(res.status, 200, JSON.stringify(body));
        return { outcome: { ok: body.result } };
      },
      async list(who) {
        const body = (await (await fetch(`${url}/svc`, { headers: headers(who) })).json()) as Json;
        return body.tools.map((t: Json) => t.name).sort();
      },
      close() {},
    });
    const mcp = new Map<Who, Promise<RawMcp>>();
    const mcpFor = (who: Who) => {
      if (!mcp.has(who)) {
        const m = new RawMcp(url, TOKENS[who]);
        mcp.set(who, m.initialize().then(() => m));
      }
      return mcp.get(who)!;
    };
    drivers.push({
      name: '/mcp',
      async call({ tool, args, as }) {
        const { res, answer } = await (await mcpFor(as)).request('tools/call', { name: tool, arguments: args });
        return { outcome: rpcOutcome(answer as Json, res.status), challenge: res.status === 403 ? res.headers.get('www-authenticate') : undefined };
      },
      async list(who) {
        const { answer } = await (await mcpFor(who)).request('tools/list');
        return (answer as Json).result.tools.map((t: Json) => t.name).sort();
      },
      close() {},
    });
    const ws = new Map<Who, Promise<RawWs>>();
    const wsFor = (who: Who) => {
      if (!ws.has(who)) {
        const w = RawWs.open(url, TOKENS[who]);
        ws.set(who, w.initialize().then(() => w));
      }
      return ws.get(who)!;
    };
    drivers.push({
      name: '/ws',
      async call({ tool, args, as }) {
        return { outcome: rpcOutcome(await (await wsFor(as)).call('tools/call', { name: tool, arguments: args })) };
      },
      async list(who) {
        return ((await (await wsFor(who)).call('tools/list')) as Json).result.tools.map((t: Json) => t.name).sort();
      },
      close() {
        for (const w of ws.values()) void w.then((s) => s.socket.close());
      },
    });
  });
  after(async () => {
    for (const d of drivers) d.close();
    await srv?.stop();
  });

  for (const c of CASES) {
    it(`${c.tool} ${JSON.stringify(c.args)} as ${c.as} → ${typeof c.expect === 'string' ? c.expect : Object.keys(c.expect)[0]}`, async () => {
      for (const d of drivers) {
        const { outcome, challenge } = await d.call(c);
        assert.deepEqual(outcome, c.expect, d.name);
        if (typeof c.expect === 'object' && 'denied' in c.expect && challenge !== undefined) {
          assert.match(challenge ?? '', new RegExp(`error="insufficient_scope".*scope="${c.expect.denied.join(' ').replace(/[{}.]/g, '\\$&')}"`), `${d.name} challenge`);
        }
      }
    });
  }

  for (const who of Object.keys(LISTS) as Who[]) {
    it(`lists for ${who}: ${LISTS[who].join(', ')}`, async () => {
      for (const d of drivers) assert.deepEqual(await d.list(who), LISTS[who], d.name);
    });
  }

  it('every denial is logged as access.denied with its reason, never with a token', () => {
    const denied = srv.logs().filter((l) => l.event === 'access.denied');
    assert.ok(denied.some((l) => l.reason === 'bound_argument' && l.name === 'orders.mine'));
    assert.ok(denied.some((l) => l.reason === 'missing_scope' && (l.missing as string[]).includes('tenant:globex.read')));
    for (const t of Object.values(TOKENS)) assert.ok(!srv.stderr().includes(t));
  });
});
