// The instruction-count bench's smoke form (npm run test:bench): `node bench/investigate/instructions.mjs --smoke` starts the raw
// echo and the real `svc serve` process (`node dist/cli.js serve bench/fastsvc.svc.yaml --port 0`, as `npm run bench`
// does; the only difference is that valgrind's callgrind runs that node) on loopback (valgrind from
// bench/investigate/ensure-valgrind.sh), checks each answer, switches instrumentation on around a few hundred requests per
// round and prints Ir/request. The first run covers /svc and a 2026-07-28 /mcp call, with the raw echo and the raw
// echo of that same /mcp request, and --functions (the per-function difference between that call and its echo); the
// second, the /mcp call and its echo with --cache-sim (simulated cache misses, mispredicts, a cycle estimate, the call
// by origin) and --warm-with (fastsvc's server first serves /svc traffic). Two runs, because the simulation slows the
// smoke form's few requests enough that the JIT's compiler work fills the function table. This asserts the exit code,
// a count in each row, the work ratios, that the difference table adds up and names fastsvc's own JavaScript functions
// (from V8's perf map), that the estimate includes the misses, and where the warm-up traffic went — no timing, and no
// value of a count (the smoke form's JIT is not warm).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCENARIOS = ['raw', 'raw-mcp-2026', 'fastsvc-svc', 'fastsvc-mcp-2026'];

/** The `| a | b |` rows of a markdown section, as cells, by their first cell. */
const tableRows = (section: string, names: readonly string[]) => new Map(section.split('\n').filter((l) => names.some((n) => l.startsWith(`| ${n} |`)))
  .map((l) => l.split('|').slice(1, -1).map((c) => c.trim())).map((c) => [c[0]!, c]));

/** Runs the smoke form with `args`; its report, stdout and stderr. */
async function smoke(args: string[]): Promise<{ report: string; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'instructions-smoke-'));
  try {
    const out = join(dir, 'instructions.md');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bench/investigate/instructions.mjs', '--smoke', ...args, '--out', out], { cwd: ROOT, timeout: 400_000, maxBuffer: 1 << 24 });
    return { report: readFileSync(out, 'utf8'), stdout, stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('instruction-count bench smoke (node bench/investigate/instructions.mjs --smoke)', function () {
  this.timeout(420_000); // servers started under valgrind, one after the other; the script bounds its own waits
  let report: string;
  let stdout: string;
  before(async () => ({ report, stdout } = await smoke(['--only', SCENARIOS.join(','), '--functions', '40'])));

  it('counts instructions per request for the raw echoes, fastsvc /svc and /mcp, and their ratios', () => {
    const rows = tableRows(report, SCENARIOS);
    assert.deepEqual([...rows.keys()], SCENARIOS, stdout);
    for (const [name, cells] of rows) assert.match(cells[2]!, /^[\d,]+$/, `${name}: a count, not "${cells[2]}"`);
    assert.equal(rows.get('raw')![4], '1.00×');
    assert.match(rows.get('fastsvc-svc')![4]!, /^\d+\.\d\d×$/);
    assert.match(rows.get('fastsvc-mcp-2026')![5]!, /^\d+\.\d\d× raw-mcp-2026$/);
    assert.equal(rows.get('fastsvc-svc')![5], '—', '/svc has no same-request echo');
    assert.ok(stdout.includes('### Instructions per request'), 'the table is printed too');
  });

  it('--functions: the difference between the /mcp call and its echo adds up and names fastsvc\'s functions', () => {
    const section = report.split('#### fastsvc-mcp-2026 against raw-mcp-2026 (')[1]?.split('####')[0];
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
});

describe('instruction-count bench smoke with --cache-sim and --warm-with', function () {
  this.timeout(420_000);
  const NAMES = ['raw-mcp-2026', 'fastsvc-mcp-2026'];
  let report: string;
  let stderr: string;
  before(async () => ({ report, stderr } = await smoke(['--only', NAMES.join(','), '--functions', '3', '--cache-sim', '--warm-with', 'fastsvc-svc'])));

  it('--cache-sim: misses, mispredicts and a cycle estimate per request, and the /mcp call by origin', () => {
    const section = report.split('### Cache misses')[1]?.split('###')[0];
    assert.ok(section, `a cache table:\n${report}`);
    const rows = tableRows(section, NAMES);
    assert.deepEqual([...rows.keys()], NAMES, report);
    const kilo = (c: string) => Number(c.replace(/k$/, '')) * 1000;
    for (const [name, c] of rows) {
      for (const i of [2, 3, 4, 5]) assert.match(c[i]!, /^[\d,]+$/, `${name}: column ${i} is a count`);
      const misses = [2, 3, 5].reduce((sum, i) => sum + Number(c[i]!.replaceAll(',', '')), 0);
      assert.ok(misses > 0, `${name}: a simulation that counts nothing is not running`);
      assert.ok(kilo(c[6]!) >= kilo(c[1]!) + 10 * misses - 100, `${name}: the estimate includes the misses (${c.join(' | ')})`);
    }
    assert.equal(rows.get('fastsvc-mcp-2026')![7], '—', 'no plain raw echo in this run');
    assert.match(rows.get('fastsvc-mcp-2026')![8]!, /^\d+\.\d\d× raw-mcp-2026$/);

    const origins = report.split('by origin')[1];
    assert.ok(origins, `an origin table for the /mcp call against its echo:\n${report}`);
    const own = origins.split('\n').find((l) => l.startsWith("| fastsvc's JavaScript (dist/) |"))?.split('|').slice(1, -1).map((c) => c.trim());
    assert.ok(own, origins);
    assert.match(own[1]!, /→ [1-9][\d.]*k$/, 'fastsvc runs its own JavaScript');
    assert.match(own[2]!, /^0\.0k, 0 \/ 0, 0 → 0\.0k$/, 'the echo runs none of it');
    assert.match(origins, /fastsvc's own JavaScript is [\d.]+k of [\d.]+k estimated cycles \([\d.]+%\)\./);
  });

  it('--warm-with: only the servers that serve the named scenario get its traffic first', () => {
    assert.match(report, /each server having first served 1000 of each of fastsvc-svc that it serves/);
    assert.match(stderr, /fastsvc-mcp-2026: its server served 1000 requests of fastsvc-svc first/);
    assert.doesNotMatch(stderr, /raw-mcp-2026: its server served/);
  });
});
