// InMemoryOAuthProvider: OAuth state in this process's memory, for tests and
// experiments. Guarantees: the same observable behaviour as the SQLite provider
// (one contract suite), entries are copied in and out (callers cannot mutate stored
// state), expired entries are invisible at once and removed by sweep(), which runs every
// sweep interval as the SQLite provider's does (so a long-running server does not keep
// every token it ever issued); all is lost on exit.

import { AlreadyConsumed, type Adapter, type AdapterPayload, type OAuthKeys, type OAuthProvider } from '../../../core/oauth-provider.js';
import { decodePayload, encodePayload, expiryOf, storageKey } from './stored-id.js';

interface Entry {
  json: string;
  grantId?: string;
  uid?: string;
  userCode?: string;
  expiresAt: number | null;
  consumedAt: number | null;
}

const live = (e: Entry | undefined): e is Entry => e !== undefined && (e.expiresAt === null || e.expiresAt > Date.now());

class MemoryModel implements Adapter {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly model: string) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    this.#entries.set(storageKey(id), {
      json: encodePayload(payload),
      grantId: payload.grantId,
      uid: payload.uid,
      userCode: payload.userCode,
      expiresAt: expiryOf(expiresIn),
      consumedAt: null,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const e = this.#entries.get(storageKey(id));
    return live(e) ? decodePayload(e.json, id, e.consumedAt) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#findBy((e) => e.uid === uid);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.#findBy((e) => e.userCode === userCode);
  }

  async consume(id: string): Promise<void> {
    const e = this.#entries.get(storageKey(id));
    if (e?.consumedAt) throw new AlreadyConsumed(this.model);
    if (e) e.consumedAt = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    this.#entries.delete(storageKey(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [k, e] of this.#entries) if (e.grantId === grantId) this.#entries.delete(k);
  }

  sweep(now: number): number {
    let n = 0;
    for (const [k, e] of this.#entries) {
      if (e.expiresAt !== null && e.expiresAt <= now) {
        this.#entries.delete(k);
        n++;
      }
    }
    return n;
  }

  #findBy(match: (e: Entry) => boolean): AdapterPayload | undefined {
    for (const e of this.#entries.values()) if (live(e) && match(e)) return decodePayload(e.json, undefined, e.consumedAt);
    return undefined;
  }
}

export interface InMemoryOAuthProviderOptions {
  /** How often expired entries are removed, in ms. Default 10 minutes. */
  sweepIntervalMs?: number;
}

export class InMemoryOAuthProvider implements OAuthProvider {
  readonly #models = new Map<string, MemoryModel>();
  #keys: string | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(opts: InMemoryOAuthProviderOptions = {}) {
    this.#timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 600_000);
    this.#timer.unref();
  }

  adapter(model: string): Adapter {
    let m = this.#models.get(model);
    if (!m) this.#models.set(model, (m = new MemoryModel(model)));
    return m;
  }

  async loadKeys(): Promise<OAuthKeys | undefined> {
    return this.#keys === undefined ? undefined : (JSON.parse(this.#keys) as OAuthKeys);
  }

  async saveKeys(keys: OAuthKeys): Promise<void> {
    this.#keys = JSON.stringify(keys);
  }

  sweep(): number {
    const now = Date.now();
    let n = 0;
    for (const m of this.#models.values()) n += m.sweep(now);
    return n;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#models.clear();
  }
}
