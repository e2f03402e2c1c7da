// input-schemas.ts: the cheap load-time check refuses what ajv's compile would refuse for
// the schemas operators write, and a catalog compiles a validator only on a tool's first
// call, once per distinct schema text, that validator still refusing bad input.

import assert from 'node:assert/strict';
import { checkInputSchema, InputValidators } from '../../src/core/input-schemas.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { throwsWithCode } from '../helpers/errors.js';

const fresh = (s: object) => structuredClone(s) as object;

describe('input schemas: cheap check, lazy and shared validators', () => {
  it('check() refuses a bad type, an unknown keyword (nested too), a bad pattern and an unknown format', () => {
    for (const [schema, why] of [
      [{ type: 'objekt' }, /schema is invalid/],
      [{ type: 'object', propertiez: {} }, /unknown keyword: "propertiez"/],
      [{ type: 'object', properties: { a: { type: 'array', items: { type: 'string', maxLenght: 3 } } } }, /unknown keyword: "maxLenght"/],
      [{ type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } }, /not a valid regular expression/],
      [{ type: 'object', patternProperties: { '([': { type: 'string' } } }, /not a valid regular expression/],
      [{ type: 'object', properties: { a: { type: 'string', format: 'emial' } } }, /unknown format "emial"/],
      [{ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', prefixItems: [{ typ: 'x' }] }, /unknown keyword: "typ"/],
    ] as const) assert.throws(() => checkInputSchema(fresh(schema)), why, JSON.stringify(schema));
  });

  it('check() accepts what the tools of a generated OpenAPI-like catalog use', () => {
    checkInputSchema(fresh({ type: 'object', properties: { id: { type: 'string', pattern: '^[a-z0-9-]+$', maxLength: 64, description: 'x' }, when: { type: 'string', format: 'date-time' },
      tags: { type: 'array', items: { type: 'string' }, uniqueItems: true }, body: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'], additionalProperties: false },
      x: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, h: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['id'], additionalProperties: false }));
  });

  it('compiles on first use, once per distinct schema text, and the lazy validator refuses bad input every time', () => {
    const v = new InputValidators();
    const a = { type: 'object', properties: { n: { type: 'integer', maximum: 3 } }, required: ['n'] };
    assert.equal(v.compiled, 0);
    const first = v.get(fresh(a), 't1');
    assert.equal(v.get(fresh(a), 't2'), first, 'an identical schema shares the validator');
    assert.equal(v.compiled, 1);
    v.get({ ...fresh(a), required: [] }, 't3');
    assert.equal(v.compiled, 2);
    for (let i = 0; i < 3; i++) {
      assert.equal(first({ n: 4 }), false);
      assert.equal(first.errors?.[0]?.keyword, 'maximum');
      assert.equal(first({ n: 3 }), true);
    }
  });

  it('a catalog refuses an invalid schema when built; a lazy validator works on first and later use', () => {
    const svc = new FastSvc({ name: 'lazy', description: 'lazy' });
    for (let i = 0; i < 3; i++) svc.tool({ name: `t${i}`, description: 'x', input_schema: { type: 'object', properties: { [`p${i}`]: { type: 'string', maxLength: i + 1 } }, required: [`p${i}`] }, handler: async () => 'ok' });
    const cat = buildCatalog(svc);
    const t1 = cat.tools.get('t1')!;
    assert.equal(t1.validate({ p1: 'abc' }), false);
    assert.equal(t1.validate({ p1: 'ab' }), true);
    assert.equal(t1.validate, t1.validate, 'the same compiled validator on every use');
    const bad = new FastSvc({ name: 'bad', description: 'bad' });
    bad.tool({ name: 'b', description: 'x', input_schema: { type: 'object', propertiez: {} } as never, handler: async () => 'ok' });
    throwsWithCode(() => buildCatalog(bad), 'INPUT_SCHEMA_INVALID');
  });
});
