// releaseHeap(): give the memory of a large working set that has just died back to the OS now.
// Guarantees: runs two full, blocking collections of this isolate's heap — the first frees the
// dead objects, the second compacts the pages they left half empty (V8 picks its evacuation
// candidates from the previous marking) — so the freed pages are unmapped at once instead of
// staying in the process's RSS until V8's memory reducer runs, many seconds later or never
// (a busy server). Without --expose-gc it gets the collector the way Jest's --logHeapUsage
// does: --expose-gc set just long enough to create one context that holds `gc`, then unset,
// so no other context (the host's, a later vm context) sees a `gc` global it did not ask for.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

export function releaseHeap(): void {
  if (!collect) {
    const own = (globalThis as { gc?: () => void }).gc;
    if (typeof own === 'function') {
      collect = own;
    } else {
      setFlagsFromString('--expose-gc');
      try {
        collect = runInNewContext('gc') as () => void;
      } finally {
        setFlagsFromString('--no-expose-gc');
      }
    }
  }
  collect();
  collect();
}
