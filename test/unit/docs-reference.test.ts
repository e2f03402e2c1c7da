// The generated references (docs/reference/*.md, by scripts/gen-docs.mjs) cannot drift: `--check` passes on the
// repository and fails, naming the page, when the schema, the error registry or the command table's help text
// changes without regenerating; and the manifest page has one row for every property the manifest can hold.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAGES, pages, stalePages } from '../../scripts/gen-docs.mjs';
import { MANIFEST_CODES, REQUEST_CODES } from '../../src/errors.js';
import { helpPages } from '../../src/cli/main.js';
import { WARNINGS } from '../../src/manifest/warnings.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCHEMA_FILE = join(ROOT, 'schema', 'svc.schema.json');

type Schema = { [k: string]: unknown };

function genDocs(...args: string[]) {
  return spawnSync(process.execPath, ['scripts/gen-docs.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });
}

function realInputs() {
  return { schema: JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Schema, codes: { manifest: MANIFEST_CODES, requests: REQUEST_CODES, warnings: WARNINGS }, help: helpPages() };
}

/** The name of every property of every object schema the manifest reaches, each schema counted once (as the page documents it). */
function propertyNames(root: Schema): string[] {
  const definitions = root.definitions as Record<string, Schema>;
  const seen = new Set<string>();
  const names: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const s = node as Schema;
    if (typeof s.$ref === 'string') {
      const name = s.$ref.split('/').pop()!;
      if (!seen.has(name)) {
        seen.add(name);
        visit(definitions[name]);
      }
    }
    const props = (s.properties ?? {}) as Record<string, Schema>;
    names.push(...Object.keys(props));
    Object.values(props).forEach(visit);
    for (const k of ['items', 'additionalProperties', 'oneOf', 'anyOf']) visit(s[k]);
  };
  visit({ properties: root.properties });
  return names.sort();
}

/** The last segment of the field named by each table row of the manifest page. */
function rowFieldNames(page: string): string[] {
  return [...page.matchAll(/^\| `([^`]+)`( \*\*\(required\)\*\*)? \|/gm)].map((m) => m[1]!.split('.').pop()!).sort();
}

describe('generated references (docs/reference/)', () => {
  it('no page is stale (scripts/gen-docs.mjs --check)', () => {
    const r = genDocs('--check');
    assert.equal(r.status, 0, `gen-docs --check failed:\n${r.stderr}${r.stdout}`);
  });

  it('--check fails naming the manifest page when a schema description changes (a copy of the schema)', () => {
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'));
    schema.definitions.ServerSettings.properties.port.description += ' Changed.';
    const dir = mkdtempSync(join(tmpdir(), 'gen-docs-'));
    try {
      const file = join(dir, 'svc.schema.json');
      writeFileSync(file, JSON.stringify(schema));
      const r = genDocs('--check', '--schema', file);
      assert.equal(r.status, 1, r.stderr);
      assert.deepEqual(r.stderr.trim().split('\n'), [`${PAGES.manifest} is stale: run npm run gen:docs`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the same inputs are not stale, and each changed input makes exactly its page stale', () => {
    const real = realInputs();
    assert.deepEqual(stalePages(pages(real)), []);

    const requests = { ...REQUEST_CODES, NOT_READY: { ...REQUEST_CODES.NOT_READY, doc: 'The server is starting.' } };
    assert.deepEqual(stalePages(pages({ ...real, codes: { ...real.codes, requests } })), [PAGES.errors]);
    const withNewCode = { ...MANIFEST_CODES, NEW_CODE: { status: 400, rpc: -32602, doc: 'A code nobody documented.' } };
    assert.deepEqual(stalePages(pages({ ...real, codes: { ...real.codes, manifest: withNewCode } })), [PAGES.errors]);
    const warnings = { ...WARNINGS, NEW_ADVICE: 'A warning nobody documented.' };
    assert.deepEqual(stalePages(pages({ ...real, codes: { ...real.codes, warnings } })), [PAGES.errors]);

    const [first, ...rest] = real.help.commands;
    const help = { ...real.help, commands: [{ ...first!, help: `${first!.help}\n  --new       an option nobody documented` }, ...rest] };
    assert.deepEqual(stalePages(pages({ ...real, help })), [PAGES.cli]);

    const schema = structuredClone(real.schema) as { definitions: Record<string, { properties: Record<string, Schema> }> };
    schema.definitions.Limit!.properties.requests!.default = 100;
    assert.deepEqual(stalePages(pages({ ...real, schema })), [PAGES.manifest]);
  });

  it('the manifest page has a row for every property the manifest can hold, once', () => {
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Schema;
    const expected = propertyNames(schema);
    assert.ok(expected.includes('burst') && expected.includes('file'), 'the walk reaches nested objects and oneOf alternatives');
    assert.deepEqual(rowFieldNames(readFileSync(join(ROOT, PAGES.manifest), 'utf8')), expected);
  });
});
