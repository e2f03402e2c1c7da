// The official MCP conformance suite (server scenarios) as part of `npm test`, so CI runs it:
// scripts/conformance.mjs against examples/conformance, open and behind a bearer token.
// `npm test` builds first (pretest), so the script runs with --no-build.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('MCP conformance suite 0.1.16 (npm run conformance)', () => {
  it('passes every active server scenario, open and behind a bearer token', async function () {
    this.timeout(600_000);
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(process.execPath, ['scripts/conformance.mjs', '--no-build'], { cwd: ROOT, timeout: 590_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
      });
    });
    assert.equal(code, 0, out);
    assert.match(out, /^PASS open: (\d+)\/\1 scenarios passed; checks \d+ passed, 0 failed, 0 warnings/m);
    assert.match(out, /^PASS bearer: (\d+)\/\1 scenarios passed; checks \d+ passed, 0 failed, 0 warnings/m);
  });
});
