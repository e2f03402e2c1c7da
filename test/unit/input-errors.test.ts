// Input problems as callers see them: ajv's errors from a real input validator,
// capped at MAX_PROBLEMS with the rest counted, strings and lists bounded, and
// no argument value echoed; summarize() names paths, messages and allowed values.

import assert from 'node:assert/strict';
import { newInputAjv } from '../../src/core/catalog.js';
import { inputProblems, MAX_PROBLEMS, summarize } from '../../src/policy/input-errors.js';

const ajv = newInputAjv();

describe('input problems', () => {
  it('caps the list and counts what it leaves out', () => {
    const properties = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`p${i}`, { type: 'integer' }]));
    const validate = ajv.compile({ type: 'object', properties });
    const args = Object.fromEntries(Object.keys(properties).map((k) => [k, 'not-a-number']));
    assert.equal(validate(args), false);
    const p = inputProblems(validate.errors);
    assert.equal(p.errors.length, MAX_PROBLEMS);
    assert.equal(p.omitted, 25 - MAX_PROBLEMS);
    assert.match(summarize(p), new RegExp(`; and ${25 - MAX_PROBLEMS} more$`));
    assert.ok(!summarize(p).includes('not-a-number'));
  });

  it('bounds long allowed-value lists and long property names', () => {
    const values = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const validate = ajv.compile({ type: 'object', properties: { k: { enum: values } }, additionalProperties: false });
    assert.equal(validate({ k: 'nope', ['x'.repeat(5000)]: 1 }), false);
    const p = inputProblems(validate.errors);
    const allowed = p.errors.find((e) => e.path === '/k')!.params!.allowedValues as unknown[];
    assert.equal(allowed.length, 21);
    assert.equal(allowed.at(-1), '…');
    assert.ok(summarize(p).length < 1000, `summary is ${summarize(p).length} chars`);
  });

  it('names the missing property and keeps the root path readable', () => {
    const validate = ajv.compile({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    assert.equal(validate({}), false);
    const p = inputProblems(validate.errors);
    assert.deepEqual(p.errors, [{ path: '/', message: "must have required property 'name'", params: { missingProperty: 'name' } }]);
    assert.equal(summarize(p), "/: must have required property 'name'");
  });
});
