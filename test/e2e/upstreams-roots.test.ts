// An upstream's roots/list, and what fastsvc declares to an upstream, behind the real `svc serve`. The upstream
// is test/helpers/feature-upstream.ts (a 1.x SDK server: its `roots` tool asks roots/list on its request's own
// stream, and it asks roots/list once more right after initialize, outside any call), reached by the gateway
// directly (2025-11-25) and through a second fastsvc ("inner", which the gateway speaks 2026-07-28 to, so
// inner's question reaches the gateway as an input_required round). Asserted:
// - fastsvc declares at initialize exactly what it relays: elicitation, sampling and roots (no listChanged);
// - a caller that declares roots gets the upstream's roots/list — a 2025-11-25 client as a request, a
//   2026-07-28 client as an input_required round — over both upstream revisions, and its roots are the answer;
// - a caller without roots, and a roots/list outside any call, are answered with an empty list;
// - /svc, whose callers cannot answer, is not offered a tool marked `asks` (not listed, no /svc curl on /docs; its
//   call is NOT_FOUND and never reaches the upstream), which /mcp callers that can answer still call; an unmarked tool whose
//   question a /svc caller cannot answer fails with MISSING_CLIENT_CAPABILITY naming what it asked.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { legacyClient, modernClient, svcCall } from '../helpers/gateway-front.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const GW_TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));
const ROOTS = [{ uri: 'file:///home/ada/project', name: 'project' }];
const text = (r: unknown) => JSON.stringify((r as { content?: unknown }).content);

