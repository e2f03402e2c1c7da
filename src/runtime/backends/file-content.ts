// Resource content from a file. Guarantees: text MIME types come back as {text}
// (UTF-8), every other type as {blob} (base64); an unreadable file is
// BACKEND_FAILED naming only the file's base name, never the server's layout.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../errors.js';
import type { ResourceContents } from '../../core/types.js';

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-ndjson',
  'application/x-sh',
]);

/** True for MIME types whose content is text (text/*, JSON, XML, YAML and their +suffix forms). */
export function isTextMime(mimeType: string): boolean {
  const base = mimeType.split(';')[0]!.trim().toLowerCase();
  return base.startsWith('text/') || TEXT_TYPES.has(base) || /\+(json|xml|yaml)$/.test(base);
}

export async function readFileContent(absPath: string, uri: string, mimeType: string): Promise<ResourceContents> {
  let buf: Buffer;
  try {
    buf = await readFile(absPath);
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? 'io_error';
    throw new SvcError('BACKEND_FAILED', `cannot read resource file ${path.basename(absPath)} (${reason})`, { data: { reason } });
  }
  return isTextMime(mimeType) ? { uri, mimeType, text: buf.toString('utf8') } : { uri, mimeType, blob: buf.toString('base64') };
}
