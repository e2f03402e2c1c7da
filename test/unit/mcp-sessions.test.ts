// The MCP session registry (src/mcp/sessions.ts) without sockets: ownership, the
// /mcp cap with least-recently-used eviction, the idle sweep, channels, counts.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import type { Principal } from '../../src/core/types.js';
import { McpSession } from '../../src/mcp/protocol.js';
import { SessionRegistry, type SessionTransport } from '../../src/mcp/sessions.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { notesApp } from '../helpers/mcp-app.js';

const logger = pino({ level: 'silent' });
const runtime = new Runtime(buildCatalog(notesApp()), { inlineLimit: 16384, logger });
const alice: Principal = { sub: 'alice', kind: 'static', scopes: new Set() };
const bob: Principal = { sub: 'bob', kind: 'static', scopes: new Set() };

function registry(maxSessions = 2, idleMs = 60_000) {
  const reg = new SessionRegistry({ logger, idleMs, maxSessions });
  const open = (p: Principal, transport: SessionTransport = 'mcp') => {
    const e = reg.create(p, transport, () => new McpSession({ runtime, logger, transport, send: () => false }));
    if (e) reg.add(e);
    return e;
  };
  return { reg, open };
}

describe('MCP session registry', () => {
  it('finds a session only for the principal that opened it', () => {
    const { reg, open } = registry();
    const e = open(alice)!;
    assert.equal(reg.find(e.id, alice), e);
    assert.equal(reg.find(e.id, bob), undefined);
    assert.equal(reg.find(e.id, { ...alice, kind: 'oauth' }), undefined, 'same subject, other principal kind');
    assert.equal(reg.find('no-such-id', alice), undefined);
    reg.close();
  });

  it('the same sub at two external issuers never shares a session', () => {
    const { reg, open } = registry();
    const atA: Principal = { sub: 'alice', kind: 'external', issuer: 'https://idp-a.example', scopes: new Set() };
    const atB: Principal = { ...atA, issuer: 'https://idp-b.example' };
    const e = open(atA)!;
    assert.equal(reg.find(e.id, atA), e);
    assert.equal(reg.find(e.id, atB), undefined);
    assert.equal(reg.find(e.id, { sub: 'alice', kind: 'oauth', scopes: new Set() }), undefined);
    reg.close();
  });

  it('evicts the least recently used idle /mcp session at the cap, never a busy one', () => {
    const { reg, open } = registry(2);
    const a = open(alice)!;
    const b = open(alice)!;
    reg.touch(a);
    const c = open(alice)!;
    assert.equal(reg.count('mcp'), 2);
    assert.ok(b.session.closed, 'b was the least recently used');
    assert.equal(reg.find(b.id, alice), undefined);
    a.busy = 1;
    c.busy = 1;
    assert.equal(reg.create(alice, 'mcp', () => new McpSession({ runtime, logger, transport: 'mcp', send: () => false })), undefined, 'all busy: no room');
    assert.equal(reg.count('mcp'), 2);
    reg.close();
  });

  it('keeps recency exact when the newest session is touched again and again, and after it ends', () => {
    const { reg, open } = registry(3);
    const a = open(alice)!;
    const b = open(alice)!;
    const c = open(alice)!;
    for (let i = 0; i < 5; i++) reg.touch(c); // the hot session: already the newest
    reg.touch(a); // order now b, c, a
    reg.end(a, 'test'); // the newest ends: order b, c
    reg.touch(b); // order c, b
    open(alice); // order c, b, d: the cap
    open(alice); // evicts c, the least recently used
    assert.ok(c.session.closed, 'c was the least recently used');
    assert.ok(!b.session.closed);
    open(alice); // evicts b
    assert.ok(b.session.closed);
    reg.close();
  });

  it('does not count /ws sessions against the /mcp cap, nor sweep them', () => {
    const { reg, open } = registry(1, 1000);
    const w = open(alice, 'ws')!;
    const m = open(alice)!;
    assert.equal(reg.count('ws'), 1);
    assert.equal(reg.count('mcp'), 1);
    assert.equal(reg.count(), 2);
    reg.sweep(Date.now() + 3_600_000);
    assert.ok(!w.session.closed);
    assert.ok(m.session.closed);
    reg.close();
  });

  it('sweeps idle sessions but keeps busy ones and ones with an open channel', () => {
    const { reg, open } = registry(10, 1000);
    const idle = open(alice)!;
    const busy = open(alice)!;
    const listening = open(alice)!;
    busy.busy = 1;
    let ended = 0;
    reg.attach(listening, { send: () => true, end: () => void ended++ });
    reg.sweep(Date.now() + 3_600_000);
    assert.deepEqual([idle, busy, listening].map((e) => e.session.closed), [true, false, false]);
    assert.equal(ended, 0);
    reg.close();
  });

  it('ends a channel once: replaced by attach, on end(), and never after detach', () => {
    const { reg, open } = registry();
    const e = open(alice)!;
    const ends: string[] = [];
    const first = { send: () => true, end: () => void ends.push('first') };
    const second = { send: () => true, end: () => void ends.push('second') };
    reg.attach(e, first);
    reg.attach(e, second);
    assert.deepEqual(ends, ['first']);
    reg.detach(e, first);
    assert.equal(e.channel, second, 'a stale detach leaves the current channel');
    assert.equal(SessionRegistry.send(e, { jsonrpc: '2.0', method: 'notifications/message' }), true);
    reg.end(e, 'test');
    reg.end(e, 'again');
    assert.deepEqual(ends, ['first', 'second']);
    assert.equal(SessionRegistry.send(e, { jsonrpc: '2.0', method: 'notifications/message' }), false);
    assert.equal(reg.count(), 0);
    reg.close();
  });

  it('endChannels keeps the sessions; close(transport) ends only that transport', () => {
    const { reg, open } = registry();
    const m = open(alice)!;
    const w = open(alice, 'ws')!;
    let n = 0;
    reg.attach(m, { send: () => true, end: () => void n++ });
    reg.endChannels('mcp');
    assert.equal(n, 1);
    assert.equal(reg.find(m.id, alice), m);
    reg.close('ws');
    assert.ok(w.session.closed);
    assert.ok(!m.session.closed);
    reg.close();
    assert.ok(m.session.closed);
  });
});
