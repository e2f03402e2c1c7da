// `svc diff OLD NEW` through the real command line: the capability changes and who gains or
// loses access (reach.ts), in text and --json; the exit code of --fail-on-widen on issue 28's
// edit (3 for dropping a required scope from the conjunction, 0 for adding one); the GitOps
// way — an old manifest copied to a temporary folder, where the fs root, SQLite database and
// exec program it names do not exist — judged from its policy alone (--io probes them, one
// line per problem); and human lines only: no JSON log line, no stack trace, unless --log-json.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROBLEM_LINE, STACK_FRAME, childEnv, run } from '../helpers/cli.js';

const head = `version: 1
name: diffed
auth:
  token: op-token-0123456789
  tokens:
    - { name: reader, token: reader-token-0123456789, scopes: [notes.read] }
    - { name: writer, token: writer-token-0123456789, scopes: [notes.read, notes.write] }
profile: { scopes: [notes.read, notes.write] }
tools:
`;
const tool = (name: string, scopes: string[]) => `  - { name: ${name}, description: ${name}, template: ${name}, required_scopes: [${scopes.join(', ')}] }\n`;

const OLD = head + tool('notes.list', ['notes.read']) + tool('ping', []);
// notes.list now needs notes.write instead; notes.search is new for readers; ping is gone.
const NEW = head + tool('notes.list', ['notes.write']) + tool('notes.search', ['notes.read']);
// Issue 28: notes.add needs [notes.write, notes.read]; dropping notes.read widens, adding a scope narrows.
const BOTH = head + tool('notes.add', ['notes.write', 'notes.read']);
const WRITE_ONLY = head + tool('notes.add', ['notes.write']);
const NARROWER = head + tool('notes.add', ['notes.write', 'notes.read']) + tool('ping', []);

// What a manifest in a repository names relative to itself; none of it exists next to a copy in /tmp.
const BACKENDS = `  - { name: docs.read, description: d, fs: { root: demo/docs, op: read, path: "{{path}}" }, input_schema: { type: object, required: [path], properties: { path: { type: string } } }, required_scopes: [notes.read] }
  - { name: notes.count, description: c, sqlite: { path: demo/notes.db, query: "select count(*) as n from notes" }, required_scopes: [notes.read] }
  - { name: notes.export, description: e, exec: { argv: [./bin/export-notes] }, required_scopes: [notes.write] }
`;

