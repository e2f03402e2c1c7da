// `svc diff OLD NEW` through the real command line: the capability changes, the per-scope
// and per-token gains and losses (the reloader's diff), and the exit code of
// --fail-on-widen (3 when some scope or token gains access, 0 when access only narrows).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, run } from '../helpers/cli.js';

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
// notes.list now needs notes.write; notes.search is new for readers; ping is gone.
const NEW = head + tool('notes.list', ['notes.write']) + tool('notes.search', ['notes.read']);
// Only narrows: ping is gone.
const NARROW = head + tool('notes.list', ['notes.read']);

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

  it('--json gives the capability changes, per-scope and per-token gains and losses, and widened', async () => {
    const r = await run(['diff', file('old.yaml', OLD), file('new.yaml', NEW), '--json'], { env: childEnv() });
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout);
    assert.deepEqual(d.changes.tools, { added: ['notes.search'], removed: ['ping'], changed: ['notes.list'] });
    assert.deepEqual(d.access, {
      '*': { gained: [], lost: ['tool:ping'] },
      'notes.read': { gained: ['tool:notes.search'], lost: ['tool:notes.list'] },
      'notes.write': { gained: ['tool:notes.list'], lost: [] },
    });
    assert.deepEqual(d.tokens, {
      operator: { gained: ['tool:notes.search'], lost: ['tool:ping'] },
      reader: { gained: ['tool:notes.search'], lost: ['tool:notes.list', 'tool:ping'] },
      writer: { gained: ['tool:notes.search'], lost: ['tool:ping'] },
    });
    assert.equal(d.widened, true);
    assert.ok(!r.stdout.includes('token-0123456789'), 'no token value is printed');
  });

  it('text output names the same changes, one line each', async () => {
    const r = await run(['diff', file('old.yaml', OLD), file('new.yaml', NEW)], { env: childEnv() });
    assert.equal(r.code, 0);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], 'capabilities: +tool:notes.search -tool:ping ~tool:notes.list');
    assert.ok(lines.includes('scope notes.read: gains tool:notes.search; loses tool:notes.list'));
    assert.ok(lines.includes('token reader: gains tool:notes.search; loses tool:notes.list tool:ping'));
    assert.equal(lines.at(-1), 'access widened: yes');
  });

  it('--fail-on-widen exits 3 when access widens and 0 when it only narrows', async () => {
    const widen = await run(['diff', file('old.yaml', OLD), file('new.yaml', NEW), '--fail-on-widen'], { env: childEnv() });
    assert.equal(widen.code, 3);
    const narrow = await run(['diff', file('old.yaml', OLD), file('narrow.yaml', NARROW), '--fail-on-widen'], { env: childEnv() });
    assert.equal(narrow.code, 0, narrow.stdout + narrow.stderr);
    assert.match(narrow.stdout, /access widened: no$/m);
  });

  it('an invalid manifest exits 1 with FILE:LINE:COL problems; a missing second argument is a usage error (2)', async () => {
    const bad = await run(['diff', file('old.yaml', OLD), file('bad.yaml', head + tool('x', ['nope']))], { env: childEnv() });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /bad\.yaml:\d+:\d+: SCOPE_UNDECLARED/);
    const usage = await run(['diff', file('old.yaml', OLD)], { env: childEnv() });
    assert.equal(usage.code, 2);
  });
});
