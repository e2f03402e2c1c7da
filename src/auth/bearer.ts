// Static bearer tokens: the main token and named service-account tokens.
// Guarantees: a presented token is compared against every configured token in
// constant time (SHA-256 digests, timingSafeEqual; no early exit); a token read
// from a file is re-read when the file changes, and a principal authenticated
// with the old value stops being valid (stillValid) at once; tokens are never
// logged — only their names.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import type { Principal } from '../core/types.js';
import type { BearerAuthConfig } from '../config.js';
import type { Logger } from '../log.js';

interface Entry {
  name: string;
  file?: string;
  digest: Buffer;
  principal: Principal;
}

export class BearerAuth {
  #entries: Entry[] = [];
  readonly #watchers: FSWatcher[] = [];
  readonly #log: Logger;
  /** Set when the main token was generated at start-up (printed once by the CLI). */
  readonly generated?: string;

  constructor(config: BearerAuthConfig, allScopes: readonly string[], log: Logger, generated?: string) {
    this.#log = log;
    const mainUnset = !config.token && !config.token_file;
    if (mainUnset && config.generate_if_unset) this.generated = generated ?? randomBytes(32).toString('base64url');
    this.#entries = this.#build(config, allScopes);
    for (const file of new Set(this.#entries.map((e) => e.file).filter((f): f is string => !!f))) {
      this.#watchFile(file, config, allScopes);
    }
  }

  /** The principal for this token, or undefined. Constant time in the token's value. */
  match(token: string): Principal | undefined {
    const digest = sha256(token);
    let found: Principal | undefined;
    for (const e of this.#entries) {
      if (timingSafeEqual(e.digest, digest) && !found) found = e.principal;
    }
    return found;
  }

  stillValid(p: Principal): boolean {
    return this.#entries.some((e) => e.principal === p);
  }

  /** Apply a reloaded auth section (token scopes, added or removed tokens). */
  update(config: BearerAuthConfig, allScopes: readonly string[]): void {
    this.#entries = this.#build(config, allScopes);
  }

  close(): void {
    for (const w of this.#watchers) w.close();
  }

  #build(config: BearerAuthConfig, allScopes: readonly string[]): Entry[] {
    // An unchanged token (same name, value and scopes) keeps its Principal object, so
    // sockets opened with it stay valid across a reload; any change invalidates it.
    const previous = new Map(this.#entries.map((e) => [e.name, e]));
    const entry = (name: string, token: string, scopes: readonly string[], file?: string): Entry => {
      const next = makeEntry(name, token, scopes, file);
      const old = previous.get(name);
      const same = old && old.digest.equals(next.digest) && old.principal.scopes.size === scopes.length && scopes.every((x) => old.principal.scopes.has(x));
      return same ? old : next;
    };
    const entries: Entry[] = [];
    const main = config.token || (config.token_file ? readToken(config.token_file, this.#log) : this.generated);
    if (main) entries.push(entry(config.subject ?? 'operator', main, config.scopes ?? allScopes, config.token_file));
    for (const t of config.tokens ?? []) {
      const value = t.token || (t.token_file ? readToken(t.token_file, this.#log) : undefined);
      if (value) entries.push(entry(t.name, value, t.scopes, t.token_file));
      else this.#log.warn({ event: 'auth.token_disabled', name: t.name }, `token ${t.name} has no value; it is disabled`);
    }
    return entries;
  }

  #watchFile(file: string, config: BearerAuthConfig, allScopes: readonly string[]): void {
    // Watch the folder: editors and Kubernetes replace files by rename, which a file watch misses.
    const dir = file.slice(0, file.lastIndexOf('/')) || '.';
    try {
      const w = watch(dir, { persistent: false }, () => {
        const before = this.#entries.map((e) => e.digest.toString('hex')).join();
        const next = this.#build(config, allScopes);
        if (next.map((e) => e.digest.toString('hex')).join() !== before) {
          this.#entries = next;
          this.#log.info({ event: 'auth.token_rotated', file }, 'token file changed: tokens reloaded');
        }
      });
      this.#watchers.push(w);
    } catch (e) {
      this.#log.warn({ err: e, file }, 'cannot watch token file; rotation needs a restart');
    }
  }
}

function makeEntry(name: string, token: string, scopes: readonly string[], file?: string): Entry {
  return { name, file, digest: sha256(token), principal: Object.freeze({ sub: name, scopes: new Set(scopes), kind: 'static', credentialId: name }) };
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function readToken(file: string, log: Logger): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (e) {
    log.error({ file, code: (e as NodeJS.ErrnoException).code }, 'cannot read token file');
    return undefined;
  }
}
