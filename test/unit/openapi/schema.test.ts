// schema.ts: OpenAPI 3.0 forms translated (nullable, boolean exclusive bounds, example), keywords
// outside the draft-07/2020-12 common subset dropped, a recursive $ref cut at MAX_RECURSION, a $ref
// into another file inlined; every schema made passes fastsvc's input_schema check.

import assert from 'node:assert/strict';
import { checkInputSchema } from '../../../src/core/input-schemas.js';
import { byName, expandFixture } from './helpers.js';

describe('openapi schema translation', () => {
  const tools = byName(expandFixture('edge-schemas.yaml'));
  const getNode = tools.get('getNode')!;
  const props = getNode.input_schema.properties as Record<string, Record<string, unknown>>;

  it('boolean exclusiveMinimum becomes the numeric form; example becomes examples', () => {
    assert.deepEqual(props.id, { type: 'integer', exclusiveMinimum: 0, examples: [7] });
  });

  it('nullable adds null to type and enum', () => {
    assert.deepEqual(props.label, { type: ['string', 'null'], enum: ['a', 'b', null] });
  });

  it('keywords and formats fastsvc does not know are dropped; boolean exclusiveMaximum moves the bound', () => {
    const out = getNode.output_schema as { properties: Record<string, Record<string, unknown>>; [k: string]: unknown };
    assert.equal(out.xml, undefined);
    assert.equal(out.discriminator, undefined);
    assert.equal(out['x-internal'], undefined);
    assert.deepEqual(out.properties.kind, { type: 'string' });
    assert.deepEqual(out.properties.weight, { type: 'number', exclusiveMaximum: 10 });
  });

  it('a recursive $ref is unrolled once, then cut to any value with a description saying so', () => {
    const out = getNode.output_schema as any;
    const inner = out.properties.children.items;
    assert.equal(inner.type, 'object', 'the first recursion is expanded');
    const cut = inner.properties.children.items;
    assert.equal(cut.type, undefined);
    assert.match(cut.description, /recursive schema \/components\/schemas\/Node/);
  });

  it('a $ref into another file is inlined (input body and output)', () => {
    const add = tools.get('addOwner')!;
    const body = (add.input_schema.properties as any).body;
    assert.deepEqual(body.required, ['name']);
    assert.deepEqual(body.properties.nickname, { type: ['string', 'null'] });
    assert.deepEqual(add.input_schema.required, ['body']);
    assert.deepEqual(add.output_schema, body);
  });

  it('server variables take their defaults in the base URL', () => {
    assert.equal(getNode.http.url, 'https://eu.api.example.com/v1/nodes/{{id}}');
  });

  it('every schema made from the fixtures passes the input_schema check', () => {
    for (const doc of ['edge-schemas.yaml', 'edge-requests.yaml', 'petstore-3.0.yaml', 'petstore-3.1.yaml', 'petstore-2.0.json']) {
      for (const t of expandFixture(doc, { base_url: 'https://api.example.com' }).tools) {
        for (const s of [t.input_schema, t.output_schema]) if (s) assert.doesNotThrow(() => checkInputSchema(structuredClone(s)), `${doc} ${t.name}`);
      }
    }
  });
});
