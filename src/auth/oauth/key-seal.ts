// Sealing of the authorization server's keys at rest in a shared store. Guarantees:
// AES-256-GCM under a key derived (HKDF-SHA-256) from an operator secret that lives in
// the environment, never in the store; a fresh 96-bit nonce per seal; open() refuses
// (OAUTH_CONFIG) anything not sealed under the same secret, so a replica started with
// the wrong secret stops at start-up instead of minting keys of its own.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { SvcError } from '../../errors.js';

const INFO = 'fastsvc oauth keys v1';

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), INFO, 32));
}

export function seal(plaintext: string, secret: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${c.getAuthTag().toString('base64url')}`;
}

export function open(sealed: string, secret: string): string {
  const [v, iv, body, tag] = sealed.split('.');
  try {
    if (v !== 'v1' || !iv || body === undefined || !tag) throw new Error('not sealed');
    const d = createDecipheriv('aes-256-gcm', keyOf(secret), Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
  } catch {
    throw new SvcError('OAUTH_CONFIG', 'the OAuth keys in the shared store were sealed under another oauth.provider.key_secret (every replica needs the same one)', { path: '/oauth/provider/key_secret' });
  }
}
