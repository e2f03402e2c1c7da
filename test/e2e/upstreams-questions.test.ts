// Whose call an upstream's question belongs to, with several calls in flight on the upstream, behind the real
// `svc serve`. Over Streamable HTTP (test/helpers/feature-upstream.ts, a 1.x SDK server that asks on its
// request's own SSE stream) the question and the log line before it reach exactly the caller whose call asked —
// a 2025-11-25 client (a server→client request) and a 2026-07-28 client (an input_required round) — while
// another caller's call is in flight, and nothing is refused. Over stdio (server-everything), where the wire
// does not say, a question asked while two calls are in flight is refused upstream, shown to no one, logged
// (upstream.question_refused) and counted on /readyz (questions_refused).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startFeatureUpstream, type FeatureUpstream } from '../helpers/feature-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const TOKEN = secret(randomBytes(24).toString('base64url'));

interface Ready { upstreams: Record<string, { questions_refused: number; in_flight: number }> }

describe('upstreams: an upstream\'s question goes to the call it belongs to, or is refused where that cannot be told', function () {
  this.timeout(60_000);
  let up: FeatureUpstream;
  let srv: Served;
  const ready = async () => (await (await fetch(`${srv.url}/readyz`)).json()) as Ready;

  /** A 2025-11-25 client that answers every elicitation with `answer` and counts the questions and log lines it got. */
  const legacy = async (answer: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: `ask-${answer}`, version: '1' }, { capabilities: { elicitation: {} } });
    const seen = { asked: [] as string[], logs: [] as unknown[] };
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      seen.asked.push(req.params.message);
      return { action: 'accept', content: { answer } };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.logs.push(n.params.data));
    await client.connect(transport);
    return { client, seen, close: async () => { await transport.terminateSession().catch(() => undefined); await client.close(); } };
  };

  before(async () => {
    up = await startFeatureUpstream();
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { token: '${TOKEN}', scopes: ['use'] },
      profile: { scopes: ['use'] },
      routes: { public: ['/healthz', '/readyz'], protected: ['/mcp'] },
      upstreams: [
        { name: 'feat', url: up.url, expose: { prefix: 'f.', required_scopes: ['use'] } },
        { name: 'everything', command: ['node', EVERYTHING, 'stdio'], env: { PATH: '${PATH}' }, expose: { prefix: 'ev.', include: ['trigger-long-running-operation', 'trigger-elicitation-request'], required_scopes: ['use'] } },
      ],
    }, { env: { TOKEN } });
  });

  after(async () => {
    await srv?.stop();
    await up?.close();
  });

  it('HTTP: with another caller\'s call in flight, a 2025 caller gets its own call\'s question and log line, the other caller nothing', async () => {
    const holder = await legacy('holder');
    const asker = await legacy('asker');
    try {
      const held = holder.client.callTool({ name: 'f.hold', arguments: {} });
      await waitFor(() => (up.holding() === 1 ? true : undefined), 'the held call upstream');
      const res = await asker.client.callTool({ name: 'f.ask', arguments: { question: 'which one?' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'answered {"answer":"asker"}' }]);
      assert.deepEqual(asker.seen.asked, ['which one?']);
      await waitFor(() => (asker.seen.logs.includes('asking which one?') ? true : undefined), 'the related log line');
      up.release();
      assert.deepEqual((await held).content, [{ type: 'text', text: 'released' }]);
      assert.deepEqual(holder.seen, { asked: [], logs: [] }, 'the other caller saw nothing of it');
    } finally {
      await holder.close();
      await asker.close();
    }
    assert.equal((await ready()).upstreams.feat!.questions_refused, 0);
  });

  it('HTTP: with another call in flight, a 2026-07-28 caller gets the question as an input_required round, and the call is run again with its answer', async () => {
    const holder = await legacy('holder');
    const modern = new ModernClient({ name: 'ask-modern', version: '1' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
    const asked: string[] = [];
    modern.setRequestHandler('elicitation/create', async (req) => {
      asked.push((req.params as { message: string }).message);
      return { action: 'accept', content: { answer: 'modern' } };
    });
    await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => TOKEN } }));
    try {
      assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
      const held = holder.client.callTool({ name: 'f.hold', arguments: {} });
      await waitFor(() => (up.holding() === 1 ? true : undefined), 'the held call upstream');
      const res = await modern.callTool({ name: 'f.ask', arguments: { question: 'and now?' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'answered {"answer":"modern"}' }]);
      assert.deepEqual(asked, ['and now?']);
      up.release();
      await held;
      assert.deepEqual(holder.seen.asked, []);
    } finally {
      await holder.close();
      await modern.close();
    }
    assert.equal((await ready()).upstreams.feat!.questions_refused, 0);
  });

  it('stdio: a question asked while two calls are in flight is refused upstream, shown to no one, logged and counted', async () => {
    const holder = await legacy('holder');
    const asker = await legacy('asker');
    try {
      const ac = new AbortController();
      const long = holder.client.callTool({ name: 'ev.trigger-long-running-operation', arguments: { duration: 60, steps: 60 } }, undefined, { signal: ac.signal });
      await waitFor(async () => ((await ready()).upstreams.everything!.in_flight === 1 ? true : undefined), 'the long call in flight');
      const res = await asker.client.callTool({ name: 'ev.trigger-elicitation-request', arguments: {} });
      ac.abort();
      await long.catch(() => undefined);
      assert.equal(res.isError, true, JSON.stringify(res));
      assert.deepEqual(asker.seen.asked, []);
      assert.deepEqual(holder.seen.asked, []);
    } finally {
      await holder.close();
      await asker.close();
    }
    assert.equal((await ready()).upstreams.everything!.questions_refused, 1);
    const line = await waitFor(() => srv.logs().find((l) => l.event === 'upstream.question_refused'), 'the upstream.question_refused log line');
    assert.equal(line?.upstream, 'everything');
    assert.equal(line?.method, 'elicitation/create');
    assert.equal(line?.in_flight, 2);
  });
});
