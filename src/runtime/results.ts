// Large results of tools declared inline_ok: false, kept briefly so the caller can
// read them as svc://results/ID. Guarantees: only the subject that produced a
// result can read it; at most MAX entries and TTL_MS each, oldest evicted first.

import { randomUUID } from 'node:crypto';
import type { ResourceContents } from '../core/types.js';

const MAX = 256;
const TTL_MS = 15 * 60_000;
export const RESULTS_PREFIX = 'svc://results/';

interface Held { sub: string; contents: ResourceContents; expires: number }

export class ResultStore {
  readonly #items = new Map<string, Held>();

  put(sub: string, text: string, mimeType: string): string {
    this.#evict();
    const id = randomUUID();
    const uri = RESULTS_PREFIX + id;
    this.#items.set(id, { sub, contents: { uri, mimeType, text }, expires: Date.now() + TTL_MS });
    return uri;
  }

  get(sub: string, uri: string): ResourceContents | undefined {
    const held = this.#items.get(uri.slice(RESULTS_PREFIX.length));
    if (!held || held.sub !== sub || held.expires < Date.now()) return undefined;
    return held.contents;
  }

  #evict(): void {
    const now = Date.now();
    for (const [id, h] of this.#items) {
      if (this.#items.size < MAX && h.expires >= now) break;
      this.#items.delete(id);
    }
  }
}
