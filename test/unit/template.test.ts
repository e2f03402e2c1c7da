import assert from 'node:assert/strict';
import { compileTemplate } from '../../src/runtime/template.js';

describe('template', () => {
  it('renders placeholders and lists names', () => {
    const t = compileTemplate('Hello {{ name }}, {{user.city}}!');
    assert.deepEqual(t.names, ['name', 'user']);
    assert.equal(t.render({ name: 'Ada', user: { city: 'Paris' } }), 'Hello Ada, Paris!');
  });
  it('renders unknown names as empty and never evaluates code', () => {
    const t = compileTemplate('{{missing}}|{{constructor}}|{{ a.__proto__ }}');
    assert.equal(t.render({}), '||');
  });
  it('applies the encoder to values only', () => {
    const t = compileTemplate('/items/{{id}}?q=1');
    assert.equal(t.render({ id: '../a b' }, encodeURIComponent), '/items/..%2Fa%20b?q=1');
  });
  it('marks a lone placeholder so JSON bodies keep the type', () => {
    assert.equal(compileTemplate('{{n}}').single, 'n');
    assert.equal(compileTemplate('x{{n}}').single, undefined);
  });
});
