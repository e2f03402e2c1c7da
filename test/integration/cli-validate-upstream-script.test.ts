// `fastsvc validate` on a stdio upstream whose interpreter is given a script that is not in the child's folder
// (`node ./missing.js`, `python3 missing.py`): UPSTREAM_CONFIG at the script's own line and column, exit 1,
// before `serve` would start a child that exits at once; the same command with the script present validates.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, PROBLEM_LINE, run } from '../helpers/cli.js';

const manifest = (command: string) => `version: 1
name: gateway
auth: { token: "\${SVC_TOKEN}" }
upstreams:
  - name: local
    cwd: srv
    env: { PATH: "\${PATH}" }
    command: ${command}
`;

describe('cli validate: a stdio upstream\'s script', function () {
  this.timeout(30_000);
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'validate-upstream-script-'));
    mkdirSync(join(dir, 'srv'));
    writeFileSync(join(dir, 'srv', 'server.js'), '');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [command, script] of [['[node, ./missing.js]', './missing.js'], ['[python3, -u, missing.py]', 'missing.py']] as const) {
    it(`${command}: UPSTREAM_CONFIG at the script's line and column, exit 1`, async () => {
      const text = manifest(command);
      writeFileSync(join(dir, 'svc.yaml'), text);
      const r = await run(['validate', join(dir, 'svc.yaml'), '--allow-unset-env'], { env: childEnv() });
      assert.equal(r.code, 1, r.stderr);
      const line = r.stderr.split('\n').find((l) => l.includes('UPSTREAM_CONFIG'));
      assert.ok(line && PROBLEM_LINE.test(line), r.stderr);
      const lines = text.split('\n');
      const row = lines.findIndex((l) => l.includes(script));
      assert.match(line, new RegExp(`svc\\.yaml:${row + 1}:${lines[row]!.indexOf(script) + 1}: UPSTREAM_CONFIG: upstream local: script "${script.replace('.', '\\.')}" not found in the child's folder`));
    });
  }

  it('the script present in the child\'s folder validates', async () => {
    writeFileSync(join(dir, 'svc.yaml'), manifest('[node, server.js]'));
    const r = await run(['validate', join(dir, 'svc.yaml'), '--allow-unset-env'], { env: childEnv() });
    assert.equal(r.code, 0, r.stderr);
  });
});
