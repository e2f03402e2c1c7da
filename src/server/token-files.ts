// Token files that rotate while the server runs. Guarantees: the folder of every token file
// the store's current table read is watched (editors and Kubernetes replace a file by
// rename, which a watch of the file itself misses); a changed token value swaps a snapshot
// with the re-read table into the store in one assignment and logs `auth.token_rotated`;
// an unchanged value swaps nothing; a folder that cannot be watched is logged (rotation
// then needs a restart).

import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../log.js';
import type { PolicyStore } from '../policy/store.js';

/** Watch the token files of the store's current table; returns a function that stops watching. */
export function watchTokenFiles(store: PolicyStore, log: Logger): () => void {
  const watchers: FSWatcher[] = [];
  for (const file of store.current().tokens?.files() ?? []) {
    const dir = file.slice(0, file.lastIndexOf('/')) || '.';
    try {
      watchers.push(watch(dir, { persistent: false }, () => {
        const snap = store.current();
        const next = snap.tokens?.reread(log);
        if (next && next !== snap.tokens) {
          store.swap({ ...snap, tokens: next });
          log.info({ event: 'auth.token_rotated', file }, 'token file changed: tokens reloaded');
        }
      }));
    } catch (e) {
      log.warn({ err: e, file }, 'cannot watch token file; rotation needs a restart');
    }
  }
  return () => {
    for (const w of watchers) w.close();
  };
}
