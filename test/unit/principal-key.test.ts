// principalKey() (src/core/principal-key.ts): one key for who a caller is — kind, issuer, subject
// and client — so that the same name under two kinds of credential, or at two issuers, is two callers.

import assert from 'node:assert/strict';
import { principalKey } from '../../src/core/principal-key.js';
import type { Principal } from '../../src/core/types.js';

const p = (o: Partial<Principal> & Pick<Principal, 'kind'>): Principal => ({ sub: 'ci', scopes: new Set(), ...o });

describe('principalKey', () => {
  it('tells apart the same subject under every kind of credential and issuer', () => {
    const callers = [
      p({ kind: 'static' }),
      p({ kind: 'oauth' }),
      p({ kind: 'oauth', clientId: 'web' }),
      p({ kind: 'oauth', signedInAt: 'github' }),
      p({ kind: 'oauth', signedInAt: 'google' }),
      p({ kind: 'oauth', idp: 'https://idp.example' }),
      p({ kind: 'external', issuer: 'https://a.example' }),
      p({ kind: 'external', issuer: 'https://b.example' }),
      p({ kind: 'external', issuer: 'https://a.example', clientId: 'web' }),
      p({ kind: 'anonymous' }),
    ];
    const keys = callers.map((c) => principalKey(c));
    assert.equal(new Set(keys).size, callers.length, keys.join('\n'));
  });

  it('is the same for the same caller, whatever else the credential says, and is not fooled by separators in values', () => {
    assert.equal(principalKey(p({ kind: 'external', issuer: 'https://a.example', scopes: new Set(['x']) })), principalKey(p({ kind: 'external', issuer: 'https://a.example', expiresAt: 1 })));
    assert.notEqual(principalKey(p({ kind: 'external', issuer: 'a', sub: 'b c' })), principalKey(p({ kind: 'external', issuer: 'a b', sub: 'c' })));
    assert.notEqual(principalKey(p({ kind: 'external', issuer: 'a","b', sub: 'c' })), principalKey(p({ kind: 'external', issuer: 'a', sub: 'b","c' })));
  });

  it('without the client, one person is one key across its OAuth clients', () => {
    const web = p({ kind: 'oauth', clientId: 'web' });
    const cli = p({ kind: 'oauth', clientId: 'cli' });
    assert.notEqual(principalKey(web), principalKey(cli));
    assert.equal(principalKey(web, { client: false }), principalKey(cli, { client: false }));
  });
});
