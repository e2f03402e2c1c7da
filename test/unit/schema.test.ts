// Checks that keep the project honest: generated types match the schema, every
// schema property is documented, every error code is documented in the registry
// and in the error reference's tables (docs/reference/errors.md, generated from the
// registry: test/unit/docs-reference.test.ts keeps it fresh), and no test file is
// focused or skipped.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODES } from '../../src/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Schema = { [k: string]: unknown };

/** Every property of every (sub)schema, walking only schema-valued keywords. */
function undocumentedProperties(root: Schema): string[] {
  const definitions = (root.definitions ?? {}) as Record<string, Schema>;
  const resolve = (s: Schema): Schema | undefined => (typeof s.$ref === 'string' ? definitions[s.$ref.split('/').pop()!] : undefined);
  const out: string[] = [];
  const visit = (s: unknown, path: string): void => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    const node = s as Schema;
    for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, Schema>)) {
      const desc = prop.description ?? resolve(prop)?.description;
      if (typeof desc !== 'string' || desc.trim() === '') out.push(`${path}.properties.${name}`);
      visit(prop, `${path}.properties.${name}`);
    }
    for (const k of ['items', 'additionalProperties', 'not', 'if', 'then', 'else']) visit(node[k], `${path}.${k}`);
    for (const k of ['anyOf', 'oneOf', 'allOf']) (node[k] as unknown[] | undefined)?.forEach((x, i) => visit(x, `${path}.${k}[${i}]`));
    for (const [name, def] of Object.entries((node.definitions ?? {}) as Record<string, Schema>)) visit(def, `${path}.definitions.${name}`);
  };
  visit(root, '#');
  return out;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : testFiles(p);
    return /\.(ts|mts|js|mjs)$/.test(d.name) ? [p] : [];
  });
}

describe('project checks', () => {
  it('src/core/manifest-types.gen.ts is not stale (scripts/gen-types.mjs --check) and declares each type once', () => {
    const r = spawnSync(process.execPath, ['scripts/gen-types.mjs', '--check'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, `gen-types --check failed:\n${r.stderr}${r.stdout}`);
    const names = [...readFileSync(join(ROOT, 'src/core/manifest-types.gen.ts'), 'utf8').matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1]!);
    assert.deepEqual(names.filter((n) => /\D\d+$/.test(n) && names.includes(n.replace(/\d+$/, ''))), [], 'numbered copies of a type (ServerSettings1, …)');
  });

  it('every property in schema/svc.schema.json has a description', () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schema', 'svc.schema.json'), 'utf8')) as Schema;
    const offenders = undocumentedProperties(schema);
    assert.deepEqual(offenders, [], `properties without a description:\n  ${offenders.join('\n  ')}`);
  });

  it('the description walker finds an undocumented property (it can fail)', () => {
    const offenders = undocumentedProperties({
      properties: { ok: { description: 'x', type: 'string' }, bare: { type: 'string' }, ref: { $ref: '#/definitions/D' } },
      definitions: { D: { description: 'd', type: 'object', properties: { inner: { type: 'integer' } } } },
    });
    assert.deepEqual(offenders.sort(), ['#.definitions.D.properties.inner', '#.properties.bare']);
  });

  it('every error code has a doc line', () => {
    const missing = Object.entries(CODES).filter(([, info]) => typeof info.doc !== 'string' || info.doc.trim() === '').map(([code]) => code);
    assert.deepEqual(missing, []);
  });

  it("every error code has a row in docs/reference/errors.md's tables", () => {
    const page = join(ROOT, 'docs', 'reference', 'errors.md');
    assert.ok(existsSync(page), 'docs/reference/errors.md does not exist: run npm run gen:docs');
    const rows = readFileSync(page, 'utf8').split('\n').filter((l) => l.trimStart().startsWith('|'));
    const missing = Object.keys(CODES).filter((code) => !rows.some((r) => r.startsWith(`| \`${code}\` |`)));
    assert.deepEqual(missing, [], `codes missing from docs/reference/errors.md: ${missing.join(', ')}`);
  });

  it('no test file is focused or skipped', () => {
    // Built from parts so this file does not match itself.
    const focused = new RegExp('\\b(describe|it|context|specify|suite|test)\\.(' + 'only|' + 'skip)\\s*\\(');
    const bare = new RegExp('\\b(xit|xdescribe|xcontext)\\s*\\(');
    const offenders = testFiles(join(ROOT, 'test')).filter((f) => {
      const text = readFileSync(f, 'utf8');
      return focused.test(text) || bare.test(text);
    });
    assert.deepEqual(offenders.map((f) => f.slice(ROOT.length)), []);
  });
});
