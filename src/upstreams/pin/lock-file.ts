// The pin lock file: what the operator accepted of each pinned upstream. Guarantees: it lives
// beside the manifest, named after it (svc.yaml → svc.lock.json); its text is a function of
// its content alone — keys in canonical order at every depth, two-space indent, one member a
// line, a final newline — so a change upstream is a small reviewable diff in Git and
// rewriting an unchanged lock changes no byte; it is written atomically (a temp file in
// the same folder, fsynced, then renamed over the old one: a reader sees the old file
// or the new one, never half of one); reading it
// accepts exactly the shape written here, and each definition's digest must match its
// content (a hand edit of one without the other is LOCK_INVALID, never a silent unpin).
// A missing file reads as `undefined` (no upstream accepted yet); an unreadable one is
// FILE_UNREADABLE; a corrupt one is LOCK_INVALID with its line or its JSON path (an RFC 6901
// pointer: a `/` or `~` in a name, as a resource URI has, is written ~1 or ~0).

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, extname, join } from 'node:path';
import { SvcError } from '../../errors.js';
import { digest, sortedKeys } from './canonical-json.js';
import { KINDS, type ListName, type Pinned } from './pinned-definitions.js';

export const LOCK_VERSION = 1;

/** One upstream's accepted definitions: per list, key (name, uri or uriTemplate) → pinned content. */
export type UpstreamLock = { readonly [L in ListName]?: Readonly<Record<string, Pinned>> };

export interface Lock {
  readonly upstreams: Readonly<Record<string, UpstreamLock>>;
}

/** The lock file of a manifest: its name with .yaml/.yml (or any extension) replaced by .lock.json, in its folder. */
export function lockPathFor(manifestPath: string): string {
  const base = basename(manifestPath);
  const ext = extname(base);
  return join(dirname(manifestPath), `${ext ? base.slice(0, -ext.length) : base}.lock.json`);
}

/** The lock with one upstream's entry replaced (an empty entry is still recorded: "accepted: nothing"). */
export function withUpstream(lock: Lock | undefined, name: string, entry: UpstreamLock): Lock {
  return { upstreams: { ...lock?.upstreams, [name]: entry } };
}

export function serializeLock(lock: Lock): string {
  return JSON.stringify(sortedKeys({ version: LOCK_VERSION, upstreams: lock.upstreams }), null, 2) + '\n';
}

/** Reads the lock file; undefined when there is none. */
export function readLock(file: string): Lock | undefined {
  return readLockFile(file).lock;
}

/** Reads the lock file and the sha256 (hex) of its bytes (for a watcher that compares bytes). */
export function readLockFile(file: string): { lock?: Lock; hash?: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return {};
    throw new SvcError('FILE_UNREADABLE', `cannot read the lock file: ${err.code ?? err.message}`, { file, cause: e });
  }
  return { lock: parseLock(bytes.toString('utf8'), file), hash: createHash('sha256').update(bytes).digest('hex') };
}

export function parseLock(text: string, file: string): Lock {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec((e as Error).message);
    const at = pos ? lineCol(text, Number(pos[1])) : {};
    throw new SvcError('LOCK_INVALID', `not JSON: ${(e as Error).message}`, { file, ...at });
  }
  const bad = (segments: readonly string[], why: string): never => {
    const path = jsonPointer(segments);
    throw new SvcError('LOCK_INVALID', `${path || '(top)'}: ${why}`, { file, path });
  };
  const object = (v: unknown, path: readonly string[]): Record<string, unknown> =>
    (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : bad(path, 'must be an object'));
  const top = object(doc, []);
  for (const k of Object.keys(top)) if (k !== 'version' && k !== 'upstreams') bad([k], 'unknown member');
  if (top.version !== LOCK_VERSION) bad(['version'], `must be ${LOCK_VERSION} (written by another fastsvc version?)`);
  // Built with Object.fromEntries: a key such as "__proto__" stays an own member, as JSON.parse made it.
  const upstreams = Object.entries(object(top.upstreams, ['upstreams'])).map(([name, raw]): [string, UpstreamLock] => {
    const up = object(raw, ['upstreams', name]);
    return [name, Object.fromEntries(Object.keys(up).map((list) => {
      const rule = KINDS.find((r) => r.list === list) ?? bad(['upstreams', name, list], `unknown list (${KINDS.map((r) => r.list).join(', ')})`);
      const defs = Object.entries(object(up[list], ['upstreams', name, list])).map(([key, p]): [string, Pinned] => {
        const path = ['upstreams', name, list, key];
        const pinned = object(p, path);
        const definition = object(pinned.definition, [...path, 'definition']);
        if (Object.keys(pinned).some((k) => k !== 'digest' && k !== 'definition')) bad(path, 'only digest and definition are allowed');
        if (definition[rule.key] !== key) bad([...path, 'definition', rule.key], `must be ${JSON.stringify(key)}, the key it is listed under`);
        let actual: string;
        try {
          actual = digest(definition);
        } catch (e) {
          return bad([...path, 'definition'], (e as Error).message);
        }
        if (pinned.digest !== actual) bad([...path, 'digest'], 'does not match the definition (edited by hand?): run `fastsvc upstreams accept` to record what the upstream serves');
        return [key, { digest: actual, definition }];
      });
      return [rule.list, Object.fromEntries(defs)];
    }))];
  });
  return { upstreams: Object.fromEntries(upstreams) };
}

/** Writes the lock atomically: temp file beside it, fsync, rename over it. */
export function writeLock(file: string, lock: Lock): void {
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, serializeLock(lock));
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
}

/** The RFC 6901 pointer of a member path: '' for the top, each name with ~ as ~0 and / as ~1. */
export function jsonPointer(segments: readonly string[]): string {
  return segments.map((s) => '/' + s.replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

/** The member path of an RFC 6901 pointer (jsonPointer's inverse). */
export function pointerSegments(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function lineCol(text: string, pos: number): { line: number; col: number } {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  return { line, col: pos - before.lastIndexOf('\n') };
}
