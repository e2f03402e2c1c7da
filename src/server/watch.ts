// Watches the manifest for every way a file gets replaced: in-place write, editor
// write-to-temp-then-rename, delete then re-create, and a symlink swap anywhere on the
// manifest's path (the Kubernetes ConfigMap `..data` rename with or without the old
// folder's deletion, git-sync's `current -> worktree` link, `ln -sfn` of the file).
// Guarantees: the folders that decide what the path resolves to are watched (chokidar,
// depth 0): the parent of every symlink met while resolving it and the real folder of
// the file, recomputed on every check, so a swap re-aims the watch; as a fallback a
// cheap poll (one stat of the manifest every pollMs, 1 s by default) pokes the watcher
// when the resolved file's identity or times change, so a missed event costs at most
// pollMs. Any event starts a debounce (trailing debounceMs, at most 4× that for a
// continuous burst), after which the file is read and hashed — onChange runs only when
// the bytes differ from the last ones loaded (no-op events, an unreadable/deleted or empty
// file — an in-place write between its truncate and its write — and unrelated files in the
// folder never reload). The file is read within maxBytes and only if it is a regular file
// (util/read-bounded.ts): one swapped for a pipe, a device or a larger file is never read,
// and reloads once per such state, so the load says why. "Loaded" is what onChange reports
// it read, and the file is re-checked after every onChange and once more 2×debounceMs
// after each firing (chokidar drops a second change event within 50 ms of the first),
// so a write that lands during a reload, or a half-written file, is never the last word.

import { watch, type FSWatcher } from 'chokidar';
import { createHash } from 'node:crypto';
import { lstatSync, readlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join, parse, resolve, sep } from 'node:path';
import { logger as rootLogger, type Logger } from '../log.js';
import { MAX_MANIFEST_BYTES } from '../manifest/load.js';
import { readBounded } from '../util/read-bounded.js';

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
  /** Interval of the fallback poll (one stat of the manifest). */
  pollMs?: number;
  /** Most bytes read to hash the file (default MAX_WATCHED_BYTES); a larger file, or one that is not a regular file, is never read. */
  maxBytes?: number;
  logger?: Logger;
}

export const DEFAULT_DEBOUNCE_MS = 50;
export const DEFAULT_POLL_MS = 1000;
/** What a watcher reads of its file at most: a manifest's bound (manifest/load.ts). */
export const MAX_WATCHED_BYTES = MAX_MANIFEST_BYTES;
const MAX_SYMLINK_HOPS = 40;

/**
 * The folders whose entries decide what `file` resolves to: the parent of each symlink
 * met while resolving it (as real paths), and the real folder of the file — or, when a
 * component is missing, the deepest existing folder, where it would reappear.
 */
export function pathFolders(file: string): string[] {
  const folders = new Set<string>();
  const root = parse(file).root;
  let cur = root;
  let rest = file.slice(root.length).split(sep).filter(Boolean);
  let hops = 0;
  while (rest.length) {
    const next = join(cur, rest.shift()!);
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        cur = next;
        continue;
      }
      const target = readlinkSync(next);
      if (++hops > MAX_SYMLINK_HOPS) break;
      folders.add(cur);
      const targetRoot = parse(target).root;
      if (targetRoot) cur = targetRoot;
      rest = [...target.slice(targetRoot.length).split(sep).filter(Boolean), ...rest];
    } catch {
      folders.add(cur); // missing: watch where it would be created
      return [...folders];
    }
  }
  folders.add(dirname(cur));
  return [...folders];
}

export function watchManifest(o: WatchOptions): ManifestWatcher {
  const log = (o.logger ?? rootLogger).child({ module: 'watch' });
  const file = resolve(o.file);
  const debounceMs = o.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const pollMs = o.pollMs ?? DEFAULT_POLL_MS;
  const maxBytes = o.maxBytes ?? MAX_WATCHED_BYTES;
  let watched = new Set(pathFolders(file));
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
        retarget();
        let hash: string;
        try {
          const bytes = await readBounded(file, maxBytes);
          if (bytes.length === 0) {
            // An in-place write truncates before it writes: an empty manifest is that moment (never a valid
            // manifest), not an edit to reject. The write's own event, and the re-check, read what follows.
            log.debug({ event: 'watch.empty', file }, 'manifest is empty (a write in progress?); keeping the running config');
            continue;
          }
          hash = createHash('sha256').update(bytes).digest('hex');
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code !== 'ENOTFILE' && code !== 'EFBIG') {
            log.debug({ event: 'watch.unreadable', file, code }, 'manifest not readable yet; keeping the running config');
            continue;
          }
          // There, but nothing a load can read (a pipe, a device, more than maxBytes): the reload says why, once per such state.
          hash = `${code}:${await identity()}`;
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

  const watcher: FSWatcher = watch([...watched], {
    ignoreInitial: true,
    depth: 0,
    followSymlinks: false, // pathFolders() follows them: a link's own change is the event we need
    atomic: false,
    persistent: true,
  });
  watcher.on('all', poke);

  /** After a symlink swap the path resolves through other folders: watch those instead. */
  function retarget(): void {
    if (closed) return;
    const now = new Set(pathFolders(file));
    const added = [...now].filter((d) => !watched.has(d));
    const gone = [...watched].filter((d) => !now.has(d));
    if (!added.length && !gone.length) return;
    watched = now;
    if (gone.length) watcher.unwatch(gone);
    if (added.length) watcher.add(added);
    log.debug({ event: 'watch.retargeted', file, folders: [...now] }, 'the manifest path resolves through other folders now');
  }

  // The fallback poll: one stat (following every link) per pollMs; a different file or new times poke the watcher.
  const identity = async (): Promise<string> => {
    try {
      const st = await stat(file);
      return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? 'unreadable';
    }
  };
  let seen: Promise<string> = identity();
  const poll = setInterval(() => {
    seen = seen.then(async (before) => {
      const now = await identity();
      if (now !== before) poke();
      return now;
    });
  }, pollMs);
  poll.unref();
  watcher.on('error', (e) => log.warn({ event: 'watch.error', file, err: e }, 'manifest watcher error'));
  // Once watching, look once: an edit made before the watch began has no event of its own.
  const ready = new Promise<void>((r) => watcher.once('ready', () => r())).then(() => void check());
  log.debug({ event: 'watch.started', file }, 'watching manifest');

  return {
    ready,
    async close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(timer);
      clearTimeout(recheck);
      await watcher.close();
    },
  };
}