describe('svc diff', () => {
  let dir: string;
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-diff-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json: the capability changes, and each widening and narrowing with its caller, an example and why', async () => {
    const r = await run(['diff', file('old.yaml', OLD), file('new.yaml', NEW), '--json'], { env: childEnv() });
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(d), ['changes', 'widened', 'widenings', 'narrowings']);
    assert.deepEqual(d.changes.tools, { added: ['notes.search'], removed: ['ping'], changed: ['notes.list'] });
    assert.equal(d.widened, true);
    const pairs = (list: { capability: string; key: string }[]) => list.map((c) => `${c.capability} ${c.key}`);
    assert.deepEqual(pairs(d.widenings), ['tool:notes.list any', 'tool:notes.search any', 'tool:notes.search token:operator', 'tool:notes.search token:reader', 'tool:notes.search token:writer']);
    assert.deepEqual(d.widenings[0], { capability: 'tool:notes.list', key: 'any', caller: 'any caller holding notes.write', example: { scopes: ['notes.write'] }, why: 'requires notes.read → notes.write', exact: true });
    assert.deepEqual(pairs(d.narrowings), ['tool:notes.list any', 'tool:notes.list token:reader', 'tool:ping any', 'tool:ping token:operator', 'tool:ping token:reader', 'tool:ping token:writer']);
    assert.ok(!r.stdout.includes('token-0123456789'), 'no token value is printed');
  });

  it('text: the capability changes, then one line per widening and narrowing, then the verdict', async () => {
    const r = await run(['diff', file('old.yaml', OLD), file('new.yaml', NEW)], { env: childEnv() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), [
      'capabilities: +tool:notes.search -tool:ping ~tool:notes.list',
      'widened: tool:notes.list: any caller holding notes.write — requires notes.read → notes.write',
      'widened: tool:notes.search: any caller holding notes.read; token operator; token reader; token writer — new; requires notes.read',
      'narrowed: tool:notes.list: any caller holding notes.read; token reader — requires notes.read → notes.write',
      'narrowed: tool:ping: any authenticated caller; token operator; token reader; token writer — removed; required no scope',
      'access widened: yes',
    ]);
    assert.equal(r.stderr, '', 'nothing on stderr: no JSON log line');
  });

  it('--fail-on-widen: exit 3 when a required scope is dropped from the conjunction (issue 28), 0 when one is added', async () => {
    const widen = await run(['diff', file('both.yaml', BOTH), file('write-only.yaml', WRITE_ONLY), '--fail-on-widen'], { env: childEnv() });
    assert.equal(widen.code, 3, widen.stdout + widen.stderr);
    assert.match(widen.stdout, /^widened: tool:notes\.add: any caller holding notes\.write — requires notes\.read notes\.write → notes\.write$/m);
    assert.match(widen.stdout, /access widened: yes$/m);
    const narrow = await run(['diff', file('write-only.yaml', WRITE_ONLY), file('both.yaml', BOTH), '--fail-on-widen'], { env: childEnv() });
    assert.equal(narrow.code, 0, narrow.stdout + narrow.stderr);
    assert.doesNotMatch(narrow.stdout, /^widened/m);
    assert.match(narrow.stdout, /^narrowed: tool:notes\.add: any caller holding notes\.write — requires notes\.write → notes\.read notes\.write$/m);
    assert.match(narrow.stdout, /access widened: no$/m);
    // Removing a capability narrows only.
    assert.equal((await run(['diff', file('narrower.yaml', NARROWER), file('both.yaml', BOTH), '--fail-on-widen'], { env: childEnv() })).code, 0);
  });

  it('an upstream whose include grows: the widening names the upstream, who gains and the names added (exit 3 with --fail-on-widen)', async () => {
    const gateway = (include: string) => `${head}  - { name: ping, description: p, template: p }\nupstreams:\n  - { name: vendor, url: "http://127.0.0.1:9/mcp", expose: { prefix: vendor., include: [${include}], required_scopes: [notes.read] } }\n`;
    const r = await run(['diff', file('gw-old.yaml', gateway('echo')), file('gw-new.yaml', gateway('echo, add')), '--fail-on-widen'], { env: childEnv() });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), [
      'capabilities: ~upstream:vendor',
      'widened: upstream:vendor: any caller holding notes.read — expose.include echo → echo add: add (names known at run time only)',
      'access widened: yes',
    ]);
    const json = JSON.parse((await run(['diff', file('gw-old.yaml', gateway('echo')), file('gw-new.yaml', gateway('echo, add')), '--json'], { env: childEnv() })).stdout);
    assert.deepEqual(json.widenings.map((w: { capability: string }) => w.capability), ['upstream:vendor']);
  });

  it('GitOps: an old manifest copied to a temporary folder, naming files that are not there, is judged from its policy alone', async () => {
    const old = file('copied-old.yaml', BOTH + BACKENDS); // as `git show main:svc.yaml > /tmp/old.yaml` leaves it
    const widen = await run(['diff', old, file('copied-new.yaml', WRITE_ONLY + BACKENDS), '--fail-on-widen'], { env: childEnv() });
    assert.equal(widen.code, 3, widen.stdout + widen.stderr);
    assert.equal(widen.stderr, '');
    assert.match(widen.stdout, /^capabilities: ~tool:notes\.add$/m);
    const same = await run(['diff', old, old, '--fail-on-widen'], { env: childEnv() });
    assert.deepEqual([same.code, same.stdout, same.stderr], [0, 'capabilities: no change\naccess widened: no\n', '']);
    const explained = await run(['explain', old, '--token', 'reader'], { env: childEnv() });
    assert.equal(explained.code, 0, explained.stderr);
    assert.match(explained.stdout, /^tool:notes\.count +visible +callable: yes/m);
    // --io opens them as validate does: one line per missing one, exit 1, no stack trace, no JSON.
    const probed = await run(['diff', old, old, '--io'], { env: childEnv() });
    assert.equal(probed.code, 1);
    const lines = probed.stderr.trim().split('\n');
    assert.ok(lines.every((l) => PROBLEM_LINE.test(l) && l.includes('BACKEND_CONFIG')), probed.stderr);
    for (const missing of ['"demo/docs"', '"demo/notes.db"', '"./bin/export-notes"']) assert.equal(lines.filter((l) => l.includes(missing)).length, 2, `${missing}, once per manifest`);
    assert.doesNotMatch(probed.stderr, STACK_FRAME);
  });

  it('errors are human lines: an invalid manifest is FILE:LINE:COL: CODE (exit 1), a missing one too, a missing second argument is usage (2)', async () => {
    const bad = await run(['diff', file('old.yaml', OLD), file('bad.yaml', head + tool('x', ['nope']))], { env: childEnv() });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /bad\.yaml:\d+:\d+: SCOPE_UNDECLARED/);
    const missing = await run(['diff', file('old.yaml', OLD), join(dir, 'absent.yaml')], { env: childEnv() });
    assert.equal(missing.code, 1);
    assert.ok(missing.stderr.trim().split('\n').every((l) => PROBLEM_LINE.test(l)), missing.stderr);
    const usage = await run(['diff', file('old.yaml', OLD)], { env: childEnv() });
    assert.equal(usage.code, 2);
  });

  it('an unexpected failure is one line `fastsvc: CODE: message`; its JSON log line and stack only with --log-json', async () => {
    const quiet = await run(['explain', file('old.yaml', OLD), '--token-file', join(dir, 'no-such-token')], { env: childEnv() });
    assert.equal(quiet.code, 1);
    assert.match(quiet.stderr, /^fastsvc: FILE_UNREADABLE: cannot read .*no-such-token: ENOENT\n$/);
    const logged = await run(['explain', file('old.yaml', OLD), '--token-file', join(dir, 'no-such-token'), '--log-json'], { env: childEnv() });
    assert.equal(logged.code, 1);
    const json = logged.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.equal(json.length, 1, logged.stderr);
    assert.equal(json[0].msg, 'fatal');
  });
});
