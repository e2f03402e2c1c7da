// The session registry with a SessionStore (src/mcp/sessions.ts, shared-sessions.ts), without sockets:
// a cached instance is found only while the store listens, touches the record at most once per idleMs / 4,
// is dropped (not ended) at the cap, while the store is deaf and by the idle sweep, applies the record on
// `changed`, ends on `ended`; a revoked credential ends the record itself.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import type { Principal } from '../../src/core/types.js';
import { McpSession } from '../../src/mcp/protocol.js';
import { SessionRegistry, type SessionEntry } from '../../src/mcp/sessions.js';
import { followStore, recordOf, share } from '../../src/mcp/shared-sessions.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { MemorySessionStore } from '../../src/sessions/memory-store.js';
import { notesApp } from '../helpers/mcp-app.js';

const logger = pino({ level: 'silent' });
const runtime = new Runtime(buildCatalog(notesApp()), { inlineLimit: 16384, logger });
const alice: Principal = { sub: 'alice', kind: 'static', scopes: new Set(), credentialId: 'grant-1' };

/** A MemorySessionStore whose notification channel the test turns off and on, counting touches. */
class SwitchedStore extends MemorySessionStore {
  up = true;
  touches = 0;
  readonly #fns: ((up: boolean) => void)[] = [];
  override listening(): boolean {
    return this.up;
  }
  override onListening(fn: (up: boolean) => void): void {
    this.#fns.push(fn);
  }
  set(up: boolean): void {
    this.up = up;
    for (const fn of this.#fns) fn(up);
  }
  override touch(id: string, expiresAt: number): Promise<void> {
    this.touches++;
    return super.touch(id, expiresAt);
  }
}

/** Every signal and record read the store has under way, settled (they resolve in microtasks). */
const settled = () => new Promise((r) => setImmediate(r));

function setup(maxSessions = 10, idleMs = 60_000) {
  const store = new SwitchedStore({ keepEvents: 16 });
  const reg = new SessionRegistry({ logger, idleMs, maxSessions, store });
  followStore(reg, logger);
  const make = (entry: SessionEntry) => new McpSession({
    runtime, logger, transport: 'mcp', send: (m) => SessionRegistry.send(entry, m), shared: share(entry, reg, logger), fallback: (m) => SessionRegistry.relay(entry, m),
  });
  const open = async (): Promise<SessionEntry> => {
    const e = reg.create(alice, 'mcp', make)!;
    await e.session.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, alice);
    await store.create(recordOf(e, Date.now() + idleMs));
    reg.add(e);
    return e;
  };
  return { store, reg, open };
}

describe('MCP session registry on a session store', () => {
  it('finds a cached instance only while the store listens; a deaf store drops idle instances, and the session goes on', async () => {
    const { store, reg, open } = setup();
    const e = await open();
    const busy = await open();
    busy.busy = 1;
    assert.equal(reg.find(e.id, alice), e);
    store.set(false);
    assert.ok(e.session.closed, 'the idle instance is dropped');
    assert.ok(!busy.session.closed, 'the busy one stays');
    assert.equal(reg.find(busy.id, alice), undefined, 'not served from the cache while deaf');
    assert.ok(await store.get(e.id), 'the record is still there');
    store.set(true);
    assert.equal(reg.find(busy.id, alice), busy);
    reg.close();
  });

  it('touches the record at most once per idleMs / 4, whatever the number of hits', async () => {
    const { store, reg, open } = setup(10, 60_000);
    const e = await open();
    for (let i = 0; i < 100; i++) reg.find(e.id, alice);
    assert.equal(store.touches, 0, 'just opened: no touch yet');
    e.touchedAt = Date.now() - 15_001;
    for (let i = 0; i < 100; i++) reg.find(e.id, alice);
    assert.equal(store.touches, 1);
    reg.close();
  });

  it('at the cap drops the least recently used instance without ending its session, never one holding its GET stream', async () => {
    const { store, reg, open } = setup(2);
    const a = await open();
    const b = await open();
    reg.attach(a, { send: () => true, end: () => {} });
    const c = await open();
    assert.ok(!a.session.closed, 'a holds its GET stream');
    assert.ok(b.session.closed, 'b was dropped');
    assert.ok(await store.get(b.id), "b's session goes on");
    assert.ok(!c.session.closed);
    reg.close();
    assert.equal(await store.count(), 3, 'closing the registry ends no session');
  });

  it('applies a record another process changed, and ends on `ended`', async () => {
    const { store, reg, open } = setup();
    const e = await open();
    await store.update(e.id, { logLevel: 'error', add: { loadedTools: ['echo'] } });
    await settled();
    assert.equal(e.session.state().logLevel, 'error');
    assert.deepEqual(e.session.state().loadedTools, ['echo']);
    await store.end(e.id, 'deleted by the client');
    await settled();
    assert.ok(e.session.closed);
    assert.equal(reg.peek(e.id), undefined);
    reg.close();
  });

  it('a change made here is stored before its request is answered', async () => {
    const { store, reg, open } = setup();
    const e = await open();
    const answer = await e.session.handle({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'warning' } }, alice);
    assert.deepEqual(answer, { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal((await store.get(e.id))?.logLevel, 'warning');
    reg.close();
  });

  it('a revoked credential ends the record, so every process ends its instance', async () => {
    const { store, reg, open } = setup();
    const e = await open();
    reg.credentialRevoked('grant-1');
    assert.ok(e.session.closed);
    await settled();
    assert.equal(await store.get(e.id), undefined);
    reg.close();
  });
});
