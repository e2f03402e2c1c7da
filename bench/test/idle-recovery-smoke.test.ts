// The after-a-quiet-spell measurement's smoke form: `node bench/investigate/idle-recovery.mjs` with one short cycle starts
// its four servers on loopback (the real `svc serve` — `node [--no-memory-reducer] dist/cli.js serve … --port 0`, as
// bench/lib/proc.mjs starts it for `npm run bench` — and the raw echo, each on Node's defaults and with
// --no-memory-reducer), checks every answer (a failed request or a non-2xx stops it) and must exit 0 having
// written a row with figures for each. No timing: whether V8 runs a reducing collection in one second is its
// own business, so only the table's shape and its numbers being measured are checked.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../test/helpers/cli.js';

describe('idle-recovery smoke (node bench/investigate/idle-recovery.mjs, one short cycle)', function () {
  this.timeout(100_000); // the script bounds its own waits (each server's start, each load)
  const dir = mkdtempSync(join(tmpdir(), 'idle-smoke-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('measures fastsvc and the raw echo, with and without the memory reducer, and writes the table', async () => {
    const out = join(dir, 'idle-recovery.md');
    const r = await run(['--cycles', '1', '--idle', '1', '--seconds', '1', '--warmup', '1', '--out', out], { program: [process.execPath, 'bench/investigate/idle-recovery.mjs'] });
    assert.equal(r.code, 0, `idle-recovery exited ${r.code ?? r.signal}\n${r.stderr.slice(-4000)}`);

    const rows = readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| server') && !l.startsWith('| ---'));
    assert.deepEqual(rows.map((row) => row.split(' | ')[0]!.slice(2)), ['fastsvc', 'fastsvc-no-reducer', 'raw', 'raw-no-reducer']);
    for (const row of rows) {
      const [, what, busy, afterIdle, ratio, cycle, cpu] = row.slice(2, -2).split(' | ');
      assert.equal(what!.includes('--no-memory-reducer'), row.startsWith('| fastsvc-no-reducer') || row.startsWith('| raw-no-reducer'), row);
      for (const rps of [busy, afterIdle]) assert.ok(Number(rps!.replace(/,/g, '')) > 0, `req/s in ${row}`);
      assert.match(ratio!, /^\d+\.\d\d×$/);
      assert.match(cycle!, /^\d+\.\d\d( R)?$/);
      assert.match(cpu!, /^\d+\.\d → \d+\.\d \(\d+\.\d\d×\)$/);
    }
  });
});
