// closestName: suggests only close names, the closest first; editDistance counts transpositions as one.

import assert from 'node:assert/strict';
import { closestName, editDistance } from '../../../src/util/did-you-mean.js';

describe('did you mean', () => {
  const fields = ['name', 'description', 'required_scopes', 'input_schema', 'template'];

  it('finds a typo, a missing letter, a transposition and another spelling of the same words', () => {
    assert.equal(closestName('descripton', fields), 'description');
    assert.equal(closestName('required_scope', fields), 'required_scopes');
    assert.equal(closestName('tempalte', fields), 'template');
    assert.equal(closestName('requiredScopes', fields), 'required_scopes');
    assert.equal(closestName('input-schema', fields), 'input_schema');
  });

  it('suggests nothing for a far word, and never the word itself', () => {
    assert.equal(closestName('zzzzzz', fields), undefined);
    assert.equal(closestName('op', ['fs', 'root']), undefined);
    assert.equal(closestName('name', ['name']), undefined);
  });

  it('edit distance', () => {
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('abc', 'abc'), 0);
    assert.equal(editDistance('abcd', 'abdc'), 1);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });
});
