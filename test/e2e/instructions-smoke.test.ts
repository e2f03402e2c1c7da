// The instruction-count bench's smoke form as part of npm test: `node bench/instructions.mjs --smoke` starts the raw
// echo and the real `svc serve` process (`node dist/cli.js serve bench/fastsvc.svc.yaml --port 0`, as `npm run bench`
// does; the only difference is that valgrind's callgrind runs that node) on loopback (valgrind from
// scripts/ensure-valgrind.sh), checks each answer, switches instrumentation on around a few hundred requests per
// round and prints Ir/request. It runs /svc and a 2026-07-28 /mcp call, with the raw echo and the raw echo of that same
// /mcp request, and (--functions) the per-function difference between that call and its echo. This asserts the exit
// code, a count in each row, fastsvc's work ratio against the raw echo and the /mcp call's against the echo of its own
// request, and that the difference table adds up (its total row is the two dumps' totals) and names fastsvc's own
// JavaScript functions (from V8's perf map) — no timing, and no value of a count (the smoke form's JIT is not warm).
// A second run checks --cache-sim's table (counts, and an estimate that includes them) and --warm-with.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCENARIOS = ['raw', 'raw-mcp-2026', 'fastsvc-svc', 'fastsvc-mcp-2026'];

describe('instruction-count bench smoke (node bench/instructions.mjs --smoke)', function () {
  this.timeout(420_000); // four servers started under valgrind, one after the other; the script bounds its own waits
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'instructions-smoke-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('counts instructions per request for the raw echoes, fastsvc /svc and /mcp, and their ratios', async () => {
    const out = join(dir, 'instructions.md');
    const { stdout } = await promisify(execFile)(process.execPath, ['bench/instructions.mjs', '--smoke', '--only', SCENARIOS.join(','), '--functions', '40', '--out', out], { cwd: ROOT, timeout: 400_000, maxBuffer: 1 << 24 });
    const rows = new Map(readFileSync(out, 'utf8').split('\n').filter((l) => SCENARIOS.some((n) => l.startsWith(`| ${n} |`)))
      .map((l) => l.split('|').slice(1, -1).map((c) => c.trim())).map((c) => [c[0]!, c]));
    assert.deepEqual([...rows.keys()], SCENARIOS, stdout);
    for (const [name, cells] of rows) assert.match(cells[2]!, /^[\d,]+$/, `${name}: a count, not "${cells[2]}"`);
    assert.equal(rows.get('raw')![4], '1.00×');
    assert.match(rows.get('fastsvc-svc')![4]!, /^\d+\.\d\d×$/);
    assert.match(rows.get('fastsvc-mcp-2026')![5]!, /^\d+\.\d\d× raw-mcp-2026$/);
    assert.equal(rows.get('fastsvc-svc')![5], '—', '/svc has no same-request echo');
    assert.ok(stdout.includes('### Instructions per request'), 'the table is printed too');

    const report = readFileSync(out, 'utf8');
    const section = report.split('#### fastsvc-mcp-2026 against raw-mcp-2026')[1];
    assert.ok(section, `a function table for the /mcp call against its echo:\n${report}`);
    const cells = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| ---') && !l.startsWith('| function'))
      .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
    const num = (c: string) => Number(c.replaceAll(',', ''));
    assert.equal(cells.length, 1 + 40, 'the total row and forty functions');
    const [all, ...fns] = cells;
    assert.equal(all![0], "all (the dump's total)");
    assert.ok(Math.abs(num(all![3]!) - (num(all![1]!) - num(all![2]!))) <= 1, 'difference = fastsvc − echo (each rounded)');
    assert.ok(num(all![1]!) > 0 && num(all![2]!) > 0);
    assert.ok(fns.some((c) => /^JS \S+ \(dist\/cli\.js:\d+:\d+\)$/.test(c[0]!)), `a row names a function of fastsvc's bundle:\n${section}`);
    for (const c of fns) assert.ok(Math.abs(num(c[3]!) - (num(c[1]!) - num(c[2]!))) <= 1, `row ${c[0]} adds up`);
  });

  it('--cache-sim adds misses, mispredicts and a cycle estimate per request; --warm-with warms a server with other traffic first', async () => {
    const out = join(dir, 'cache.md');
    const { stderr } = await promisify(execFile)(process.execPath, ['bench/instructions.mjs', '--smoke', '--only', 'raw,fastsvc-svc', '--warm-with', 'fastsvc-mcp-2026', '--cache-sim', '--out', out], { cwd: ROOT, timeout: 400_000, maxBuffer: 1 << 24 });
    const report = readFileSync(out, 'utf8');
    assert.match(report, /each server having first served 1000 of each of fastsvc-mcp-2026 that it serves/);
    const section = report.split('### Cache misses')[1];
    assert.ok(section, `a cache table:\n${report}`);
    const rows = new Map(section.split('\n').filter((l) => /^\| (raw|fastsvc-svc) \|/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim())).map((c) => [c[0]!, c]));
    assert.deepEqual([...rows.keys()], ['raw', 'fastsvc-svc'], report);
    const kilo = (c: string) => Number(c.replace(/k$/, '')) * 1000;
    for (const [name, c] of rows) {
      for (const i of [2, 3, 4, 5]) assert.match(c[i]!, /^[\d,]+$/, `${name}: column ${i} is a count`);
      const misses = [2, 3, 5].reduce((sum, i) => sum + Number(c[i]!.replaceAll(',', '')), 0);
      assert.ok(misses > 0, `${name}: a simulation that counts nothing is not running`);
      assert.ok(kilo(c[6]!) >= kilo(c[1]!) + 10 * misses - 100, `${name}: the estimate includes the misses (${c.join(' | ')})`);
    }
    assert.equal(rows.get('raw')![7], '1.00×');
    assert.match(rows.get('fastsvc-svc')![7]!, /^\d+\.\d\d×$/);
    // Only fastsvc's server serves fastsvc-mcp-2026: its traffic went there, not to the raw echo.
    assert.match(stderr, /fastsvc-svc: its server served 1000 requests of fastsvc-mcp-2026 first/);
    assert.doesNotMatch(stderr, /raw: its server served/);
  });
});
