// Large results of tools declared inline_ok: false, kept briefly so the caller can
// read them as svc://results/ID. Guarantees: a result is found only by the caller that
// produced it (its principalKey: kind, issuer, subject and client — a static token `ci`
// and an external issuer's subject `ci` are two callers); it keeps the tool and the
// arguments that produced it, so the runtime admits every read again under the policy
// of that moment (runtime.ts); at most MAX entries and TTL_MS each, oldest evicted first.

import { randomUUID } from 'node:crypto';
import type { ResourceContents } from '../core/types.js';

const MAX = 256;
const TTL_MS = 15 * 60_000;
export const RESULTS_PREFIX = 'svc://results/';

export interface HeldResult {
  readonly owner: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly contents: ResourceContents;
  readonly expires: number;
}

export class ResultStore {
  readonly #items = new Map<string, HeldResult>();

  put(owner: string, tool: string, args: Record<string, unknown>, text: string, mimeType: string): string {
    this.#evict();
    const id = randomUUID();
    const uri = RESULTS_PREFIX + id;
    this.#items.set(id, { owner, tool, args, contents: { uri, mimeType, text }, expires: Date.now() + TTL_MS });
    return uri;
  }

  /** The result at `uri` if `owner` produced it and it has not expired. */
  get(owner: string, uri: string): HeldResult | undefined {
    const held = this.#items.get(uri.slice(RESULTS_PREFIX.length));
    if (!held || held.owner !== owner || held.expires < Date.now()) return undefined;
    return held;
  }

  #evict(): void {
    const now = Date.now();
    for (const [id, h] of this.#items) {
      if (this.#items.size < MAX && h.expires >= now) break;
      this.#items.delete(id);
    }
  }
}
