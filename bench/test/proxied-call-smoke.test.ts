// The proxied call's investigation in its smoke form: `node bench/investigate/proxied-call.mjs` with one short round
// on the 2025 session starts the real `svc serve` of bench/fastsvc-upstream.svc.yaml (its stdio upstream
// server-everything included), checks each row's answer before measuring it and must exit 0 having printed the table
// — the native and the proxied row, each with req/s, CPU per call and the ratio — and, with --profile, the summary of
// the proxied row's CPU profile. No timing: only the table's shape and its numbers being measured are checked.
import assert from 'node:assert/strict';
import { run } from '../../test/helpers/cli.js';

describe('proxied-call smoke (node bench/investigate/proxied-call.mjs, one short round, profiled)', function () {
  this.timeout(120_000); // the script bounds its own waits (the server's start, each load)

  it('measures the native and the proxied call on one build and summarizes the profile', async () => {
    const r = await run(['--eras', '2025', '--rounds', '1', '--seconds', '0.5', '--profile', '--top', '5'], { program: [process.execPath, 'bench/investigate/proxied-call.mjs'] });
    assert.equal(r.code, 0, `proxied-call exited ${r.code ?? r.signal}\n${r.stderr.slice(-4000)}`);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| dist |'));
    assert.deepEqual(rows.map((l) => l.split(' | ')[1]), ['fastsvc-upstream-native-mcp', 'fastsvc-upstream-mcp']);
    for (const row of rows) {
      const [, , rps, cpu, ratio] = row.slice(2, -2).split(' | ');
      assert.ok(Number(rps) > 0, `req/s in ${row}`);
      assert.ok(Number(cpu) > 0, `CPU in ${row}`);
      assert.match(ratio!, /^(1|\d+\.\d\d)$/);
    }
    assert.match(r.stdout, /Profile of the proxied 2025 row alone: \d+ calls, busy \d+\.\d µs\/call/);
    const functions = r.stdout.split('| µs/call | share | function |')[1]?.split('\n').filter((l) => /^\| \d/.test(l)) ?? [];
    assert.equal(functions.length, 5);
  });
});
