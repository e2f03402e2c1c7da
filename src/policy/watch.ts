// Watches the manifest for every way a file gets replaced: in-place write, editor
// write-to-temp-then-rename, delete then re-create, and the Kubernetes ConfigMap swap
// (svc.yaml -> ..data/svc.yaml, ..data renamed over). Guarantees: the manifest's
// folder is watched (chokidar, symlinks followed), so replacement by rename is seen;
// any event starts a debounce (trailing debounceMs, at most 4× that for a continuous
// burst), after which the file is read and hashed — onChange runs only when the
// bytes differ from the last ones loaded (no-op events, an unreadable/deleted file
// and unrelated files in the folder never reload). "Loaded" is what onChange reports
// it read, and the file is re-checked after every onChange and once more 2×debounceMs
// after each firing (chokidar drops a second change event within 50 ms of the first),
// so a write that lands during a reload, or a half-written file, is never the last word.

import { watch, type FSWatcher } from 'chokidar';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { logger as rootLogger, type Logger } from '../log.js';

export interface ManifestWatcher {
  /** Resolves once the folder is being watched (events before it may be missed). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  file: string;
  /**
   * Called when the manifest's bytes changed; awaited (one call at a time). May resolve to
   * the sha256 of the bytes it actually read, which then counts as "loaded".
   */
  onChange: () => Promise<string | void> | void;
  /** sha256 (hex) of the bytes already loaded; events that leave the file so are ignored. */
  initialHash?: string;
  debounceMs?: number;
  logger?: Logger;
}

export const DEFAULT_DEBOUNCE_MS = 50;

export function watchManifest(o: WatchOptions): ManifestWatcher {
  const log = (o.logger ?? rootLogger).child({ module: 'watch' });
  const file = resolve(o.file);
  const debounceMs = o.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let lastHash = o.initialHash;
  let timer: NodeJS.Timeout | undefined;
  let recheck: NodeJS.Timeout | undefined;
  let burstStart = 0;
  let closed = false;
  let checking = false;
  let again = false;

  const check = async (): Promise<void> => {
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        let hash: string;
        try {
          hash = createHash('sha256').update(await readFile(file)).digest('hex');
        } catch (e) {
          log.debug({ event: 'watch.unreadable', file, code: (e as NodeJS.ErrnoException).code }, 'manifest not readable yet; keeping the running config');
          continue;
        }
        if (closed) continue;
        if (hash === lastHash) {
          log.debug({ event: 'watch.unchanged', file }, 'manifest bytes unchanged');
          continue;
        }
        lastHash = hash;
        log.debug({ event: 'watch.changed', file, hash }, 'manifest changed');
        try {
          const read = await o.onChange();
          if (typeof read === 'string' && read) lastHash = read; // '' (nothing read): keep our own reading
        } catch (e) {
          log.error({ event: 'watch.reload_error', file, err: e }, 'reload after a manifest change failed');
        }
        again = true; // the file may have changed while it was being loaded: look again
      } while (again && !closed);
    } finally {
      checking = false;
    }
  };

  const fire = () => {
    timer = undefined;
    burstStart = 0;
    void check();
    clearTimeout(recheck);
    recheck = setTimeout(() => void check(), debounceMs * 2);
  };

  const poke = () => {
    if (closed) return;
    const now = performance.now();
    if (!burstStart) burstStart = now;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, Math.min(debounceMs, burstStart + 4 * debounceMs - now)));
  };

  const watcher: FSWatcher = watch(dirname(file), {
    ignoreInitial: true,
    depth: 0,
    followSymlinks: true,
    atomic: false,
    persistent: true,
  });
  watcher.on('all', poke);
  watcher.on('error', (e) => log.warn({ event: 'watch.error', file, err: e }, 'manifest watcher error'));
  // Once watching, look once: an edit made before the watch began has no event of its own.
  const ready = new Promise<void>((r) => watcher.once('ready', () => r())).then(() => void check());
  log.debug({ event: 'watch.started', file }, 'watching manifest');

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(recheck);
      await watcher.close();
    },
  };
}