describe('upstreams: roots/list from an upstream reaches a caller that declared roots; what fastsvc declares upstream it relays', function () {
  this.timeout(90_000);
  let feat: FeatureUpstream;
  let inner: Served;
  let gw: Served;

  before(async () => {
    feat = await startFeatureUpstream({ roots: true });
    inner = await serveManifest({
      version: 1,
      name: 'inner',
      auth: { token: '${UP_TOKEN}' },
      routes: { public: ['/readyz'], protected: ['/mcp'] },
      upstreams: [{ name: 'feat', url: feat.url, poll_ms: 0, expose: { prefix: 'f.', include: ['roots'] } }],
    }, { env: { UP_TOKEN } });
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${GW_TOKEN}' },
      routes: { public: ['/readyz', '/docs'], protected: ['/svc', '/mcp'] },
      upstreams: [
        { name: 'feat', url: feat.url, poll_ms: 0, expose: { prefix: 'f.', include: ['roots', 'ask', 'sample'], overrides: { sample: { asks: ['sampling'] } } } },
        { name: 'inner', url: `${inner.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, expose: { prefix: 'in.' } },
      ],
    }, { env: { GW_TOKEN, UP_TOKEN } });
  });
  after(async () => {
    await gw?.stop();
    await inner?.stop();
    await feat?.close();
  });

  it('declares elicitation, sampling and roots at initialize (no listChanged); a roots/list outside any call is answered with no roots', async () => {
    await waitFor(() => (feat.declared.length >= 2 ? true : undefined), 'both fastsvc sessions initialized');
    for (const caps of feat.declared) {
      assert.deepEqual(Object.keys(caps ?? {}).sort(), ['elicitation', 'roots', 'sampling']);
      assert.deepEqual(caps!.roots, {}, 'roots without listChanged');
      assert.ok(!('url' in (caps!.elicitation ?? {})), 'form elicitation only');
      assert.deepEqual(caps!.sampling, {}, 'plain sampling (no tools, no context)');
    }
    // Asked on each session's own stream, once it is open.
    const answers = await waitFor(async () => {
      const all = await feat.rootsOutsideCall();
      return all.length >= 2 && all.every((a) => !(a as { error?: string }).error) ? all : undefined;
    }, 'roots/list answered outside any call on both sessions');
    for (const answer of answers) assert.deepEqual(answer, { roots: [] });
  });

  for (const via of ['f.roots', 'in.f.roots']) {
    it(`${via}: a 2025-11-25 caller that declares roots is asked, and its roots are the answer`, async () => {
      const front = await legacyClient(gw.url, GW_TOKEN, { capabilities: { roots: {} } });
      let asked = 0;
      front.client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked++;
        return { roots: ROOTS };
      });
      try {
        const res = await front.client.callTool({ name: via, arguments: {} });
        assert.equal(res.isError, undefined, JSON.stringify(res));
        assert.equal(text(res), JSON.stringify([{ type: 'text', text: `roots ${JSON.stringify(ROOTS)}` }]));
        assert.equal(asked, 1);
      } finally {
        await front.close();
      }
    });

    it(`${via}: a 2026-07-28 caller that declares roots is asked in an input_required round`, async () => {
      const client = await modernClient(gw.url, GW_TOKEN, { capabilities: { roots: {} } });
      let asked = 0;
      client.setRequestHandler('roots/list', async () => {
        asked++;
        return { roots: ROOTS } as never;
      });
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const res = await client.callTool({ name: via, arguments: {} });
        assert.equal(text(res), JSON.stringify([{ type: 'text', text: `roots ${JSON.stringify(ROOTS)}` }]));
        assert.ok(asked >= 1);
      } finally {
        await client.close();
      }
    });

    it(`${via}: a caller without roots is answered no roots`, async () => {
      const front = await legacyClient(gw.url, GW_TOKEN);
      try {
        const res = await front.client.callTool({ name: via, arguments: {} });
        assert.equal(text(res), JSON.stringify([{ type: 'text', text: 'roots []' }]));
      } finally {
        await front.close();
      }
    });
  }

  it('/svc is not offered a tool marked `asks`: not listed, its call NOT_FOUND without reaching the upstream; /mcp callers that can answer still call it', async () => {
    const listing = (await (await fetch(`${gw.url}/svc`, { headers: { authorization: `Bearer ${GW_TOKEN}` } })).json()) as { tools: { name: string }[] };
    const names = listing.tools.map((t) => t.name);
    assert.ok(names.includes('f.ask') && !names.includes('f.sample'), names.join(' '));
    const docs = await (await fetch(`${gw.url}/docs`)).text();
    const section = (name: string) => docs.slice(docs.indexOf(`<section class="tool" id="tool-${name}">`), docs.indexOf('</section>', docs.indexOf(`<section class="tool" id="tool-${name}">`)));
    assert.match(section('f.sample'), /asks its caller for sampling: MCP clients that can answer only \(not on \/svc\)/);
    assert.ok(!section('f.sample').includes('/svc/tools/f.sample'), '/docs shows no /svc curl for it');
    assert.ok(section('f.ask').includes('/svc/tools/f.ask'), 'an unmarked tool keeps its curl');
    const calls = feat.calls.length;
    const res = await svcCall(gw.url, GW_TOKEN, 'f.sample', {});
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(feat.calls.length, calls, 'the upstream was not called');
    const front = await legacyClient(gw.url, GW_TOKEN, { capabilities: { sampling: {} } });
    try {
      assert.ok((await front.client.listTools()).tools.some((t) => t.name === 'f.sample'));
    } finally {
      await front.close();
    }
  });

  it('an unmarked tool whose question a /svc caller cannot answer fails with MISSING_CLIENT_CAPABILITY, naming it', async () => {
    const res = await svcCall(gw.url, GW_TOKEN, 'f.ask', { question: 'why?' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    const err = res.body.error as { code: string; requiredCapabilities?: unknown };
    assert.equal(err.code, 'MISSING_CLIENT_CAPABILITY');
    assert.deepEqual(err.requiredCapabilities, { elicitation: {} });
    assert.equal(feat.calls.filter((c) => c.name === 'ask').length, 1, 'the upstream was called once (it asked, and was refused)');
    // An MCP caller that can answer is asked, as before.
    const front = await legacyClient(gw.url, GW_TOKEN, { capabilities: { elicitation: {} } });
    front.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'because' } }));
    try {
      const ok = await front.client.callTool({ name: 'f.ask', arguments: { question: 'why?' } });
      assert.match(text(ok), /because/);
    } finally {
      await front.close();
    }
  });
});
