// The files of the `openapi` sources a server started with, watched as the manifest is
// (watch.ts: renames, symlink swaps, a fallback poll). Guarantees: when a document's bytes
// change, the manifest is reloaded through the one serialized reloader (which expands the
// sources again, and applies the result only if the config hash — which covers the documents
// — changed); URLs and documents that cannot be read at start are not watched; the documents
// are those of the manifest at start-up and their own folder's $ref'd files are not watched
// (a reload that adds a source watches its document only after a restart; SIGHUP reloads
// whatever changed).

import { createHash } from 'node:crypto';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { SvcManifest } from '../core/manifest-types.gen.js';
import type { Logger } from '../log.js';
import { MAX_DOCUMENT_BYTES } from '../openapi/document.js';
import { readBoundedSync } from '../util/read-bounded.js';
import { watchManifest, type ManifestWatcher } from './watch.js';

export function watchDocuments(o: { manifest: SvcManifest; file: string; logger: Logger; reload: () => Promise<unknown> }): ManifestWatcher {
  const files = new Set<string>();
  for (const src of o.manifest.openapi ?? []) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(src.document)) continue;
    files.add(isAbsolute(src.document) ? src.document : resolve(dirname(resolve(o.file)), src.document));
  }
  const watchers: ManifestWatcher[] = [];
  for (const file of files) {
    let initialHash: string | undefined;
    try {
      initialHash = createHash('sha256').update(readBoundedSync(file, MAX_DOCUMENT_BYTES)).digest('hex');
    } catch {
      continue;
    }
    watchers.push(watchManifest({
      file, initialHash, logger: o.logger, maxBytes: MAX_DOCUMENT_BYTES,
      onChange: async () => {
        o.logger.info({ event: 'openapi.document_changed', file }, 'openapi document changed; reloading');
        await o.reload();
        return ''; // the watcher's own reading of the document counts as loaded
      },
    }));
  }
  return {
    ready: Promise.all(watchers.map((w) => w.ready)).then(() => undefined),
    close: async () => void (await Promise.all(watchers.map((w) => w.close()))),
  };
}
