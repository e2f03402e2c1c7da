// The benchmark's smoke form, the one bench run in npm test: `node bench/run.mjs --smoke` starts every server on
// loopback, checks every scenario's answer (echoed text; validated OAuth token answers), runs each load briefly,
// the reload and revocation entries too, and exits 1 on any failed check, non-2xx or error. This asserts that exit
// code and that the printed tables name every scenario (with its server CPU per request), server, idle-memory, reload,
// revocation, external-cache and upstream start-up entry (and the scaling ratios) with a figure — no timing. The bench's own tools are tested by `npm run test:bench`.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EXTERNAL_CACHE, IDLE, RELOAD, REVOCATION, SCENARIOS, SERVERS, UPSTREAM_STARTUP } from '../../bench/scenarios.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIMIT_MS = 180_000; // the harness itself bounds every wait; this only stops a wedged run

/** The cells of the row whose first cell is `name`, in the table under the `## <heading>…` section of `out`. */
function rowOf(out: string, heading: string, name: string): string[] | undefined {
  const section = out.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  const line = section.split('\n').find((l) => l.startsWith(`| ${name} |`));
  return line?.split('|').slice(1, -1).map((c) => c.trim());
}

describe('bench smoke (node bench/run.mjs --smoke)', function () {
  this.timeout(LIMIT_MS + 10_000);
  let child: ChildProcess | undefined;
  after(() => void child?.kill('SIGTERM')); // the harness kills its servers on SIGTERM

  it('runs every scenario with correct answers and reports each one', async () => {
    let stdout = '';
    let stderr = '';
    const code = await new Promise<number | string | null>((resolve, reject) => {
      child = spawn(process.execPath, ['bench/run.mjs', '--smoke'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d: Buffer) => (stdout += d));
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d).slice(-8000)));
      const timer = setTimeout(() => child!.kill('SIGTERM'), LIMIT_MS);
      child.once('error', reject);
      child.once('exit', (c, sig) => {
        clearTimeout(timer);
        resolve(c ?? sig);
      });
    });
    assert.equal(code, 0, `bench smoke exited ${code}\n${stdout}\n${stderr}`);

    for (const s of SCENARIOS) {
      const cells = rowOf(stdout, 'Throughput', s.name);
      assert.ok(cells, `no row for scenario ${s.name}\n${stdout}`);
      assert.match(cells[2]!, /^\d[\d,]*$/, `scenario ${s.name} has no req/s: ${cells.join(' | ')}`);
      // Server CPU per request, except where the work is in other processes (the replicas behind a proxy) or the
      // load includes setup requests (the OAuth code pool).
      const noCpu = (SERVERS as Record<string, { noCpu?: boolean }>)[s.server]!.noCpu || s.kind === 'oauth-code';
      assert.match(cells[6]!, noCpu ? /^—$/ : /^\d+\.\d$/, `scenario ${s.name}: CPU cell ${cells[6]}`);
      assert.equal(cells.at(-1), 'ok', `scenario ${s.name}: ${cells.at(-1)}`);
    }
    for (const name of Object.keys(SERVERS)) {
      const cells = rowOf(stdout, 'Start-up', name);
      assert.ok(cells, `no start-up row for server ${name}`);
      assert.equal(cells.at(-1), 'ok', `server ${name}: ${cells.at(-1)}`);
    }
    for (const e of IDLE) {
      const cells = rowOf(stdout, 'Idle memory', e.name);
      assert.ok(cells, `no row for idle-memory entry ${e.name}`);
      // RSS after load, idle RSS, its file-backed part, the V8 heap retained
      for (const c of cells.slice(3, 7)) assert.match(c, /^\d+\.\d$/, `idle-memory entry ${e.name}: ${cells.join(' | ')}`);
      assert.equal(cells.at(-1), 'ok', `idle-memory entry ${e.name}: ${cells.at(-1)}`);
    }
    for (const r of RELOAD) {
      const cells = rowOf(stdout, 'Reload', r.name);
      assert.ok(cells, `no row for reload entry ${r.name}`);
      assert.equal(cells[2], String(r.smokeEdits), `reload entry ${r.name} did not time every edit`);
      assert.equal(cells.at(-1), 'ok', `reload entry ${r.name}: ${cells.at(-1)}`);
    }
    for (const r of REVOCATION) {
      const cells = rowOf(stdout, 'Revocation', r.name);
      assert.ok(cells, `no row for revocation entry ${r.name}`);
      assert.equal(cells[2], String(r.smokeRevocations), `revocation entry ${r.name} did not time every revocation`);
      assert.equal(cells.at(-1), 'ok', `revocation entry ${r.name}: ${cells.at(-1)}`);
    }
    for (const r of EXTERNAL_CACHE) {
      const cells = rowOf(stdout, 'External tokens cached', r.name);
      assert.ok(cells, `no row for external-cache entry ${r.name}`);
      assert.equal(cells[2], String(r.smokeTokens), `external-cache entry ${r.name} did not send every token`);
      for (const i of [3, 4, 9]) assert.match(cells[i]!, /^\d+\.\d$/, `external-cache entry ${r.name}: cell ${i} is ${cells[i]}`);
      assert.equal(cells.at(-1), 'ok', `external-cache entry ${r.name}: ${cells.at(-1)}`);
    }
    for (const r of UPSTREAM_STARTUP) {
      const cells = rowOf(stdout, 'Start-up with upstreams', r.name);
      assert.ok(cells, `no row for upstream start-up entry ${r.name}`);
      assert.equal(cells[2], String(r.smokeSamples), `upstream start-up entry ${r.name} did not take every sample`);
      assert.match(cells[5]!, /^-?\d+(\.\d+)?$/, `upstream start-up entry ${r.name}: ${cells.join(' | ')}`);
      assert.equal(cells.at(-1), 'ok', `upstream start-up entry ${r.name}: ${cells.at(-1)}`);
    }
    for (const s of SCENARIOS.filter((x) => 'vs' in x && x.vs)) {
      const cells = rowOf(stdout, 'Scaling', s.name);
      assert.ok(cells, `no scaling row for ${s.name}`);
      assert.match(cells.at(-1)!, /^\d+\.\d\d×$/, `scaling row ${s.name} has no ratio: ${cells.join(' | ')}`);
    }
    assert.doesNotMatch(stdout, /FAILED|pending:|unavailable/);
  });
});
