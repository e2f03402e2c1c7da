// The last expansion of a manifest's `openapi` sources, kept for the next load in this process
// (a reload that leaves the documents alone: GitHub's 13 MB description is then read and hashed,
// not parsed and translated again).
// Guarantees: a result is reused only when the sources are the same value (after ${VAR}s and
// schema defaults), resolved against the same folder with the same `offline`, and every document
// it read (the root and the files its $refs named) is a file with the same bytes now — each read
// again within document.ts's size bound (a regular file only) and hashed — or a document at a URL, which is not fetched
// again: its source pins its sha256 (the same sources, the same pin, so the same bytes), and a
// reload of a server must not wait on a network fetch; otherwise the sources are expanded again, and the new result is kept only
// when it has no problem. One entry: a process serves one manifest. A reused result hands out
// the same tool objects as before: the manifest pipeline only fills schema defaults into them
// (already filled the first time) and freezes them, so the running catalog and the next share them.
// After a fresh expansion of 1 MiB of documents or more, the heap is released (release-heap.ts):
// the parsed documents are garbage by then and would otherwise stay in the RSS.

import { createHash } from 'node:crypto';
import type { OpenApiSource } from '../core/manifest-types.gen.js';
import { isUrl, MAX_DOCUMENT_BYTES } from './document.js';
import { readBoundedSync } from '../util/read-bounded.js';
import { releaseHeap } from '../util/release-heap.js';
import { expandOpenApi, type ExpandOptions, type Expanded } from './expand.js';

/** From this much document text on, the parsed documents (garbage once translated) are handed back to the OS at once. */
const RELEASE_AFTER_BYTES = 1 << 20;

let last: { key: string; result: Expanded } | undefined;

export function expandOpenApiCached(sources: readonly OpenApiSource[], opts: ExpandOptions): Expanded {
  const key = `${opts.baseDir}\u0000${opts.offline === true}\u0000${JSON.stringify(sources)}`;
  if (last?.key === key && last.result.files.every((f, i) => isUrl(f) || hashOf(f) === last!.result.hashes[i])) return last.result;
  last = undefined; // never keep two: the old result would outlive its catalog
  const result = expandOpenApi(sources, opts);
  last = { key, result };
  if (result.bytes >= RELEASE_AFTER_BYTES) releaseHeap();
  return result;
}

/** sha256 (hex) of the file's bytes now; undefined when it cannot be read, is not a regular file or is over the bound. */
function hashOf(file: string): string | undefined {
  try {
    return createHash('sha256').update(readBoundedSync(file, MAX_DOCUMENT_BYTES)).digest('hex');
  } catch {
    return undefined;
  }
}
