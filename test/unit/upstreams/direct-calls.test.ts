// upstreams/direct-calls.ts and tool-result.ts without sockets: the official client 2.x connected to a
// real SDK 1.x server (its low-level Server) over the SDK's in-memory pair, DirectCalls beside the client on
// the same transport. What is asserted: an answer to a direct request is taken by it and never reaches the
// client (whose own requests keep working, with no error reported); progress for it is heard; an abort
// sends notifications/cancelled that the server sees, and its late answer is dropped; a JSON-RPC error is
// the client's ProtocolError; an answer over maxBytes is the too-large error; a non-object result is refused; the transport's close ends pending and later
// requests with ConnectionClosed; toolResult() passes a well-formed answer, fills absent content, refuses
// malformed ones. (The one wire edit: the server's answer to `not-an-object` is made a number on its way out.)

import assert from 'node:assert/strict';
import { Client, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LazyAbort } from '../../../src/core/lazy-abort.js';
import { DirectCalls, type ProgressParams } from '../../../src/upstreams/direct-calls.js';
import { TOO_LARGE_RPC } from '../../../src/upstreams/wire/stdio-transport.js';
import { toolResult } from '../../../src/upstreams/tool-result.js';

interface Peer {
  client: Client;
  direct: DirectCalls;
  clientErrors: Error[];
  /** Requests the server saw cancelled (their ids). */
  cancelled: unknown[];
  /** Lets the `slow` tool answer (late, after a cancel). */
  release(): void;
  close(): Promise<void>;
}

const MANGLE = 'mangle-this-answer';

async function connect(): Promise<Peer> {
  const server = new Server({ name: 'direct-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  const cancelled: unknown[] = [];
  let release = () => {};
  const released = new Promise<void>((r) => (release = r));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
    const text = String(params.arguments?.text ?? '');
    switch (params.name) {
      case 'echo':
        return { content: [{ type: 'text', text }] };
      case 'progress':
        for (const progress of [1, 2]) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: params._meta!.progressToken!, progress, total: 2, message: `step ${progress}` } });
        return { content: [{ type: 'text', text: 'done' }] };
      case 'slow':
        extra.signal.addEventListener('abort', () => cancelled.push(extra.requestId));
        await released;
        return { content: [{ type: 'text', text: 'late' }] };
      case 'not-an-object':
        return { content: [{ type: 'text', text: MANGLE }] }; // the wire answer's result becomes 5 (below)
      default:
        throw new McpError(-32602, `no tool ${params.name}`, { tool: params.name });
    }
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // The SDK server refuses to send a malformed result: a server that does not check its own is played on the wire.
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (m, o) => send(JSON.stringify(m).includes(MANGLE) ? { ...m, result: 5 } as never : m, o);
  await server.connect(serverSide);
  const client = new Client({ name: 'fastsvc-test', version: '1' }, { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 1000 } } });
  const clientErrors: Error[] = [];
  client.onerror = (e) => clientErrors.push(e);
  await client.connect(clientSide as never);
  assert.equal(client.getProtocolEra(), 'legacy');
  const direct = new DirectCalls(clientSide as never, MAX_BYTES);
  return { client, direct, clientErrors, cancelled, release, close: () => client.close() };
}

const MAX_BYTES = 4096;
const never = () => new LazyAbort();

