// A fixed secret for a backend (auth.static): a bearer token or a named header's value, from
// ${VAR} (already in the manifest's value) or from a *_file read when the backend is built.
// Guarantees: the secret is read once, at build — a file that cannot be read, or is empty, fails
// the load (FILE_UNREADABLE, OUTBOUND_AUTH_CONFIG) and not the first call; a value with a line
// break or a control character is refused there too (it could not be a header); the error names
// the file, never its content.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OutboundStatic } from '../core/manifest-types.gen.js';
import { SvcError } from '../errors.js';
import type { OutboundHeader } from './credential.js';

const BAD_HEADER_VALUE = /[^\t\x20-\xff]/;

export function staticHeader(spec: OutboundStatic, baseDir: string): OutboundHeader {
  const bearer = spec.bearer ?? (spec.bearer_file === undefined ? undefined : readSecretFile(baseDir, spec.bearer_file, 'static/bearer_file'));
  if (bearer !== undefined) return ['authorization', `Bearer ${checked(bearer, 'static/bearer')}`];
  const value = spec.value ?? readSecretFile(baseDir, spec.value_file!, 'static/value_file');
  return [spec.header!, checked(value, 'static/value')];
}

/** A secret file's content, trimmed; credential-checks.ts has made sure a path is given where this is called. */
export function readSecretFile(baseDir: string, file: string, field: string): string {
  let text: string;
  try {
    text = readFileSync(resolve(baseDir, file), 'utf8').trim();
  } catch (e) {
    throw new SvcError('FILE_UNREADABLE', `cannot read secret file ${file}: ${(e as NodeJS.ErrnoException).code}`, { path: `auth/${field}` });
  }
  if (!text) throw new SvcError('OUTBOUND_AUTH_CONFIG', `secret file ${file} is empty`, { path: `auth/${field}` });
  return text;
}

function checked(secret: string, field: string): string {
  if (!secret || BAD_HEADER_VALUE.test(secret)) {
    throw new SvcError('OUTBOUND_AUTH_CONFIG', `the secret of ${field} is empty or holds a line break or a control character`, { path: `auth/${field}` });
  }
  return secret;
}
