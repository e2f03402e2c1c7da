// The memory-flatness entries' smoke form: `node bench/run.mjs --smoke --memory --only <the memory entries>` starts
// fastsvc and the SDK's stateful server, makes each entry's smoke number of tools/call on one /mcp session (2025
// session and 2026-07-28 stateless on fastsvc), reads RSS before and after, and exits 1 on any failed check, non-2xx
// or error. This asserts that exit code and that the Memory table has a row per entry that made all its calls — no
// figure of memory (the smoke form's calls are too few to judge flatness).
import assert from 'node:assert/strict';
import { MEMORY } from '../scenarios.mjs';
import { run } from '../../test/helpers/cli.js';

/** The cells of the row whose first cell is `name`, in the table under the `## <heading>…` section of `out`. */
function rowOf(out: string, heading: string, name: string): string[] | undefined {
  const section = out.split(/^## /m).find((s) => s.startsWith(heading)) ?? '';
  const line = section.split('\n').find((l) => l.startsWith(`| ${name} |`));
  return line?.split('|').slice(1, -1).map((c) => c.trim());
}

describe('bench memory smoke (node bench/run.mjs --smoke --memory --only <memory entries>)', function () {
  this.timeout(180_000); // the harness bounds every wait itself

  it('makes every memory entry\'s calls on one session and reports each one', async () => {
    const only = MEMORY.map((m) => m.name).join(',');
    const r = await run(['--smoke', '--memory', '--only', only], { program: [process.execPath, 'bench/run.mjs'] });
    assert.equal(r.code, 0, `bench exited ${r.code ?? r.signal}\n${r.stdout}\n${r.stderr.slice(-4000)}`);
    for (const m of MEMORY) {
      const cells = rowOf(r.stdout, 'Memory', m.name);
      assert.ok(cells, `no row for memory entry ${m.name}\n${r.stdout}`);
      assert.equal(cells[1], m.smokeCalls.toLocaleString('en-US'), `memory entry ${m.name} did not make its calls`);
      assert.equal(cells.at(-1), 'ok', `memory entry ${m.name}: ${cells.at(-1)}`);
    }
    assert.doesNotMatch(r.stdout, /FAILED|unavailable/);
  });
});
