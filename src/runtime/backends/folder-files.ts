// A folder of files as resources: a resource whose `file` holds its URI template's variables
// (`uri_template: docs://{+path}`, `file: docs/{{path}}`) reads the file they name. Guarantees:
// the folder is the part of `file` before its first variable (it must exist when the manifest is
// loaded); a read renders the rest from the URI's variables and reads it by the fs backend's rules
// (fs.ts: no absolute path, no `..` — encoded or not —, no NUL, its realpath inside the folder, the
// last component not a symlink, at most max bytes), so no URI reaches a file outside the folder;
// text MIME types come back as text, others base64; completion of the last variable lists the
// folder's entries under the value typed so far (folders with a trailing /), at most 100, never
// outside the folder; a name starting with a dot (.env, .git/) is neither read nor offered; a file
// that is not there is NOT_FOUND, as a URI no resource matches.

import type { Completion, ResourceContents } from '../../core/types.js';
import { compileTemplate } from '../template.js';
import { isTextMime } from './file-content.js';
import { entriesUnder, readUnder, resolveRoot, safeRelative } from './fs.js';
import type { CallContext } from '../../core/types.js';
import { isSvcError, SvcError } from '../../errors.js';

/** The most bytes one file read gives (the fs backend's default). */
const MAX_BYTES = 1024 * 1024;
const MAX_VALUES = 100;

export interface FolderFiles {
  read(uri: string, vars: Record<string, string>, ctx: CallContext): Promise<ResourceContents[]>;
  /** Completion of a variable of the path; values for the last one only. */
  complete(argument: string, value: string): Promise<Completion>;
}

/** Where a templated `file` starts: the folder before its first variable, and the path template after it. */
export function folderOf(file: string): { folder: string; rest: string } {
  const first = file.indexOf('{{');
  const cut = file.lastIndexOf('/', first) + 1;
  return { folder: file.slice(0, cut) || '.', rest: file.slice(cut) };
}

export function folderFiles(file: string, manifestDir: string, mimeType: string): FolderFiles {
  const { folder, rest } = folderOf(file);
  let root: string;
  try {
    root = resolveRoot(manifestDir, folder);
  } catch {
    throw new SvcError('BACKEND_CONFIG', `${JSON.stringify(folder)} (the folder before the first {{variable}} of file) is not an existing folder`);
  }
  const path = compileTemplate(rest);
  const last = [...rest.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].at(-1)?.[1];
  const text = isTextMime(mimeType);
  return {
    async read(uri, vars, ctx) {
      const rel = safeRelative(path.render(vars));
      if (rel.split('/').some((seg) => seg.startsWith('.'))) throw notFound(uri);
      let bytes: Buffer;
      try {
        bytes = await readUnder(root, rel, MAX_BYTES, ctx);
      } catch (e) {
        if (isSvcError(e) && e.data?.reason === 'not_found') throw notFound(uri);
        throw e;
      }
      return [text ? { uri, mimeType, text: bytes.toString('utf8') } : { uri, mimeType, blob: bytes.toString('base64') }];
    },
    async complete(argument, value) {
      if (argument !== last || value.includes('\0')) return { values: [] };
      const slash = value.lastIndexOf('/');
      let dir: string;
      try {
        dir = safeRelative(value.slice(0, slash + 1));
      } catch {
        return { values: [] };
      }
      const prefix = value.slice(slash + 1);
      const entries = (await entriesUnder(root, dir)) ?? [];
      const values = entries.filter((e) => e.name.startsWith(prefix) && !e.name.startsWith('.'))
        .map((e) => `${value.slice(0, slash + 1)}${e.name}${e.dir ? '/' : ''}`).sort();
      return { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES };
    },
  };
}

function notFound(uri: string): SvcError {
  return new SvcError('NOT_FOUND', `no resource ${uri}`, { data: { uri } });
}