describe('upstreams/direct-calls: fastsvc\'s own requests beside the client', () => {
  let peer: Peer;
  beforeEach(async () => (peer = await connect()));
  afterEach(async () => {
    peer.release();
    await peer.close();
  });

  it('answers a direct tools/call; the client\'s own requests still work and it hears of no unknown answer', async () => {
    const [a, b] = await Promise.all([
      peer.direct.request('tools/call', { name: 'echo', arguments: { text: 'one' } }, never()),
      peer.direct.request('tools/call', { name: 'echo', arguments: { text: 'two' } }, never()),
    ]);
    assert.deepEqual([a, b], [{ content: [{ type: 'text', text: 'one' }] }, { content: [{ type: 'text', text: 'two' }] }]);
    assert.deepEqual((await peer.client.listTools()).tools.map((t) => t.name), ['echo']);
    const viaClient = await peer.client.callTool({ name: 'echo', arguments: { text: 'three' } });
    assert.deepEqual(viaClient.content, [{ type: 'text', text: 'three' }]);
    assert.deepEqual(peer.clientErrors, []);
  });

  it('hears the progress of its request, which the client never sees', async () => {
    const heard: ProgressParams[] = [];
    const out = await peer.direct.request('tools/call', { name: 'progress', arguments: {} }, never(), undefined, (p) => heard.push(p));
    assert.deepEqual(out, { content: [{ type: 'text', text: 'done' }] });
    assert.deepEqual(heard, [{ progress: 1, total: 2, message: 'step 1' }, { progress: 2, total: 2, message: 'step 2' }]);
    assert.deepEqual(peer.clientErrors, []);
  });

  it('an abort rejects with its reason and cancels upstream; the late answer reaches nobody', async () => {
    const ac = new LazyAbort();
    const call = peer.direct.request('tools/call', { name: 'slow', arguments: {} }, ac);
    await new Promise((r) => setTimeout(r, 20));
    const reason = new Error('the caller went away');
    ac.abort(reason);
    await assert.rejects(call, (e) => e === reason);
    for (let i = 0; i < 50 && peer.cancelled.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(peer.cancelled.length, 1);
    assert.match(String(peer.cancelled[0]), /^fastsvc-\d+$/);
    peer.release(); // the server answers anyway
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(peer.clientErrors, []);
  });

  it('a JSON-RPC error is the client\'s ProtocolError, with its code and data', async () => {
    const e = await peer.direct.request('tools/call', { name: 'missing', arguments: {} }, never()).catch((x: unknown) => x);
    assert.ok(e instanceof ProtocolError);
    assert.equal(e.code, -32602);
    assert.match(e.message, /no tool missing/);
  });

  it('an answer larger than maxBytes (as JSON, where the transport does not tell its size) is the too-large error', async () => {
    const ok = await peer.direct.request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(MAX_BYTES - 200) } }, never());
    assert.equal((ok.content as { text: string }[])[0]!.text.length, MAX_BYTES - 200);
    const e = await peer.direct.request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(MAX_BYTES) } }, never()).catch((x: unknown) => x);
    assert.ok(e instanceof ProtocolError);
    assert.equal(e.code, TOO_LARGE_RPC);
  });

  it('a result that is not a JSON object is refused (InvalidResult)', async () => {
    const e = await peer.direct.request('tools/call', { name: 'not-an-object', arguments: {} }, never()).catch((x: unknown) => x);
    assert.ok(e instanceof SdkError);
    assert.equal(e.code, SdkErrorCode.InvalidResult);
  });

  it('the transport\'s close ends a pending request and refuses later ones (ConnectionClosed)', async () => {
    const pending = peer.direct.request('tools/call', { name: 'slow', arguments: {} }, never());
    await new Promise((r) => setTimeout(r, 20));
    await peer.client.close();
    const closed = (e: unknown) => e instanceof SdkError && e.code === SdkErrorCode.ConnectionClosed;
    await assert.rejects(pending, closed);
    await assert.rejects(peer.direct.request('tools/call', { name: 'echo', arguments: {} }, never()), closed);
  });
});

describe('upstreams/tool-result: the shape of a tools/call answer', () => {
  it('passes a well-formed answer as it is, and fills absent content with an empty one', () => {
    const ok = { content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, isError: false, _meta: { k: 1 } };
    assert.equal(toolResult(ok), ok);
    assert.deepEqual(toolResult({ structuredContent: { a: 1 } }), { structuredContent: { a: 1 }, content: [] });
  });

  it('refuses content that is not an array of typed blocks, a non-object structuredContent, a non-boolean isError', () => {
    for (const bad of [{ content: 'x' }, { content: [{ text: 'no type' }] }, { content: [null] }, { content: [], structuredContent: [1] }, { content: [], isError: 'yes' }]) {
      assert.throws(() => toolResult(bad), (e: unknown) => e instanceof SdkError && e.code === SdkErrorCode.InvalidResult, JSON.stringify(bad));
    }
  });
});
