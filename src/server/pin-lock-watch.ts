// The running server's copy of the pin lock (upstreams/lock-file.ts). Guarantees: the lock is
// read once at start (a corrupt or unreadable one throws there — LOCK_INVALID /
// FILE_UNREADABLE — so the server does not start with a pin it cannot read); afterwards the
// file is watched as the manifest is (watch.ts: renames, symlink swaps, a fallback poll), and
// when its bytes change the new lock replaces the current one and onChange runs with it —
// `fastsvc upstreams accept` takes effect without a restart or a reload; a corrupt new lock is
// logged (upstreams.lock_rejected, with its code and place) and the last good one stays; a
// lock that disappears while serving keeps the last good one until the next start.

import { isSvcError } from '../errors.js';
import type { Logger } from '../log.js';
import { readLockFile, type Lock } from '../upstreams/lock-file.js';
import { watchManifest } from './watch.js';

export interface LockWatch {
  readonly file: string;
  current(): Lock | undefined;
  /** Resolves once the file is being watched. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export function watchLock(o: { file: string; logger: Logger; onChange: (lock: Lock) => void | Promise<void> }): LockWatch {
  const first = readLockFile(o.file);
  let current = first.lock;
  const watcher = watchManifest({
    file: o.file,
    initialHash: first.hash,
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
      current = read.lock;
      o.logger.info({ event: 'upstreams.lock_changed', file: o.file, hash: read.hash }, 'pin lock file changed');
      await o.onChange(current);
      return read.hash;
    },
  });
  return { file: o.file, current: () => current, ready: watcher.ready, close: () => watcher.close() };
}
