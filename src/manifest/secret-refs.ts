// Secrets of backend credentials may not be written in the manifest in clear: each must be a
// ${VAR} reference (its value then comes from the environment) or given by its *_file field.
// Guarantees: the check reads the source text where the value stands (the loader has already
// put the variable's value in its place), so `bearer: ${API_TOKEN}` passes and `bearer: abc123`
// is SECRET_LITERAL at that line:col, quoted or not, in YAML or JSON; the secret's characters are
// never put in the message.

import type { SvcManifest } from '../core/manifest-types.gen.js';
import { SvcError } from '../errors.js';
import { outboundSecretPaths } from '../outbound/credential-checks.js';
import { declaredAuths } from './outbound-checks.js';
import type { Source } from './load.js';

/** A value written as a reference: an optional quote, then `${`. */
const REFERENCE = /^["']?\$\{/;
/** A flow collection: where a large manifest's index places a node inside one (position-index.ts). */
const FLOW = /^[{[]/;

export function literalSecretProblems(m: SvcManifest, src: Pick<Source, 'file' | 'text' | 'locate'>): SvcError[] {
  const lines = src.text.split('\n');
  const problems: SvcError[] = [];
  for (const d of declaredAuths(m)) {
    for (const rel of outboundSecretPaths(d.auth)) {
      const path = [...d.path, ...rel];
      const { line, col } = src.locate(path);
      const at = lines[line - 1]?.slice(col - 1) ?? '';
      const key = String(rel[rel.length - 1]);
      const written = REFERENCE.test(at) || (FLOW.test(at) && new RegExp(`\\b${key}["']?\\s*:\\s*["']?\\$\\{`).test(at));
      if (!written) {
        problems.push(new SvcError('SECRET_LITERAL', `${d.who}: ${path.slice(d.path.length).join('.')} is written in clear; write \${VAR} or use ${key}_file`, { file: src.file, line, col, path: '/' + path.join('/') }));
      }
    }
  }
  return problems;
}
