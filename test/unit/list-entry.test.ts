// list-entry.ts: a listing longer than one list page is listed in short — a tool's output schema
// left out first, then its input schema cut to the deepest level that fits (a note in its
// description), then its description and title shortened — always within the page, and a cut
// schema never refuses what the whole one accepts (checked with ajv over many page sizes).

import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { fitListing, toolListing } from '../../src/core/list-entry.js';
import { checkInputSchema } from '../../src/core/input-schemas.js';

const deep = (levels: number): Record<string, unknown> => (levels === 0
  ? { type: 'string', maxLength: 5 }
  : { type: 'object', properties: Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`p${i}`, deep(levels - 1)])), required: ['p0'], additionalProperties: false });

const page = (listing: Record<string, unknown>) => JSON.stringify([listing]).length;

describe('a listing longer than a list page is listed in short', () => {
  it('a listing that fits is the same object', () => {
    const l = toolListing({ name: 't', description: 'd' }, { type: 'object' });
    assert.equal(fitListing(l, 1024).listing, l);
    assert.equal(fitListing(l, 1024).shortened, undefined);
  });

  it('a tool\'s output schema goes first, when that is enough', () => {
    const l = toolListing({ name: 't', description: 'd', output_schema: deep(4) }, { type: 'object', properties: { a: { type: 'string' } } });
    const f = fitListing(l, 1024);
    assert.equal(f.shortened, 'its output schema left out');
    assert.equal(f.listing.outputSchema, undefined);
    assert.deepEqual(f.listing.inputSchema, l.inputSchema);
  });

  it('then its input schema is cut to the deepest level that fits, its description saying so', () => {
    const l = toolListing({ name: 't', description: 'A tool.' }, deep(5));
    const f = fitListing(l, 2048);
    assert.ok(page(f.listing as Record<string, unknown>) <= 2048);
    assert.match(f.shortened!, /its input schema cut 2 levels down/);
    assert.match(String(f.listing.description), /^A tool\. \(Listed in short: its input schema is cut to fit a list page\. A call is checked against the whole schema\.\)$/);
    const cut = f.listing.inputSchema as { properties: Record<string, { properties: Record<string, unknown> }>; required: string[] };
    assert.deepEqual(cut.required, ['p0']);
    assert.deepEqual(cut.properties.p0!.properties.p0, { type: 'object' }, 'below the cut, a subschema is its type alone');
    checkInputSchema(cut);
  });

  it('its description and title are shortened last, the note kept, however they are escaped', () => {
    const text = '"quoted"\n\\ and ünïcödé '.repeat(300);
    const l = toolListing({ name: 't', title: text, description: text }, deep(6));
    for (const bytes of [1024, 1500, 3000, 9000]) {
      const f = fitListing(l, bytes);
      assert.ok(page(f.listing as Record<string, unknown>) <= bytes, `${bytes}: ${page(f.listing as Record<string, unknown>)}`);
      assert.match(String(f.listing.description), /A call is checked against the whole schema\.\)$/);
    }
  });

  it('a cut schema accepts every value the whole one accepts (not, if/then, oneOf, patternProperties, $ref)', () => {
    const whole = {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['a', 'b'] },
        not: { not: { type: 'object', properties: { x: { not: { type: 'string' } } } } },
        cond: { type: 'object', if: { properties: { k: { const: 'a' } } }, then: { required: ['a'] }, else: { required: ['b'] } },
        one: { oneOf: [{ type: 'object', properties: { v: { type: 'string' } }, required: ['v'] }, { type: 'object', properties: { w: { type: 'number' } }, required: ['w'] }] },
        pats: { type: 'object', patternProperties: { '^x-': { type: 'object', properties: { y: { type: 'integer' } } } }, additionalProperties: false },
        tree: { $ref: '#/definitions/node' },
      },
      definitions: { node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/definitions/node' } } } } },
      additionalProperties: false,
    };
    const values = [
      { kind: 'a' },
      { not: 5, cond: { k: 'a', a: 1 }, one: { v: 's' }, pats: { 'x-1': { y: 2 } }, tree: { kids: [{ kids: [] }] } },
      { cond: { k: 'b', b: 1 }, one: { w: 3 }, pats: {}, not: { x: 'str' } },
    ];
    const ajv = new Ajv({ strict: false });
    for (const v of values) assert.ok(ajv.validate(whole, v), JSON.stringify(v));
    for (let bytes = 1024; bytes < 3000; bytes += 97) {
      const f = fitListing(toolListing({ name: 't', description: 'x'.repeat(700) }, whole), bytes);
      const cut = f.listing.inputSchema as object;
      for (const v of values) assert.ok(ajv.validate(cut, v), `${bytes}: ${JSON.stringify(cut)} refuses ${JSON.stringify(v)}`);
      assert.ok(page(f.listing as Record<string, unknown>) <= bytes);
    }
  });
});
