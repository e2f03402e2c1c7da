// `svc validate` warnings: a tool needing an *.admin or *.write scope, or with a backend timeout
// over 60 s, that does not say `task:` gets one `FILE:LINE:COL: warning: TASK_ADVISED: …` line
// on stderr (and an entry in --json's `warnings`); the manifest is still valid and the exit code
// 0. `task: required`, or an explicit `task: forbidden|optional`, silences it. Spawns the real CLI.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/cli.js';

const MANIFEST = `version: 1
name: warn
description: warnings
profile:
  scopes:
    - { name: notes.write, description: Write. }
    - { name: ops.admin, description: Operate. }
routes: { public: [/svc], protected: [] }
tools:
  - name: notes.add
    description: needs a write scope, says nothing
    required_scopes: [notes.write]
    template: ok
  - name: slow.exec
    description: long timeout, says nothing
    exec: { argv: [/bin/true], timeout_ms: 120000 }
  - name: ops.restart
    description: admin, but runs as a task
    required_scopes: [ops.admin]
    task: required
    template: ok
  - name: ops.ping
    description: admin, explicitly a plain call
    required_scopes: [ops.admin]
    task: forbidden
    template: ok
  - name: quick.exec
    description: short timeout
    exec: { argv: [/bin/true], timeout_ms: 5000 }
`;

describe('svc validate warnings (real CLI)', function () {
  this.timeout(20_000);
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-warn-'));
    file = join(dir, 'svc.yaml');
    writeFileSync(file, MANIFEST);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one warning per tool that should say task:, at its line, and still exits 0', async () => {
    const r = await run(['validate', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /: ok — 5 tools/);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(lines[0]!, new RegExp(`^${file}:10:5: warning: TASK_ADVISED: tool notes.add: it needs scope notes.write;`));
    assert.match(lines[1]!, new RegExp(`^${file}:14:5: warning: TASK_ADVISED: tool slow.exec: its timeout \\(120000 ms\\) exceeds 60000 ms;`));
  });

  it('--json lists the warnings beside valid: true', async () => {
    const r = await run(['validate', file, '--json']);
    assert.equal(r.code, 0);
    const out = JSON.parse(r.stdout) as { valid: boolean; warnings: { code: string; path: string }[] };
    assert.equal(out.valid, true);
    assert.deepEqual(out.warnings.map((w) => [w.code, w.path]), [['TASK_ADVISED', '/tools/0/task'], ['TASK_ADVISED', '/tools/1/task']]);
  });
});
