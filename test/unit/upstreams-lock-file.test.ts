// The pin lock file (src/upstreams/pin/lock-file.ts): named after the manifest beside it; written
// atomically (rename over the old file, no temp file left) in one canonical text whatever the
// order things were added in; read back to what was written; a missing file is "nothing
// accepted yet", an unreadable one FILE_UNREADABLE, and every corruption LOCK_INVALID — bad
// JSON (with its line), an unknown member, another version, a digest that no longer matches
// its hand-edited definition, a definition filed under another key.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockPathFor, parseLock, readLock, serializeLock, withUpstream, writeLock } from '../../src/upstreams/pin/lock-file.js';
import { lockEntryFor } from '../../src/upstreams/pin/pin-listing.js';
import { throwsWithCode } from '../helpers/errors.js';

const ECHO = { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } };
const ADD = { name: 'add', description: 'Adds.' };
const LOCK = withUpstream(withUpstream(undefined, 'b', lockEntryFor({ tools: [ECHO, ADD] }).entry), 'a', lockEntryFor({ prompts: [{ name: 'p' }] }).entry);

describe('upstream pin lock file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is named after the manifest, in its folder', () => {
    assert.equal(lockPathFor('/srv/app/svc.yaml'), '/srv/app/svc.lock.json');
    assert.equal(lockPathFor('/srv/app/prod.yml'), '/srv/app/prod.lock.json');
    assert.equal(lockPathFor('manifest'), 'manifest.lock.json');
  });

  it('has one text for one content: keys sorted at every depth, two-space indent, final newline', () => {
    const other = withUpstream(withUpstream(undefined, 'a', lockEntryFor({ prompts: [{ name: 'p' }] }).entry), 'b', lockEntryFor({ tools: [ADD, { inputSchema: ECHO.inputSchema, description: 'Echoes.', name: 'echo' }] }).entry);
    const text = serializeLock(LOCK);
    assert.equal(serializeLock(other), text);
    assert.ok(text.endsWith('}\n'));
    assert.ok(text.indexOf('"a"') < text.indexOf('"b"'));
    assert.ok(text.indexOf('"add"') < text.indexOf('"echo"'));
    assert.match(text, /^\{\n {2}"upstreams": \{\n {4}"a": \{/);
    assert.match(text, /\n {2}"version": 1\n\}\n$/);
  });

  it('is written atomically: renamed over the old file, no temp file left, read back as written', () => {
    const file = join(dir, 'svc.lock.json');
    writeFileSync(file, 'old');
    const before = statSync(file).ino;
    writeLock(file, LOCK);
    assert.notEqual(statSync(file).ino, before, 'a new file took the old one\'s name');
    assert.deepEqual(readdirSync(dir), ['svc.lock.json']);
    assert.equal(readFileSync(file, 'utf8'), serializeLock(LOCK));
    assert.deepEqual(readLock(file), JSON.parse(JSON.stringify(LOCK)));
  });

  it('a write that cannot happen throws and leaves the old lock as it was', () => {
    const file = join(dir, 'svc.lock.json');
    writeLock(file, LOCK);
    assert.throws(() => writeLock(join(dir, 'missing', 'svc.lock.json'), LOCK), { code: 'ENOENT' });
    assert.equal(readFileSync(file, 'utf8'), serializeLock(LOCK));
  });

  it('a missing file reads as nothing accepted; a folder in its place is FILE_UNREADABLE', () => {
    assert.equal(readLock(join(dir, 'svc.lock.json')), undefined);
    throwsWithCode(() => readLock(dir), 'FILE_UNREADABLE');
  });

  const valid = () => JSON.parse(serializeLock(LOCK));
  const cases: [string, (doc: any) => string, string?][] = [
    ['text that is not JSON (with its line)', () => '{\n  "version": 1,\n  "upstreams": {,\n}', '3'],
    ['an unknown top-level member', (d) => JSON.stringify({ ...d, extra: 1 }), '/extra'],
    ['another version', (d) => JSON.stringify({ ...d, version: 2 }), '/version'],
    ['upstreams that are not an object', (d) => JSON.stringify({ ...d, upstreams: [] }), '/upstreams'],
    ['an unknown list', (d) => JSON.stringify({ ...d, upstreams: { b: { ...d.upstreams.b, widgets: {} } } }), '/upstreams/b/widgets'],
    ['a description edited by hand (the digest no longer matches)', (d) => {
      d.upstreams.b.tools.echo.definition.description = 'Edited.';
      return JSON.stringify(d);
    }, '/upstreams/b/tools/echo/digest'],
    ['a digest edited by hand', (d) => {
      d.upstreams.b.tools.echo.digest = 'sha256:' + '0'.repeat(64);
      return JSON.stringify(d);
    }, '/upstreams/b/tools/echo/digest'],
    ['a definition filed under another key', (d) => {
      d.upstreams.b.tools.other = d.upstreams.b.tools.echo;
      return JSON.stringify(d);
    }, '/upstreams/b/tools/other/definition/name'],
    ['an extra member beside digest and definition', (d) => {
      d.upstreams.b.tools.echo.accepted_by = 'me';
      return JSON.stringify(d);
    }, '/upstreams/b/tools/echo'],
  ];
  for (const [what, corrupt, where] of cases) {
    it(`refuses ${what}: LOCK_INVALID`, () => {
      const file = join(dir, 'svc.lock.json');
      writeFileSync(file, corrupt(valid()));
      const e = throwsWithCode(() => readLock(file), 'LOCK_INVALID');
      assert.equal(e.file, file);
      if (where?.startsWith('/')) assert.equal(e.path, where);
      else assert.equal(String(e.line), where);
    });
  }

  it('keeps an upstream or definition named __proto__ as a member of its own', () => {
    const lock = withUpstream(undefined, '__proto__', lockEntryFor({ tools: [{ name: '__proto__' }] }).entry);
    const back = parseLock(serializeLock(lock), 'svc.lock.json');
    assert.deepEqual(Object.keys(back.upstreams), ['__proto__']);
    assert.deepEqual(Object.keys(back.upstreams['__proto__']!.tools!), ['__proto__']);
    assert.equal(Object.getPrototypeOf(back.upstreams), Object.prototype);
  });
});
