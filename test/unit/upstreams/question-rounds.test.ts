// question-rounds.ts on the real SDK v2 client, on 2026-07-28 with a scripted peer (in-memory transport): a tool
// that asks in input_required rounds, reusing the same key in every round. Each round's question is asked
// of the call's own channel, keyed by round, and the request is sent again with the answer and the upstream's
// requestState as it came; the upstream sees only the capabilities the caller has; roots/list is relayed to a
// caller that declares roots, and answered with no roots for one that does not; a question the caller cannot
// answer fails the call with MISSING_CLIENT_CAPABILITY; a question of a kind fastsvc does not relay, and a round
// past maxRounds, fail the call (BACKEND_FAILED).

import assert from 'node:assert/strict';
import { Client, CLIENT_CAPABILITIES_META_KEY, InMemoryTransport, SERVER_INFO_META_KEY } from '@modelcontextprotocol/client';
import type { CallContext } from '../../../src/core/types.js';
import { SvcError } from '../../../src/errors.js';
import { requestWithQuestions } from '../../../src/upstreams/question-rounds.js';

interface Seen { rounds: { responses?: Record<string, unknown>; state?: string; caps: unknown }[] }

/**
 * The real v2 client, connected on 2026-07-28 to a scripted peer on an in-memory transport (the SDK v2 server does
 * not answer server/discover there) whose tool asks `rounds` questions, each under the key `q`, before it answers
 * (a roots question when `kind` says so); `seen` records what each tools/call carried.
 */
async function pair(rounds: number, kind: 'elicit' | 'roots' | 'other' = 'elicit') {
  const seen: Seen = { rounds: [] };
  const [a, b] = InMemoryTransport.createLinkedPair();
  const answer = (id: unknown, result: Record<string, unknown>) => void b.send({ jsonrpc: '2.0', id: id as number, result: { resultType: 'complete', ...result, _meta: { [SERVER_INFO_META_KEY]: { name: 'asker', version: '1' } } } });
  b.onmessage = (m) => {
    const msg = m as { id?: unknown; method?: string; params?: Record<string, unknown> };
    if (msg.id === undefined) return;
    if (msg.method === 'server/discover') return answer(msg.id, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } });
    const p = msg.params ?? {};
    seen.rounds.push({ responses: p.inputResponses as Record<string, unknown> | undefined, state: p.requestState as string | undefined, caps: (p._meta as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY] });
    const n = seen.rounds.length;
    if (n > rounds) return answer(msg.id, { content: [{ type: 'text', text: `done after ${JSON.stringify(p.inputResponses)}` }] });
    const q = kind === 'roots' ? { method: 'roots/list' } : kind === 'other' ? { method: 'tasks/list' } : { method: 'elicitation/create', params: { message: `question ${n}`, requestedSchema: { type: 'object', properties: { a: { type: 'string' } } } } };
    void b.send({ jsonrpc: '2.0', id: msg.id as number, result: { resultType: 'input_required', inputRequests: { q }, requestState: `state-${n}` } });
  };
  await b.start();
  const client = new Client({ name: 'fastsvc', version: '1' }, { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } });
  await client.connect(a);
  return { client, seen, close: () => client.close() };
}

/** A call context whose channel answers every question with its key, and supports `supported`. */
function context(supported: string[]) {
  const asked: { method: string; key?: string }[] = [];
  const ctx = {
    channel: {
      supports: (m: string) => supported.includes(m),
      request: async (method: string, _params: unknown, opts?: { key?: string }) => {
        asked.push({ method, key: opts?.key });
        return { action: 'accept', content: { a: opts?.key } };
      },
      progress: async () => undefined,
      log: async () => undefined,
    },
  } as unknown as CallContext;
  return { ctx, asked };
}

describe('upstreams: question-rounds (a 2026-07-28 upstream\'s input_required rounds)', () => {
  it('asks each round of the call\'s channel, keyed by round, and echoes the requestState; the upstream sees the caller\'s capabilities', async () => {
    const { client, seen, close } = await pair(2);
    const { ctx, asked } = context(['elicitation/create']);
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const out = await requestWithQuestions<{ content: { text: string }[] }>(client, ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 5 });
      assert.deepEqual(asked, [{ method: 'elicitation/create', key: '1.q' }, { method: 'elicitation/create', key: '2.q' }]);
      assert.equal(out.content[0]!.text, 'done after {"q":{"action":"accept","content":{"a":"2.q"}}}');
      assert.deepEqual(seen.rounds.map((r) => r.state), [undefined, 'state-1', 'state-2']);
      assert.deepEqual(seen.rounds[1]!.responses, { q: { action: 'accept', content: { a: '1.q' } } });
      for (const r of seen.rounds) assert.deepEqual(r.caps, { elicitation: {} }, 'no sampling: the caller has none');
    } finally {
      await close();
    }
  });

  it('fails past maxRounds, and on a question it does not relay, with BACKEND_FAILED', async () => {
    const many = await pair(10);
    try {
      await assert.rejects(requestWithQuestions(many.client, context(['elicitation/create']).ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 3 }),
        (e: unknown) => e instanceof SvcError && e.code === 'BACKEND_FAILED' && (e.data as { reason: string }).reason === 'too_many_rounds');
      assert.equal(many.seen.rounds.length, 4, 'the first request and three rounds');
    } finally {
      await many.close();
    }
    const other = await pair(1, 'other');
    const { ctx, asked } = context(['elicitation/create']);
    try {
      await assert.rejects(requestWithQuestions(other.client, ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 3 }),
        (e: unknown) => e instanceof SvcError && e.code === 'BACKEND_FAILED' && /tasks\/list/.test(e.message));
      assert.deepEqual(asked, [], 'the caller was asked nothing');
    } finally {
      await other.close();
    }
  });

  it('roots/list: asked of a caller that declares roots; a caller without roots is answered no roots, and asked nothing', async () => {
    const withRoots = await pair(1, 'roots');
    const a = context(['roots/list']);
    try {
      await requestWithQuestions(withRoots.client, a.ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 3 });
      assert.deepEqual(a.asked, [{ method: 'roots/list', key: '1.q' }]);
      assert.deepEqual(withRoots.seen.rounds[0]!.caps, { roots: {} });
    } finally {
      await withRoots.close();
    }
    const without = await pair(1, 'roots');
    const b = context([]);
    try {
      await requestWithQuestions(without.client, b.ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 3 });
      assert.deepEqual(b.asked, []);
      assert.deepEqual(without.seen.rounds[1]!.responses, { q: { roots: [] } });
    } finally {
      await without.close();
    }
  });

  it('a question its caller cannot answer fails the call with MISSING_CLIENT_CAPABILITY, naming the capability', async () => {
    const p = await pair(1);
    const { ctx, asked } = context([]);
    try {
      await assert.rejects(requestWithQuestions(p.client, ctx, 'tools/call', { name: 'ask', arguments: {} }, { upstream: 'up', maxRounds: 3 }),
        (e: unknown) => e instanceof SvcError && e.code === 'MISSING_CLIENT_CAPABILITY' && JSON.stringify(e.data) === JSON.stringify({ requiredCapabilities: { elicitation: {} }, upstream: 'up' }));
      assert.deepEqual(asked, []);
    } finally {
      await p.close();
    }
  });
});
