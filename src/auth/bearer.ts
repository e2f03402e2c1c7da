// Static bearer tokens: the main token and named service-account tokens.
// Guarantees: a TokenTable is immutable and lives in the policy store's snapshot;
// a presented token is compared against every configured token in constant time
// (each token's bytes cached once, zero-padded to the longest token's length; the
// presented token is written into one scratch buffer of that length and compared
// with timingSafeEqual against every entry, no early exit, no hash per request); a token read from a file is
// re-read when the file changes (server/token-files.ts swaps a new snapshot into the
// store), and a principal authenticated with the old value stops being valid
// (stillValid) at once; an unchanged token keeps its principal across rebuilds;
// tokens are never logged — only their names.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Principal } from '../core/types.js';
import type { ResolvedBearerAuth } from '../core/config.js';
import type { Logger } from '../log.js';
import type { StaticTokens } from '../policy/store.js';

interface Entry {
  name: string;
  file?: string;
  digest: Buffer;
  /** The token's UTF-8 bytes, zero-padded to the table's width, and their real length. */
  padded: Buffer;
  length: number;
  principal: Principal;
}

export class TokenTable implements StaticTokens {
  readonly #entries: readonly Entry[];
  readonly #config: ResolvedBearerAuth;
  readonly #allScopes: readonly string[];
  /** The longest token's byte length, and the buffer each presented token is written into. */
  readonly #width: number;
  readonly #scratch: Buffer;
  /** Set when the main token was generated at start-up (printed once by the CLI); kept by every rebuild. */
  readonly generated?: string;

  private constructor(entries: readonly Entry[], config: ResolvedBearerAuth, allScopes: readonly string[], generated: string | undefined) {
    this.#width = Math.max(1, ...entries.map((e) => e.length));
    this.#entries = Object.freeze(entries.map((e) => ({ ...e, padded: pad(e.padded.subarray(0, e.length), this.#width) })));
    this.#scratch = Buffer.alloc(this.#width);
    this.#config = config;
    this.#allScopes = allScopes;
    this.generated = generated;
  }

  /**
   * The table for an auth section. With `previous`, its generated token is kept and an
   * unchanged token (same name, value and scopes) keeps its Principal object, so sockets
   * opened with it stay valid; any change invalidates it.
   */
  static build(config: ResolvedBearerAuth, allScopes: readonly string[], log: Logger, prev?: StaticTokens, generated?: string): TokenTable {
    const previous = prev instanceof TokenTable ? prev : undefined;
    const mainUnset = !config.token && !config.token_file;
    const gen = previous ? previous.generated : mainUnset && config.generate_if_unset ? generated ?? randomBytes(32).toString('base64url') : undefined;
    const old = new Map((previous ? previous.#entries : []).map((e) => [e.name, e]));
    const entry = (name: string, token: string, scopes: readonly string[], claims: Readonly<Record<string, string>> | undefined, file?: string): Entry => {
      const next = makeEntry(name, token, scopes, claims, file);
      const was = old.get(name);
      const same = was && was.digest.equals(next.digest) && was.principal.scopes.size === scopes.length && scopes.every((x) => was.principal.scopes.has(x))
        && JSON.stringify(was.principal.claims ?? {}) === JSON.stringify(claims ?? {});
      return same ? was : next;
    };
    const entries: Entry[] = [];
    const main = config.token || (config.token_file ? readToken(config.token_file, log) : gen);
    if (main) entries.push(entry(config.subject, main, config.scopes ?? allScopes, config.claims, config.token_file));
    for (const t of config.tokens ?? []) {
      const value = t.token || (t.token_file ? readToken(t.token_file, log) : undefined);
      if (value) entries.push(entry(t.name, value, t.scopes, t.claims, t.token_file));
      else log.warn({ event: 'auth.token_disabled', name: t.name }, `token ${t.name} has no value; it is disabled`);
    }
    return new TokenTable(entries, config, allScopes, gen);
  }

  /** The principal for this token, or undefined. Constant time in the token's value. */
  match(token: string): Principal | undefined {
    const length = Buffer.byteLength(token);
    const scratch = this.#scratch;
    scratch.fill(0);
    if (length <= this.#width) scratch.write(token);
    let found: Principal | undefined;
    for (const e of this.#entries) {
      if (timingSafeEqual(e.padded, scratch) && e.length === length && !found) found = e.principal;
    }
    return found;
  }

  /** The principal of the token named `name` (auth.subject or auth.tokens[].name), if it has a value. */
  principalNamed(name: string): Principal | undefined {
    return this.#entries.find((e) => e.name === name)?.principal;
  }

  stillValid(p: Principal): boolean {
    return this.#entries.some((e) => e.principal === p);
  }

  /** The token files this table read. */
  files(): string[] {
    return [...new Set(this.#entries.map((e) => e.file).filter((f): f is string => !!f))];
  }

  /** The same table built again from its files: this one when no token value changed. */
  reread(log: Logger): TokenTable {
    const next = TokenTable.build(this.#config, this.#allScopes, log, this);
    const values = (t: TokenTable) => t.#entries.map((e) => e.digest.toString('hex')).join();
    return values(next) === values(this) ? this : next;
  }
}

function makeEntry(name: string, token: string, scopes: readonly string[], claims: Readonly<Record<string, string>> | undefined, file?: string): Entry {
  const principal: Principal = { sub: name, scopes: new Set(scopes), kind: 'static', credentialId: name, ...(claims && { claims: Object.freeze({ ...claims }) }) };
  const bytes = Buffer.from(token);
  return { name, file, digest: sha256(token), padded: bytes, length: bytes.length, principal: Object.freeze(principal) };
}

function pad(bytes: Buffer, width: number): Buffer {
  const out = Buffer.alloc(width);
  bytes.copy(out);
  return out;
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
