// The OpenAPI catalog entry (issue 32): `node bench/openapi-catalog.mjs --starts 1 --reloads 1 --samples 1` builds a
// manifest whose `openapi:` source is GitHub's REST description (@octokit/openapi, ~1,000 operations), runs
// `svc validate` on it, starts the real `svc serve`, walks tools/list on /mcp and GET /svc (the script checks that both
// list the same tools once each, the marker among them, at least 900), reloads it with the document unchanged, and
// must exit 0 with every figure measured and the table of the six targets. No timing is judged here.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../test/helpers/cli.js';

const FIGURES = ['validateMs', 'validatePeakMiB', 'readyMs', 'rssReadyMiB', 'rssAfterListMiB', 'mcpPageMs', 'svcPageMs', 'mcpWalkMs', 'svcWalkMs', 'reloadMs', 'reloadPeakMiB', 'rssAfterReloadMiB'];

describe('bench openapi catalog (node bench/openapi-catalog.mjs, GitHub\'s REST description)', function () {
  this.timeout(300_000); // the script bounds every wait itself
  const dir = mkdtempSync(join(tmpdir(), 'openapi-catalog-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('validates, starts, lists on /mcp and /svc, reloads, and reports every figure against its target', async () => {
    const out = join(dir, 'openapi-catalog.json');
    const r = await run(['--starts', '1', '--reloads', '1', '--samples', '1', '--out', out], { program: [process.execPath, 'bench/openapi-catalog.mjs'] });
    assert.equal(r.code, 0, `openapi-catalog exited ${r.code ?? r.signal}\n${r.stdout}\n${r.stderr.slice(-4000)}`);
    const data = JSON.parse(readFileSync(out, 'utf8'));
    assert.ok(data.tools >= 900, `${data.tools} tools`);
    assert.ok(data.mcpPages > 1 && data.svcPages > 1, `pages: /mcp ${data.mcpPages}, /svc ${data.svcPages}`);
    for (const k of FIGURES) assert.ok(Number.isFinite(data[k]) && data[k] > 0, `${k}: ${data[k]}`);
    for (const what of ['`svc validate`', 'start-up to ready', 'RSS at ready', 'reload, document unchanged', 'tools/list first page (/mcp)', 'GET /svc first page']) {
      assert.match(r.stdout, new RegExp(`^\\| ${what.replace(/[()/]/g, '\\$&')} \\| [\\d.]+ (ms|MiB).* \\| ≤ \\d+ (ms|MiB) \\| (met|\\*\\*missed\\*\\*)`, 'm'), `no row for ${what}\n${r.stdout}`);
    }
  });
});
