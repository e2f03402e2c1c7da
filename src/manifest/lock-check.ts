// The pin lock as `fastsvc validate` checks it: the file `svc serve` reads beside the manifest
// before it serves (and refuses to start on when it is corrupt). Guarantees: the lock is read
// whenever the manifest has upstreams — as `svc serve` reads it, pinned or not (a reload may turn
// `pin` on) — with the server's own parser, and never written; a missing lock
// is no problem (a first start serves nothing of a pinned upstream until it is accepted); a corrupt
// one is one LOCK_INVALID problem at the lock file's LINE:COL — for a bad member, its JSON path
// located in the text; an unreadable one is FILE_UNREADABLE; each entry for an upstream the
// manifest does not declare is a LOCK_UPSTREAM_UNKNOWN warning at that entry (it serves nothing;
// `upstreams accept` never touches another upstream's entry, so it stays until removed by hand).

import { readFileSync } from 'node:fs';
import { SvcError } from '../errors.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';
import { jsonPointer, lockPathFor, parseLock, pointerSegments } from '../upstreams/pin/lock-file.js';
import { indexJson } from '../util/position-index.js';

/** A warning about another file than the manifest, located in that file. */
export interface FileWarning {
  code: 'LOCK_UPSTREAM_UNKNOWN';
  file: string;
  path: string;
  line: number;
  col: number;
  message: string;
}

/** The lock beside `manifestFile` (as the command line names it: the lock is named the same way), checked. */
export function lockProblems(m: SvcManifest, manifestFile: string): { problems: SvcError[]; warnings: FileWarning[] } {
  const none = { problems: [], warnings: [] };
  if (!m.upstreams?.length) return none;
  const file = lockPathFor(manifestFile);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return none;
    return { problems: [new SvcError('FILE_UNREADABLE', `cannot read the pin lock file: ${err.code ?? err.message}`, { file })], warnings: [] };
  }
  const at = (segments: readonly string[]) => indexJson(text)?.locate(segments, 'key') ?? { line: 1, col: 1 };
  let upstreams: string[];
  try {
    upstreams = Object.keys(parseLock(text, file).upstreams);
  } catch (e) {
    if (!(e instanceof SvcError) || e.code !== 'LOCK_INVALID') throw e;
    if (e.line === undefined && e.path !== undefined) Object.assign(e, at(pointerSegments(e.path)));
    return { problems: [e], warnings: [] };
  }
  const declared = new Set(m.upstreams.map((u) => u.name));
  return {
    problems: [],
    warnings: upstreams.filter((name) => !declared.has(name)).map((name) => ({
      code: 'LOCK_UPSTREAM_UNKNOWN', file, path: jsonPointer(['upstreams', name]), ...at(['upstreams', name]),
      message: `the lock has an entry for upstream ${JSON.stringify(name)}, which the manifest does not declare (renamed or removed?): nothing of it is served; remove the entry, or restore the upstream`,
    })),
  };
}
