// lazyRequire: a CommonJS package loaded on first use, synchronously, once.
// Guarantees: nothing is loaded until the returned function is first called; every
// call returns the same module object (what a static default import would give), so
// a feature's heavy package (pg, better-sqlite3, prom-client) costs nothing to a
// manifest that never uses the feature, and its first use needs no await.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(id) as T);
}
