// Sealing of secrets at rest: the authorization server's keys in a shared store (sealed under
// oauth.provider.key_secret), and the upstream providers' tokens of an upstream login (sealed
// under a key derived from the server's own key material, auth/signin/sealed-store.ts).
// Guarantees: AES-256-GCM under a key derived (HKDF-SHA-256, one `info` per purpose) from the
// given material, which is never stored beside what it seals by this module; a fresh 96-bit
// nonce per seal; optional associated data binds a sealed value to its place (a grant id), so
// it cannot be moved to another; openWith() answers undefined for anything not sealed under
// that key and place, and open() refuses (OAUTH_CONFIG) keys not sealed under the same
// key_secret, so a replica started with the wrong secret stops at start-up instead of minting
// keys of its own.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { SvcError } from '../../errors.js';

const KEYS_INFO = 'fastsvc oauth keys v1';

/** A 256-bit key for one purpose (`info`), derived from key material. */
export function deriveKey(material: string | Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', typeof material === 'string' ? Buffer.from(material, 'utf8') : material, Buffer.alloc(0), info, 32));
}

export function sealWith(plaintext: string, key: Buffer, aad?: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) c.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${c.getAuthTag().toString('base64url')}`;
}

/** The plaintext, or undefined when `sealed` was not sealed under this key (and associated data). */
export function openWith(sealed: string, key: Buffer, aad?: string): string | undefined {
  const [v, iv, body, tag] = sealed.split('.');
  try {
    if (v !== 'v1' || !iv || body === undefined || !tag) return undefined;
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    if (aad !== undefined) d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

export function seal(plaintext: string, secret: string): string {
  return sealWith(plaintext, deriveKey(secret, KEYS_INFO));
}

export function open(sealed: string, secret: string): string {
  const plain = openWith(sealed, deriveKey(secret, KEYS_INFO));
  if (plain === undefined) {
    throw new SvcError('OAUTH_CONFIG', 'the OAuth keys in the shared store were sealed under another oauth.provider.key_secret (every replica needs the same one)', { path: '/oauth/provider/key_secret' });
  }
  return plain;
}
