// The after-a-quiet-spell measurement's smoke form: `node bench/idle-recovery.mjs` with one short cycle starts
// its four servers on loopback (the real `svc serve` and the raw echo, each on Node's defaults and with
// --no-memory-reducer), checks every answer (a failed request or a non-2xx stops it) and must exit 0 having
// written a row with figures for each. No timing: whether V8 runs a reducing collection in one second is its
// own business, so only the table's shape and its numbers being measured are checked.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';

const LIMIT_MS = 90_000; // the script bounds its own waits; this only stops a wedged run

describe('idle-recovery smoke (node bench/idle-recovery.mjs, one short cycle)', function () {
  this.timeout(LIMIT_MS + 10_000);
  let child: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'idle-smoke-'));
  after(() => {
    child?.kill('SIGTERM'); // the script kills its servers on SIGTERM
    rmSync(dir, { recursive: true, force: true });
  });

  it('measures fastsvc and the raw echo, with and without the memory reducer, and writes the table', async () => {
    let stderr = '';
    const out = join(dir, 'idle-recovery.md');
    const code = await new Promise<number | string | null>((resolve, reject) => {
      child = spawn(process.execPath, ['bench/idle-recovery.mjs', '--cycles', '1', '--idle', '1', '--seconds', '1', '--warmup', '1', '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-8000)));
      const timer = setTimeout(() => child!.kill('SIGTERM'), LIMIT_MS);
      child.once('error', reject);
      child.once('exit', (c, sig) => {
        clearTimeout(timer);
        resolve(c ?? sig);
      });
    });
    assert.equal(code, 0, `idle-recovery exited ${code}\n${stderr}`);

    const rows = readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| server') && !l.startsWith('| ---'));
    assert.deepEqual(rows.map((r) => r.split(' | ')[0]!.slice(2)), ['fastsvc', 'fastsvc-no-reducer', 'raw', 'raw-no-reducer']);
    for (const row of rows) {
      const [, what, busy, after, ratio, cycle, cpu] = row.slice(2, -2).split(' | ');
      assert.equal(what!.includes('--no-memory-reducer'), row.startsWith('| fastsvc-no-reducer') || row.startsWith('| raw-no-reducer'), row);
      for (const rps of [busy, after]) assert.ok(Number(rps!.replace(/,/g, '')) > 0, `req/s in ${row}`);
      assert.match(ratio!, /^\d+\.\d\d×$/);
      assert.match(cycle!, /^\d+\.\d\d( R)?$/);
      assert.match(cpu!, /^\d+\.\d → \d+\.\d \(\d+\.\d\d×\)$/);
    }
  });
});
