// The audit log's line format and sinks: a line is the JSON pino wrote before (level, ISO
// time, audit: true, the decision, the principal's fields, no token); with fsync never the
// lines reach the file together, in order, within BATCH_MS, and close() writes what is
// waiting; with fsync always each line is in the file when record() returns.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAudit } from '../../src/observe/audit.js';
import { BATCH_MS } from '../../src/observe/audit-sink.js';
import type { Principal } from '../../src/core/types.js';

const P: Principal = Object.freeze({ sub: 'bot', scopes: new Set(['a.read', 'b.write']), kind: 'static', credentialId: 'bot' });

describe('audit sink', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'audit-sink-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const lines = (f: string) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('writes one JSON line per event with the principal, capability and no credential', () => {
    const file = join(dir, 'sub', 'audit.log');
    const audit = createAudit({ to: { file }, fsync: 'always' });
    audit.record({ decision: 'allow', reason: 'scopes_ok', principal: P, capability: 'tool:x.y', transport: 'svc', scopes_required: ['a.read'], ip: '127.0.0.1' });
    audit.record({ decision: 'deny', reason: 'missing_token', capability: '/svc', detail: { note: 'a "quoted" value' } });
    const [a, b] = lines(file);
    assert.equal(a!.level, 30);
    assert.match(String(a!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual({ ...a, time: undefined }, {
      level: 30, time: undefined, audit: true, decision: 'allow', reason: 'scopes_ok', sub: 'bot', token_kind: 'static',
      token_id: a!.token_id, scopes_held: ['a.read', 'b.write'], capability: 'tool:x.y', transport: 'svc', scopes_required: ['a.read'], ip: '127.0.0.1',
    });
    assert.match(String(a!.token_id), /^[0-9a-f]{16}$/);
    assert.deepEqual({ ...b, time: undefined }, { level: 30, time: undefined, audit: true, decision: 'deny', reason: 'missing_token', capability: '/svc', note: 'a "quoted" value' });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    audit.record({ decision: 'reload_rejected', reason: 'invalid', detail: circular });
    assert.equal(lines(file)[2]!.detail, 'unserialisable');
    audit.close();
  });

  it('fsync never: lines are written together within BATCH_MS, in order; close() writes what is waiting', async () => {
    const file = join(dir, 'audit.log');
    const audit = createAudit({ to: { file }, fsync: 'never' });
    for (let i = 0; i < 3; i++) audit.record({ decision: 'allow', reason: `r${i}`, principal: P, capability: 'tool:x.y' });
    assert.equal(readFileSync(file, 'utf8'), '', 'nothing written yet: the lines wait to share one write');
    await sleep(BATCH_MS + 20);
    assert.deepEqual(lines(file).map((l) => l.reason), ['r0', 'r1', 'r2']);
    audit.record({ decision: 'deny', reason: 'last', capability: '/svc' });
    audit.close();
    assert.deepEqual(lines(file).map((l) => l.reason), ['r0', 'r1', 'r2', 'last']);
  });

  it('fsync never: a batch larger than its buffer, non-ASCII text and a line longer than the buffer arrive whole and in order', () => {
    const file = join(dir, 'audit.log');
    const audit = createAudit({ to: { file }, fsync: 'never' });
    const wide = { sub: 'José ✓ 😀', scopes: new Set(['é.read']), kind: 'oauth', credentialId: 'g1' } as Principal;
    const huge = 'x'.repeat(100 * 1024);
    const n = 2000; // ~400 KiB of lines: several buffers' worth
    for (let i = 0; i < n; i++) {
      audit.record({ decision: 'allow', reason: `r${i}`, principal: i % 2 ? wide : P, capability: 'tool:ünï.cödé', transport: 'svc', scopes_required: ['é.read'] });
      if (i === 1000) audit.record({ decision: 'reload_rejected', reason: 'huge', detail: { huge } });
    }
    audit.close();
    const got = lines(file);
    assert.equal(got.length, n + 1);
    assert.deepEqual(got.map((l) => l.reason), [...Array.from({ length: 1001 }, (_, i) => `r${i}`), 'huge', ...Array.from({ length: n - 1001 }, (_, i) => `r${i + 1001}`)]);
    assert.equal(got[1]!.sub, 'José ✓ 😀');
    assert.equal(got[3]!.capability, 'tool:ünï.cödé');
    assert.ok(got[1001]!.huge === huge, 'the long line is whole');
  });
});
