import assert from 'node:assert/strict';
import { parseByteSize } from '../../../src/util/bytes.js';
import { throwsWithCode } from '../../helpers/errors.js';

describe('parseByteSize', () => {
  it('reads integers and b/kb/mb strings (powers of 1024)', () => {
    assert.equal(parseByteSize(123), 123);
    assert.equal(parseByteSize('123'), 123);
    assert.equal(parseByteSize('123b'), 123);
    assert.equal(parseByteSize('512kb'), 512 * 1024);
    assert.equal(parseByteSize('1mb'), 1024 * 1024);
    assert.equal(parseByteSize('2MB'), 2 * 1024 * 1024);
  });

  it('refuses anything else with SCHEMA_VIOLATION', () => {
    for (const v of [0, -1, 1.5, NaN, Infinity, '', '0', '0kb', '1gb', 'abc', '1 mb', '-1', '1.5mb', '99999999999999999999mb']) {
      throwsWithCode(() => parseByteSize(v), 'SCHEMA_VIOLATION');
    }
  });
});
