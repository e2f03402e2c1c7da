import assert from 'node:assert/strict';
import { hashPassword, verifyPassword } from '../../src/auth/oauth/password.js';

describe('oauth password hashes (scrypt)', () => {
  it('hashes in the scrypt$N$r$p$salt$hash format and verifies only the right password', async () => {
    const h = await hashPassword('correct horse', { N: 1024 });
    assert.match(h, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.equal(await verifyPassword('correct horse', h), true);
    assert.equal(await verifyPassword('correct horsE', h), false);
    assert.equal(await verifyPassword('', h), false);
  });
  it('salts every hash', async () => {
    assert.notEqual(await hashPassword('x', { N: 1024 }), await hashPassword('x', { N: 1024 }));
  });
  it('uses N=2^15 by default', async () => {
    assert.match(await hashPassword('x'), /^scrypt\$32768\$8\$1\$/);
  });
  it('refuses malformed or out-of-bounds hashes without throwing', async () => {
    const h = await hashPassword('pw', { N: 1024 });
    const [, , r, p, salt, key] = h.split('$');
    for (const bad of ['', 'scrypt$', 'bcrypt$1024$8$1$aaaaaaaaaaa$bbbbbbbbbbbbbbbbbbbbbbb', `scrypt$1000$${r}$${p}$${salt}$${key}`,
      `scrypt$${2 ** 24}$${r}$${p}$${salt}$${key}`, `scrypt$1024$${r}$${p}$${salt}$`, `scrypt$1024$0$${p}$${salt}$${key}`]) {
      assert.equal(await verifyPassword('pw', bad), false, bad);
    }
  });
});
