// Password hashes for login.mode `users`: scrypt from node:crypto in the format
// `scrypt$N$r$p$salt$hash` (salt and hash base64url). Guarantees: a fresh random salt
// per hash, a constant-time comparison, and a malformed or out-of-bounds stored hash
// never verifies (and never throws).

import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const DEFAULTS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LEN = 32;
const MAX_N = 2 ** 20;

function scrypt(password: string, salt: Buffer, keylen: number, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...o, maxmem: 256 * o.N * o.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFKC'), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string, params: Partial<typeof DEFAULTS> = {}): Promise<string> {
  const o = { ...DEFAULTS, ...params };
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, o);
  return `scrypt$${o.N}$${o.r}$${o.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const sane = Number.isInteger(N) && N > 1 && N <= MAX_N && (N & (N - 1)) === 0
    && Number.isInteger(r) && r >= 1 && r <= 32 && Number.isInteger(p) && p >= 1 && p <= 16
    && salt.length >= 8 && expected.length >= 16;
  if (!sane) return false;
  try {
    return timingSafeEqual(await scrypt(password, salt, expected.length, { N, r, p }), expected);
  } catch {
    return false;
  }
}
