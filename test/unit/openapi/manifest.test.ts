// The `openapi` source inside a manifest (src/manifest/openapi-sources.ts): expanded tools are
// appended after the written ones with the schema's defaults; their problems are located at the
// manifest field that decided them (scopes, names, the source's credential); skipped operations
// are warnings; the config hash covers the document.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkManifest, loadManifest } from '../../../src/manifest/index.js';
import { uniqueWarnings } from '../../../src/manifest/openapi-sources.js';
import { FIXTURES } from './helpers.js';

describe('openapi sources in a manifest', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oa-manifest-'));
    copyFileSync(join(FIXTURES, 'petstore-3.0.yaml'), join(dir, 'pets.yaml'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (body: string) => {
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, `version: 1\nname: pets\nauth:\n  token: \${SVC_TOKEN:-a-test-token-of-some-length}\nprofile:\n  scopes: [pets.read, pets.write]\n${body}`);
    return file;
  };

  it('appends the tools after the written ones, with the schema defaults filled in', () => {
    const file = write(`tools:\n  - { name: hello, description: hi, template: hi }\nopenapi:\n  - name: pets\n    document: pets.yaml\n    required_scopes: [pets.read]\n`);
    const c = checkManifest(file, {});
    assert.deepEqual(c.problems.map((p) => p.format()), []);
    const tools = c.plan!.manifest.tools!;
    assert.equal(tools[0]!.name, 'hello');
    assert.equal(tools.length, 19);
    const get = tools.find((t) => t.name === 'getPetById')!;
    assert.equal(get.task, 'forbidden');
    assert.equal(get.http!.timeout_ms, 10000);
    assert.deepEqual(get.required_scopes, ['pets.read']);
    assert.equal(c.warnings.length, 1);
    assert.deepEqual(c.locate(c.warnings[0]!.path), { line: 11, col: 15 });
  });

  it('each expanded tool names its source and carries its operation\'s tags; a written tool has neither', async () => {
    const file = write(`tools:\n  - { name: hello, description: hi, template: hi }\nopenapi:\n  - name: pets\n    document: pets.yaml\n    required_scopes: [pets.read]\n`);
    const loaded = await loadManifest(file, {});
    try {
      const get = loaded.svc.tools.get('getPetById')!;
      assert.deepEqual(get.source, { kind: 'openapi', name: 'pets' });
      assert.deepEqual(get.tags, ['pet']);
      const hello = loaded.svc.tools.get('hello')!;
      assert.equal(hello.source, undefined);
      assert.equal(hello.tags, undefined);
    } finally {
      loaded.dispose();
    }
  });

  it('an undeclared scope is SCOPE_UNDECLARED at the source\'s required_scopes, scope_map or override — once', () => {
    const file = write(`openapi:\n  - name: pets\n    document: pets.yaml\n    required_scopes: [pets.nope]\n    scope_map: { "write:pets": [pets.write2] }\n    overrides:\n      deletePet: { required_scopes: [pets.admin] }\n`);
    const c = checkManifest(file, {});
    const got = c.problems.map((p) => `${p.code}@${p.line}:${p.message.replace(/^tool \S+ requires /, '').replace(/ \(and \d+ more tools made by the same line\)/, '')}`).sort();
    assert.deepEqual(got, [
      'SCOPE_UNDECLARED@10:scope pets.nope, which profile.scopes does not declare',
      'SCOPE_UNDECLARED@11:scope pets.write2, which profile.scopes does not declare',
      'SCOPE_UNDECLARED@13:scope pets.admin, which profile.scopes does not declare',
    ]);
  });

  it('an expanded tool named like a written one is DUPLICATE_NAME at the source', () => {
    const file = write(`tools:\n  - { name: getPetById, description: mine, template: x }\nopenapi:\n  - name: pets\n    document: pets.yaml\n    naming: "{operationId}"\n`);
    const c = checkManifest(file, {});
    const dup = c.problems.find((p) => p.code === 'DUPLICATE_NAME');
    assert.ok(dup, c.problems.map((p) => p.format()).join('\n'));
    assert.equal(dup.line, 10);
  });

  it('a credential written in clear in the source is SECRET_LITERAL once, at the source\'s auth', () => {
    const file = write(`openapi:\n  - name: pets\n    document: pets.yaml\n    auth: { static: { bearer: plain-secret-value } }\n`);
    const c = checkManifest(file, {});
    const secrets = c.problems.filter((p) => p.code === 'SECRET_LITERAL');
    assert.equal(secrets.length, 1);
    assert.equal(secrets[0]!.line, 10);
  });

  it('a broken document is reported at the document\'s own line', () => {
    copyFileSync(join(FIXTURES, 'edge-broken.yaml'), join(dir, 'broken.yaml'));
    const file = write(`openapi:\n  - name: pets\n    document: broken.yaml\n`);
    const [p] = checkManifest(file, {}).problems;
    assert.equal(p!.code, 'OPENAPI_INVALID');
    assert.equal(p!.file, join(dir, 'broken.yaml'));
    assert.equal(p!.line, 5);
  });

  it('the config hash changes with the document, and only with it', () => {
    const file = write(`openapi:\n  - name: pets\n    document: pets.yaml\n`);
    const a = checkManifest(file, {}).hash;
    assert.equal(checkManifest(file, {}).hash, a);
    appendFileSync(join(dir, 'pets.yaml'), '\n# a comment\n');
    assert.notEqual(checkManifest(file, {}).hash, a);
  });

  it('per-tool advice at one place is said once; each skipped operation keeps its own warning', () => {
    const at = { line: 9, col: 5 };
    const out = uniqueWarnings([
      { code: 'TASK_ADVISED', ...at, message: 'tool a: it needs scope x.write' },
      { code: 'TASK_ADVISED', ...at, message: 'tool b: it needs scope x.write' },
      { code: 'OPENAPI_SKIPPED', ...at, message: 'openapi s: POST /a is not served' },
      { code: 'OPENAPI_SKIPPED', ...at, message: 'openapi s: POST /b is not served' },
    ]);
    assert.deepEqual(out.map((w) => w.message), [
      'tool a: it needs scope x.write (and 1 more tool made by the same line)',
      'openapi s: POST /a is not served',
      'openapi s: POST /b is not served',
    ]);
  });
});
