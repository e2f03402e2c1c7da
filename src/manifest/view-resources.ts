// The ui:// resources of a manifest's views (views.ts plans them), built when a manifest is
// assembled. Guarantees: a view file is read like a resource `file` but held to its folder —
// its real path (symlinks resolved) must stay inside the manifest's real folder, at load and
// at every read; it is read on every read (it may change), at most VIEW_MAX_BYTES, and must
// look like HTML (its first non-blank character is "<"); a load with a missing, escaping,
// oversized or non-HTML file fails at the tool's ui.view line; a template view's page is built
// once (view-shell.ts); each view is served with MIME type text/html;profile=mcp-app, its
// _meta.ui, and its required scopes.

import { open, realpath } from 'node:fs/promises';
import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { SvcError } from '../errors.js';
import type { ResourceContents, ResourceDef } from '../core/types.js';
import { VIEW_MIME_TYPE, viewShell } from '../runtime/view-shell.js';
import type { ViewPlan } from './views.js';

/** Largest view file served (a view is a page, not a bundle of assets). */
export const VIEW_MAX_BYTES = 4 * 1024 * 1024;

type Reader = ResourceDef['read'];

/** The resource of one view, without its reader. */
export function viewResourceMeta(v: ViewPlan): Omit<ResourceDef, 'read'> {
  return {
    uri: v.uri,
    name: v.uri.slice('ui://'.length),
    title: v.title,
    description: `MCP Apps view of ${v.tools.length === 1 ? 'tool' : 'tools'} ${v.tools.join(', ')}`,
    mime_type: VIEW_MIME_TYPE,
    required_scopes: [...v.requiredScopes],
    ui: v.meta,
    revision: JSON.stringify([v.source, v.title]),
  };
}

/** The reader of a view; a view file is checked now (it must exist, stay in the folder, fit and be HTML). */
export async function viewReader(v: ViewPlan, manifestDir: string): Promise<Reader> {
  if ('template' in v.source) {
    const text = viewShell(v.source.template, v.title);
    return (uri) => [{ uri, mimeType: VIEW_MIME_TYPE, text }];
  }
  const rel = v.source.file;
  let folder: string;
  try {
    folder = realpathSync(manifestDir);
  } catch {
    throw new SvcError('FILE_UNREADABLE', `the manifest's folder cannot be resolved`, { path: 'view' });
  }
  const path = resolve(folder, rel);
  const text = await readView(folder, path, rel, (code, message) => new SvcError(code, message, { path: 'view' }));
  if (!/^\uFEFF?\s*</.test(text)) throw new SvcError('VIEW_INVALID', `${JSON.stringify(rel)} does not look like HTML (its first character should be "<")`, { path: 'view' });
  return async (uri): Promise<ResourceContents[]> => [{
    uri,
    mimeType: VIEW_MIME_TYPE,
    text: await readView(folder, path, rel, (_code, message) => new SvcError('BACKEND_FAILED', message, { data: { reason: 'view_unreadable' } })),
  }];
}

/** The view file's text, refusing one that leaves the folder, is not a file or is too large; errors name only `rel`. */
async function readView(folder: string, path: string, rel: string, fail: (code: 'FILE_UNREADABLE' | 'VIEW_INVALID', message: string) => SvcError): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (e) {
    throw fail('FILE_UNREADABLE', `view ${JSON.stringify(rel)} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'io_error'})`);
  }
  if (!real.startsWith(folder + sep)) throw fail('VIEW_INVALID', `view ${JSON.stringify(rel)} resolves outside the manifest's folder (a symlink?)`);
  if (!isFile(real)) throw fail('VIEW_INVALID', `view ${JSON.stringify(rel)} is not a file`);
  const fh = await open(real, 'r').catch((e: NodeJS.ErrnoException) => {
    throw fail('FILE_UNREADABLE', `view ${JSON.stringify(rel)} cannot be read (${e.code ?? 'io_error'})`);
  });
  try {
    // Room for one byte more than the limit, so a file that grew since its stat is caught too.
    const buf = Buffer.alloc(Math.min((await fh.stat()).size, VIEW_MAX_BYTES) + 1);
    let got = 0;
    for (let n = -1; n !== 0 && got < buf.length;) {
      n = (await fh.read(buf, got, buf.length - got, got)).bytesRead;
      got += n;
    }
    if (got > VIEW_MAX_BYTES) throw fail('VIEW_INVALID', `view ${JSON.stringify(rel)} is larger than ${VIEW_MAX_BYTES} bytes`);
    return buf.subarray(0, got).toString('utf8');
  } finally {
    await fh.close();
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
