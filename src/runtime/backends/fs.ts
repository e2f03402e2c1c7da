// The fs backend: read a file, list a folder, or (only when declared) write a file
// under a root; its reading rules also serve a folder of files as resources (folder-files.ts). Guarantees: absolute paths, ".." segments (also percent-encoded),
// NUL bytes and anything whose realpath leaves the root are refused as INVALID_INPUT;
// opens never follow a symlink at the last component (O_NOFOLLOW); reads are capped.

import { constants, realpathSync, statSync } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../errors.js';
import type { CallContext } from '../../core/types.js';
import { compileTemplate, type Template } from '../template.js';
import { abortedError, byteLimit, configError } from './common.js';
import { type BackendEnv, type BackendFn, type FsSpec } from './contract.js';

const KIND = 'fs';
const { O_RDONLY, O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;
const CHUNK = 64 * 1024;

export interface FsEntry {
  name: string;
  type: 'file' | 'dir' | 'other';
  size: number;
}

export function fsBackend(spec: FsSpec, env: BackendEnv): BackendFn {
  if (spec.op !== 'read' && spec.op !== 'list' && spec.op !== 'write') throw configError(KIND, `unknown op ${JSON.stringify(spec.op)}`);
  const root = resolveRoot(env.manifestDir, spec.root);
  const pathT = compileTemplate(spec.path);
  const maxBytes = byteLimit(KIND, spec.max_bytes);
  const within = insideOf(root);

  const run: (rel: string, ctx: CallContext, input: Record<string, unknown>) => Promise<unknown> =
    spec.op === 'write'
      ? writer(root, within, compileTemplate(spec.content), maxBytes)
      : spec.op === 'read'
        ? (rel, ctx) => readFile(root, rel, within, maxBytes, ctx)
        : (rel, ctx) => listDir(root, rel, within, maxBytes, ctx);
  return async (input, ctx) => {
    const rel = safeRelative(pathT.render(input));
    if (ctx.signal.aborted) throw abortedError(KIND);
    try {
      return await run(rel, ctx, input);
    } catch (e) {
      throw mapError(e, rel);
    }
  };
}

/** The real path of the folder `root` (relative to the manifest), or BACKEND_CONFIG when it is no existing folder. */
export function resolveRoot(manifestDir: string, root: string): string {
  if (typeof root !== 'string' || root === '' || root.includes('\0')) throw configError(KIND, 'root must be a non-empty path', 'root');
  try {
    const real = realpathSync(path.resolve(manifestDir, root));
    if (statSync(real).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw configError(KIND, `root ${JSON.stringify(root)} is not an existing directory`, 'root');
}

/** Whether a real path is the root or inside it. */
function insideOf(root: string): (real: string) => boolean {
  return (real) => real === root || real.startsWith(root + path.sep);
}

function traversal(message: string): SvcError {
  return new SvcError('INVALID_INPUT', `${KIND} backend: ${message}`, { data: { reason: 'path_outside_root' } });
}

/** A normalized relative path ('' = the root) or INVALID_INPUT. */
export function safeRelative(p: string): string {
  if (p.includes('\0')) throw traversal('path contains a NUL byte');
  if (path.isAbsolute(p) || /^[\\/]/.test(p) || /^[A-Za-z]:/.test(p)) throw traversal('absolute paths are refused');
  const parts: string[] = [];
  for (const seg of p.split(/[\\/]+/)) {
    let decoded = seg;
    for (let i = 0; i < 3 && decoded.includes('%'); i++) {
      try {
        decoded = decodeURIComponent(decoded);
      } catch {
        break;
      }
    }
    if (seg === '..' || decoded === '..' || /[\\/\0]/.test(decoded)) throw traversal('".." and encoded separators are refused');
    if (seg !== '' && seg !== '.') parts.push(seg);
  }
  return parts.join('/');
}

async function realInside(root: string, rel: string, within: (p: string) => boolean): Promise<string> {
  const real = await realpath(path.join(root, rel));
  if (!within(real)) throw traversal('path leads outside the root');
  return real;
}

async function readFile(root: string, rel: string, within: (p: string) => boolean, max: number, ctx: CallContext): Promise<string> {
  return (await readBytes(root, rel, within, max, ctx)).toString('utf8');
}

/**
 * The bytes of the file `rel` (a path from safeRelative) under `root` (from resolveRoot), by the fs backend's
 * rules: its realpath inside the root, the last component not a symlink, at most `max` bytes; errors as the
 * fs backend gives them (naming the relative path only).
 */
export async function readUnder(root: string, rel: string, max: number, ctx: CallContext): Promise<Buffer> {
  try {
    return await readBytes(root, rel, insideOf(root), max, ctx);
  } catch (e) {
    throw mapError(e, rel);
  }
}

/** The entries of the folder `rel` under `root` (from resolveRoot), by the same rules; undefined when it is no folder inside the root. */
export async function entriesUnder(root: string, rel: string): Promise<{ name: string; dir: boolean }[] | undefined> {
  try {
    const real = await realInside(root, rel, insideOf(root));
    return (await readdir(real, { withFileTypes: true })).map((de) => ({ name: de.name, dir: de.isDirectory() }));
  } catch {
    return undefined;
  }
}

async function readBytes(root: string, rel: string, within: (p: string) => boolean, max: number, ctx: CallContext): Promise<Buffer> {
  const real = await realInside(root, rel, within);
  const fh = await open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw failed(`${rel || '.'} is not a file`, 'not_a_file');
    if (st.size > max) throw tooLarge(max);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      if (ctx.signal.aborted) throw abortedError(KIND);
      const { bytesRead, buffer } = await fh.read(Buffer.alloc(CHUNK), 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > max) throw tooLarge(max);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks);
  } finally {
    await fh.close();
  }
}

async function listDir(root: string, rel: string, within: (p: string) => boolean, max: number, ctx: CallContext): Promise<FsEntry[]> {
  const real = await realInside(root, rel, within);
  if (!(await stat(real)).isDirectory()) throw failed(`${rel || '.'} is not a directory`, 'not_a_directory');
  const dirents = await readdir(real, { withFileTypes: true });
  if (ctx.signal.aborted) throw abortedError(KIND);
  const entries = await Promise.all(
    dirents.map(async (de): Promise<FsEntry> => {
      const type = de.isFile() ? 'file' : de.isDirectory() ? 'dir' : 'other';
      const size = type === 'file' ? await lstat(path.join(real, de.name)).then((s) => s.size, () => 0) : 0;
      return { name: de.name, type, size };
    }),
  );
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (Buffer.byteLength(JSON.stringify(entries)) > max) throw tooLarge(max);
  return entries;
}

function writer(root: string, within: (p: string) => boolean, content: Template, max: number) {
  return async (rel: string, ctx: CallContext, input: Record<string, unknown>): Promise<{ path: string; bytes: number }> => {
    if (rel === '') throw new SvcError('INVALID_INPUT', `${KIND} backend: write needs a file name`);
    const data = Buffer.from(content.render(input), 'utf8');
    if (data.length > max) throw new SvcError('INVALID_INPUT', `${KIND} backend: content larger than ${max} bytes`, { data: { max_bytes: max } });
    const parent = await realInside(root, path.dirname(rel), within);
    if (ctx.signal.aborted) throw abortedError(KIND);
    // No O_TRUNC: check the opened file first (regular, single link) and truncate after.
    const fh = await open(path.join(parent, path.basename(rel)), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o644);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw failed(`${rel} is not a regular file`, 'not_a_file');
      if (st.nlink > 1) throw traversal('refusing to write a file with several hard links');
      await fh.truncate(0);
      await fh.write(data, 0, data.length, 0);
    } finally {
      await fh.close();
    }
    return { path: rel, bytes: data.length };
  };
}

function failed(message: string, reason: string): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: ${message}`, { data: { reason } });
}

function tooLarge(max: number): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: file larger than ${max} bytes`, { data: { reason: 'too_large', max_bytes: max } });
}

/** fs errors → codes; messages name the relative path only, never the server's layout. */
function mapError(e: unknown, rel: string): SvcError {
  if (e instanceof SvcError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const shown = rel || '.';
  switch (code) {
    case 'ELOOP':
      return traversal(`${shown} is a symbolic link`);
    case 'ENOENT':
    case 'ENOTDIR':
      return failed(`${shown} does not exist`, 'not_found');
    case 'EISDIR':
      return failed(`${shown} is a directory`, 'not_a_file');
    case 'EACCES':
    case 'EPERM':
      return failed(`${shown}: permission denied`, 'permission_denied');
    default:
      return failed(`${shown}: ${code ?? 'I/O error'}`, code ?? 'io_error');
  }
}
