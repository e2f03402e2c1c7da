// The running server's view of the pin lock file (upstreams/pin/lock-file.ts), after start-up read
// it. Guarantees: the file is watched as the manifest is (watch.ts: renames, symlink swaps, a
// fallback poll), from the bytes start-up read (a change made between that read and the watch
// is seen); when its bytes change, onChange runs with the new lock — `fastsvc upstreams accept`
// takes effect without a restart or a reload; a corrupt new lock is logged
// (upstreams.lock_rejected, with its code and place) and onChange is not called, so the last
// good lock stays; a lock that disappears while serving changes nothing until the next start.

import { isSvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { readLockFile, type Lock } from '../upstreams/pin/lock-file.js';
import { watchManifest, type ManifestWatcher } from './watch.js';

/** initialHash: sha256 (hex) of the bytes start-up read (readLockFile), undefined when there was no file. */
export function watchLock(o: { file: string; initialHash: string | undefined; logger: Logger; onChange: (lock: Lock) => void }): ManifestWatcher {
  return watchManifest({
    file: o.file,
    initialHash: o.initialHash,
    logger: o.logger,
    onChange: async () => {
      let read: ReturnType<typeof readLockFile>;
      try {
        read = readLockFile(o.file);
      } catch (e) {
        if (!isSvcError(e)) throw e;
        o.logger.error({ event: 'upstreams.lock_rejected', file: o.file, code: e.code, problem: e.format() }, 'the pin lock file changed but cannot be read; keeping the last good one');
        return '';
      }
      if (!read.lock) return ''; // gone for a moment (or for good): the last good lock stays
      o.logger.info({ event: 'upstreams.lock_changed', file: o.file, hash: read.hash }, 'pin lock file changed');
      o.onChange(read.lock);
      return read.hash ?? '';
    },
  });
}
