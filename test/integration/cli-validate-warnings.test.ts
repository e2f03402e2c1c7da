// `svc validate` warnings: a tool needing an *.admin or *.write scope, or with a backend timeout
// over 60 s, that does not say `task:` gets one `FILE:LINE:COL: warning: TASK_ADVISED: …` line
// on stderr (and an entry in --json's `warnings`); the manifest is still valid and the exit code
// 0. `task: required`, or an explicit `task: forbidden|optional`, silences it. On a manifest that
// serves others (here: people sign in), a tool that may change something and writes no
// required_scopes gets `warning: SCOPE_ADVISED` at the tool; scopes, readOnlyHint or an explicit
// `required_scopes: []` silence it, and the same tools behind a static token alone get none.
// Spawns the real CLI.

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
    exec: { argv: [/bin/true] }
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

// The demo hash of "change-me-now" (examples/oauth-sqlite).
const HASH = 'scrypt$32768$8$1$gg8gtRd6W1QYC2-dhqbLvQ$XIS9HHOtkU1jTy7iDJNyOAs1BiG9oz3QAFjea_Ioej4';

const TOOLS = `tools:
  - name: notes.purge
    description: runs a program, no scope
    exec: { argv: [/bin/true] }
  - name: notes.count
    description: runs a program that only reads
    annotations: { readOnlyHint: true }
    exec: { argv: [/bin/true] }
  - name: notes.add
    description: scoped
    required_scopes: [notes.add]
    http: { method: POST, url: "https://notes.example/add" }
  - name: notes.feedback
    description: open to every caller on purpose
    required_scopes: []
    http: { method: POST, url: "https://notes.example/feedback" }
  - name: notes.export
    description: writes files, no scope
    input_schema: { type: object, properties: { path: { type: string }, content: { type: string } } }
    fs: { root: ., op: write }
`;

const HOSTED = `version: 1
name: hosted-warn
description: scope warnings
oauth:
  enabled: true
  login: { mode: users }
  users: [{ username: ada, password_hash: "${HASH}" }]
profile:
  scopes: [notes.add]
${TOOLS}`;

const BEARER = `version: 1
name: bearer-warn
description: the same tools behind a static token
auth: { token: "\${SVC_TOKEN:-t}" }
profile:
  scopes: [notes.add]
${TOOLS}`;

describe('svc validate warnings (real CLI)', function () {
  this.timeout(20_000);
  let dir: string;
  let file: string;
  let hosted: string;
  let bearer: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-warn-'));
    file = join(dir, 'svc.yaml');
    writeFileSync(file, MANIFEST);
    hosted = join(dir, 'hosted.yaml');
    writeFileSync(hosted, HOSTED);
    bearer = join(dir, 'bearer.yaml');
    writeFileSync(bearer, BEARER);
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

  it('SCOPE_ADVISED: one line per unscoped tool that may change something, on a server people sign in to; exit 0', async () => {
    const r = await run(['validate', hosted, '--no-io']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /: ok — 5 tools/);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    const served = 'needs no scope while this server serves others: people sign in to it \\(oauth\\.login\\.mode: users\\)';
    assert.match(lines[0]!, new RegExp(`^${hosted}:11:5: warning: SCOPE_ADVISED: tool notes\\.purge: it runs a program \\(exec\\), which may change anything, and ${served}; declare required_scopes, annotations\\.readOnlyHint: true if it only reads, or required_scopes: \\[\\] to leave it open`));
    assert.match(lines[1]!, new RegExp(`^${hosted}:26:5: warning: SCOPE_ADVISED: tool notes\\.export: it writes files \\(fs op: write\\), and ${served}; declare required_scopes, or required_scopes: \\[\\]`));
    const json = await run(['validate', hosted, '--no-io', '--json']);
    assert.equal(json.code, 0);
    const out = JSON.parse(json.stdout) as { valid: boolean; warnings: { code: string; path: string; line: number; col: number }[] };
    assert.equal(out.valid, true);
    assert.deepEqual(out.warnings.map((w) => [w.code, w.path, w.line, w.col]), [['SCOPE_ADVISED', '/tools/0/required_scopes', 11, 5], ['SCOPE_ADVISED', '/tools/4/required_scopes', 26, 5]]);
  });

  it('SCOPE_ADVISED: the same tools behind a static token alone get no warning', async () => {
    const r = await run(['validate', bearer, '--no-io']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });
});
