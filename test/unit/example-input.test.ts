// The example bodies /docs puts in its curl snippets: built from the input schema
// (examples, const, default, enum, typed placeholders), and accepted by the tool's own
// input validator for every tool of the root svc.yaml and every examples/* manifest.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCatalog, newInputAjv } from '../../src/core/catalog.js';
import { exampleInput } from '../../src/http/example-input.js';
import { loadManifest } from '../../src/manifest/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MANIFESTS = ['svc.yaml', ...readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(ROOT, 'examples', d.name, 'svc.yaml')))
  .map((d) => `examples/${d.name}/svc.yaml`)];

/** Secrets a manifest takes from the environment (${VAR} with no default) get a placeholder, as an operator would set them. */
function envFor(file: string): NodeJS.ProcessEnv {
  const vars = [...readFileSync(file, 'utf8').matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((x) => x[1]!);
  return { ...process.env, ...Object.fromEntries(vars.map((v) => [v, 'placeholder-secret-value'])) };
}

describe('example input for /docs', () => {
  it('prefers the schema author’s own values: examples, const, default, enum', () => {
    assert.deepEqual(exampleInput({
      type: 'object',
      properties: {
        a: { type: 'string', examples: ['Ada'], default: 'x' },
        b: { const: 3 },
        c: { type: 'integer', default: 7 },
        d: { enum: ['red', 'green'] },
        e: { type: 'string' },
      },
      required: ['a', 'b', 'c', 'd'],
    }), { a: 'Ada', b: 3, c: 7, d: 'red' });
  });

  it('makes typed placeholders that meet the constraints', () => {
    assert.deepEqual(exampleInput({
      type: 'object',
      required: ['s', 'short', 'n', 'm', 'f', 'mail', 'when', 'list', 'nested', 'flag'],
      properties: {
        s: { type: 'string', minLength: 10 },
        short: { type: 'string', maxLength: 3 },
        n: { type: 'integer', minimum: 5, multipleOf: 2 },
        m: { type: 'number', exclusiveMinimum: 0 },
        f: { type: ['null', 'number'], maximum: -2 },
        mail: { type: 'string', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        list: { type: 'array', items: { type: 'string' }, minItems: 2, uniqueItems: true },
        nested: { type: 'object', properties: { id: { $ref: '#/$defs/id' } }, required: ['id'] },
        flag: { type: 'boolean' },
      },
      $defs: { id: { type: 'integer', minimum: 1 } },
    }), {
      s: 'examplexxx', short: 'exa', n: 6, m: 1, f: -2, mail: 'user@example.com', when: '2025-01-31T12:00:00Z',
      list: ['example', 'example2'], nested: { id: 1 }, flag: false,
    });
    assert.deepEqual(exampleInput({ anyOf: [{ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, { type: 'string' }] }), { q: 'example' });
    assert.deepEqual(exampleInput(undefined), {});
  });

  it('every generated example passes a strict validator of its schema', () => {
    const validate = newInputAjv().compile({
      type: 'object', additionalProperties: false, required: ['a', 'b', 'c'],
      properties: { a: { type: 'string', format: 'uuid' }, b: { allOf: [{ type: 'integer' }, { minimum: 3 }] }, c: { type: 'array', minItems: 1, items: { type: 'number', exclusiveMaximum: -1 } } },
    });
    const body = exampleInput(validate.schema);
    assert.equal(validate(structuredClone(body)), true, JSON.stringify(validate.errors));
  });

  for (const m of MANIFESTS) {
    it(`passes the tool's own input validator for every tool of ${m}`, async () => {
      const file = join(ROOT, m);
      const loaded = await loadManifest(file, envFor(file));
      try {
        const cat = buildCatalog(loaded.svc);
        assert.ok(cat.tools.size > 0, `${m} declares tools`);
        for (const [name, entry] of cat.tools) {
          const body = exampleInput(entry.def.input_schema);
          assert.equal(entry.validate(structuredClone(body)), true, `${m} ${name}: ${JSON.stringify(body)} → ${JSON.stringify(entry.validate.errors)}`);
        }
      } finally {
        loaded.dispose();
      }
    });
  }
});
