// The scaling curves' smoke form: `node bench/scaling.mjs --smoke --out-dir DIR` (connections 1 and 2; 0, 10, 20 and
// 30 idle sessions/sockets) starts its servers on loopback, checks every answer, and must exit 0 having written
// scaling.json with a figure for every curve and checkpoint, the three SVG plots and scaling.md linking them. No timing.
// The servers are the real `svc serve` processes (bench/lib/proc.mjs spawns `node dist/cli.js serve … --port 0`),
// the same ones `npm run bench` measures; this test runs the script as an operator would.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../test/helpers/cli.js';

const LIMIT_MS = 120_000; // the script bounds its own waits; this only stops a wedged run
const PLOTS = ['throughput-vs-connections.svg', 'p99-vs-connections.svg', 'rss-idle-sessions.svg'];

describe('scaling smoke (node bench/scaling.mjs --smoke)', function () {
  this.timeout(LIMIT_MS + 10_000);
  let child: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'scaling-smoke-'));
  after(() => {
    child?.kill('SIGTERM'); // the script kills its servers on SIGTERM
    rmSync(dir, { recursive: true, force: true });
  });

  it('measures every curve and checkpoint and writes the data, the plots and the markdown', async () => {
    let stderr = '';
    const code = await new Promise<number | string | null>((resolve, reject) => {
      child = spawn(process.execPath, ['bench/scaling.mjs', '--smoke', '--out-dir', dir], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-8000)));
      const timer = setTimeout(() => child!.kill('SIGTERM'), LIMIT_MS);
      child.once('error', reject);
      child.once('exit', (c, sig) => {
        clearTimeout(timer);
        resolve(c ?? sig);
      });
    });
    assert.equal(code, 0, `scaling smoke exited ${code}\n${stderr}`);

    const data = JSON.parse(readFileSync(join(dir, 'scaling.json'), 'utf8'));
    assert.deepEqual(data.throughput.connections, [1, 2]);
    assert.equal(data.throughput.failed, null);
    for (const name of ['raw', 'fastsvc-svc', 'fastsvc-mcp-2026', 'fastsvc-mcp']) {
      for (const key of ['rps', 'p99']) {
        const values: number[] = data.throughput[key][name];
        assert.equal(values.length, 2, `${key} of ${name}`);
        assert.ok(values.every((v) => v > 0), `${key} of ${name}: ${values}`);
      }
    }
    assert.deepEqual(data.idle.counts, [0, 10, 20, 30]);
    assert.deepEqual(Object.keys(data.idle.rssMiB), ['fastsvc /mcp 2025 sessions', 'fastsvc /ws sockets', 'bare ws echo sockets']);
    for (const [name, values] of Object.entries<number[]>(data.idle.rssMiB)) {
      assert.ok(values.length === 4 && values.every((v) => v > 0), `RSS of ${name}: ${values}`);
    }
    // Every series' retained heap comes through the server's inspector (fastsvc's /metrics also had to count
    // exactly the open sessions at each checkpoint).
    assert.deepEqual(Object.keys(data.idle.heapMiB), ['fastsvc /mcp 2025 sessions', 'fastsvc /ws sockets', 'bare ws echo sockets']);
    for (const values of Object.values<number[]>(data.idle.heapMiB)) assert.ok(values.length === 4 && values.every((v) => v > 0), String(values));

    for (const file of PLOTS) {
      const svg = readFileSync(join(dir, file), 'utf8');
      assert.match(svg, /^<svg [^>]*>[\s\S]*<\/svg>\n$/, file);
      assert.ok((svg.match(/<polyline /g) ?? []).length >= 3, `${file} has fewer lines than series`);
    }
    const md = readFileSync(join(dir, 'scaling.md'), 'utf8');
    for (const file of PLOTS) assert.ok(md.includes(`](results/${file})`), `scaling.md does not link ${file}`);
    assert.doesNotMatch(md, /FAILED/);
  });
});
