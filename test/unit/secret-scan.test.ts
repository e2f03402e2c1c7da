// The secret scan the root hook runs over all servers' output (test/helpers/secrets.ts):
// it finds a secret anywhere in a line, names the source, masks the secret in what it
// reports, and ignores lines without one.

import assert from 'node:assert/strict';
import { findLeaks } from '../helpers/secrets.js';

describe('secret scan', () => {
  it('finds each line holding a secret, masked, and nothing else', () => {
    const found = findLeaks(['s3cr3t-token-value', 'verifier-abcdefgh'], [
      { source: 'serve a', text: '{"msg":"ok"}\n{"authorization":"Bearer s3cr3t-token-value"}\n' },
      { source: 'serve b', text: 'code_verifier=verifier-abcdefgh&x=1' },
      { source: 'serve c', text: 'nothing to see\n' },
    ]);
    assert.deepEqual(found, [
      { source: 'serve a', line: '{"authorization":"Bearer <SECRET>"}' },
      { source: 'serve b', line: 'code_verifier=<SECRET>&x=1' },
    ]);
  });
});
