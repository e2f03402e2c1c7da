// A 2026-07-28 upstream's questions (input_required rounds) go to the call that got them, however many calls are
// in flight, behind the real `svc serve`: the upstream is a second fastsvc ("inner") importing
// test/helpers/feature-upstream.ts, whose `ask` and `sample` tools ask their caller; inner turns those into
// input_required rounds for the gateway, and the gateway asks its own caller within that caller's call — a
// 2025-11-25 client gets a server→client request, a 2026-07-28 client an input_required round of its own — and
// sends the answers back to inner with its requestState. With another caller's call held in flight on the same
// upstream, two 2025 callers asking at once each get their own question and their own answer back; a 2026
// caller's round is answered and its result carries its answer; a sampling question reaches a 2025 caller that
// declared sampling. Nothing is refused (questions_refused stays 0).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const GW_TOKEN = secret(randomBytes(24).toString('base64url'));
const UP_TOKEN = secret(randomBytes(24).toString('base64url'));

interface Ready { upstreams: Record<string, { protocol_version: string; questions_refused: number; in_flight: number }> }

describe('upstreams: a 2026-07-28 upstream\'s questions are asked of the caller whose call got them', function () {
  this.timeout(90_000);
  let feat: FeatureUpstream;
  let inner: Served;
  let gw: Served;
  const ready = async () => (await (await fetch(`${gw.url}/readyz`)).json()) as Ready;

  /** A 2025-11-25 client on the gateway that answers every elicitation with `answer` and every sampling request with `answer` as text. */
  const legacy = async (answer: string, capabilities: Record<string, object> = { elicitation: {} }) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${GW_TOKEN}` } } });
    const client = new Client({ name: `ask-${answer}`, version: '1' }, { capabilities });
    const asked: string[] = [];
    if ('elicitation' in capabilities) {
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: { answer } };
      });
    }
    if ('sampling' in capabilities) {
      client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        asked.push(JSON.stringify(req.params.messages));
        return { role: 'assistant', content: { type: 'text', text: answer }, model: 'test-model', stopReason: 'endTurn' };
      });
    }
    await client.connect(transport);
    return { client, asked, close: async () => { await transport.terminateSession().catch(() => undefined); await client.close(); } };
  };

  /** A call held at the feature server through both gateways, until release(). */
  const hold = async () => {
    const holder = await legacy('holder');
    const held = holder.client.callTool({ name: 'in.f.hold', arguments: {} });
    await waitFor(() => (feat.holding() === 1 ? true : undefined), 'the held call at the feature server');
    return {
      holder,
      async release() {
        feat.release();
        assert.deepEqual((await held).content, [{ type: 'text', text: 'released' }]);
        assert.deepEqual(holder.asked, [], 'the holder was asked nothing');
        await holder.close();
      },
    };
  };

  before(async () => {
    feat = await startFeatureUpstream();
    inner = await serveManifest({
      version: 1,
      name: 'inner',
      auth: { token: '${UP_TOKEN}' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/mcp'] },
      upstreams: [{ name: 'feat', url: feat.url, poll_ms: 0, expose: { prefix: 'f.', include: ['ask', 'sample', 'hold'] } }],
    }, { env: { UP_TOKEN } });
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${GW_TOKEN}' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
      upstreams: [{ name: 'inner', url: `${inner.url}/mcp`, headers: { authorization: 'Bearer ${UP_TOKEN}' }, expose: { prefix: 'in.' } }],
    }, { env: { GW_TOKEN, UP_TOKEN } });
  });

  after(async () => {
    await gw?.stop();
    await inner?.stop();
    await feat?.close();
  });

  it('two 2025 callers asking at once, with a third call in flight: each gets its own question, and its own answer back', async () => {
    assert.equal((await ready()).upstreams.inner!.protocol_version, '2026-07-28');
    const held = await hold();
    const ann = await legacy('ann');
    const ben = await legacy('ben');
    try {
      const [a, b] = await Promise.all([
        ann.client.callTool({ name: 'in.f.ask', arguments: { question: 'ann, which one?' } }),
        ben.client.callTool({ name: 'in.f.ask', arguments: { question: 'ben, which one?' } }),
      ]);
      assert.deepEqual(a.content, [{ type: 'text', text: 'answered {"answer":"ann"}' }]);
      assert.deepEqual(b.content, [{ type: 'text', text: 'answered {"answer":"ben"}' }]);
      assert.deepEqual(ann.asked, ['ann, which one?']);
      assert.deepEqual(ben.asked, ['ben, which one?']);
      assert.equal((await ready()).upstreams.inner!.in_flight, 1, 'the held call is still in flight');
      await held.release();
    } finally {
      await ann.close();
      await ben.close();
    }
    assert.equal((await ready()).upstreams.inner!.questions_refused, 0);
  });

  it('a 2026 caller, with another call in flight, answers an input_required round of its own and gets its answer back', async () => {
    const held = await hold();
    const modern = new ModernClient({ name: 'ask-modern', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
    const asked: string[] = [];
    modern.setRequestHandler('elicitation/create', async (req) => {
      asked.push((req.params as { message: string }).message);
      return { action: 'accept', content: { answer: 'modern' } };
    });
    await modern.connect(new ModernTransport(new URL(`${gw.url}/mcp`), { authProvider: { token: async () => GW_TOKEN } }));
    try {
      assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
      const res = await modern.callTool({ name: 'in.f.ask', arguments: { question: 'and now?' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'answered {"answer":"modern"}' }]);
      assert.deepEqual(asked, ['and now?']);
      await held.release();
    } finally {
      await modern.close();
    }
    assert.equal((await ready()).upstreams.inner!.questions_refused, 0);
  });

  it('a sampling question reaches a 2025 caller that declared sampling, with another call in flight', async () => {
    const held = await hold();
    const sampler = await legacy('sampled hello', { sampling: {} });
    try {
      const res = await sampler.client.callTool({ name: 'in.f.sample', arguments: {} });
      assert.deepEqual(res.content, [{ type: 'text', text: 'sampled {"type":"text","text":"sampled hello"}' }]);
      assert.equal(sampler.asked.length, 1);
      assert.match(sampler.asked[0]!, /Say hello\./);
      await held.release();
    } finally {
      await sampler.close();
    }
    assert.equal((await ready()).upstreams.inner!.questions_refused, 0);
  });
});
