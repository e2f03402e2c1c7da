// The content backend: static content blocks (text, image, audio, resource,
// resource_link), their text and uri templated with the call's arguments; also
// a prompt message's content. Guarantees: files a block names (relative to the
// manifest) are read once, when built — FILE_UNREADABLE at its `file` field when
// they cannot be; a missing mime type is guessed from the file's extension.

import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { SvcError } from '../../errors.js';
import { compileTemplate } from '../template.js';
import type { ContentBlock } from '../../core/types.js';
import type { ContentBlock as ContentSpec } from '../../core/manifest-types.gen.js';
import type { BackendEnv } from './contract.js';

/** A static content block, its text templated with the call's arguments. */
export function contentBlock(c: ContentSpec, env: BackendEnv): (vars: Record<string, unknown>) => ContentBlock {
  switch (c.type) {
    case 'text': {
      const tpl = compileTemplate(c.text ?? '');
      return (vars) => ({ type: 'text', text: tpl.render(vars) });
    }
    case 'image':
    case 'audio': {
      const data = c.data ?? (c.file ? readDataFile(c.file, env).toString('base64') : '');
      const mimeType = c.mime_type ?? guessMime(c.file ?? '');
      return () => ({ type: c.type as 'image' | 'audio', data, mimeType });
    }
    case 'resource': {
      const tpl = c.text !== undefined ? compileTemplate(c.text) : undefined;
      const uriTpl = compileTemplate(c.uri ?? 'about:blank');
      const mimeType = c.mime_type ?? 'text/plain';
      return (vars) => {
        const uri = uriTpl.render(vars);
        return { type: 'resource', resource: tpl ? { uri, mimeType, text: tpl.render(vars) } : { uri, mimeType, blob: c.blob ?? '' } };
      };
    }
    case 'resource_link':
      return () => ({ type: 'resource_link', uri: c.uri ?? '', name: c.name ?? c.uri ?? '', ...(c.mime_type && { mimeType: c.mime_type }) });
  }
}

/** Reads a file the manifest names (relative to it); FILE_UNREADABLE at the `file` field when it cannot. */
function readDataFile(rel: string, env: BackendEnv): Buffer {
  try {
    return readFileSync(resolve(env.manifestDir, rel));
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read ${JSON.stringify(rel)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { path: 'file' });
  }
}

const MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg' };

function guessMime(file: string): string {
  return MIME[extname(file).toLowerCase()] ?? 'application/octet-stream';
}
