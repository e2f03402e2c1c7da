// The http backend's target URL. Guarantees: a placeholder fed by a path parameter takes that
// parameter's serialization (already percent-encoded by its style), any other placeholder its
// argument's percent-encoded text; query parameters are appended before any fragment; the result
// must be an http(s) URL without "." or ".." path segments (in any spelling), else the manifest's
// url is BACKEND_CONFIG and the arguments' INVALID_INPUT — so no argument can form another path.

import { SvcError } from '../../errors.js';
import type { Template } from '../template.js';
import type { RequestParts } from './http-request.js';

type Vars = Record<string, unknown>;

/** Placeholders of path parameters take their serialization (already encoded), others their percent-encoded text; query parameters are appended. */
export function renderUrl(t: Template, input: Vars, parts: RequestParts): URL {
  let raw: string;
  const vars = parts.pathArgs.size ? { ...input, ...parts.pathValues(input) } : input;
  try {
    raw = t.render(vars, (v, name) => (parts.pathArgs.has(name) ? v : encodeURIComponent(v)));
  } catch {
    throw new SvcError('INVALID_INPUT', 'a URL argument is not valid Unicode');
  }
  const query = parts.query(input);
  if (query) {
    const hash = raw.indexOf('#');
    const [base, fragment] = hash < 0 ? [raw, ''] : [raw.slice(0, hash), raw.slice(hash)];
    raw = base + (!base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&') + query + fragment;
  }
  return checkUrl(raw, (msg) => new SvcError('INVALID_INPUT', `the arguments make a bad URL: ${msg}`));
}

export function checkUrl(raw: string, err: (msg: string) => SvcError): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw err('not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw err('only http and https are allowed');
  // WHATWG URL parsing removes "." and ".." (also %2e forms) segments: refuse them before it does.
  const path = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*([^?#]*)/i.exec(raw)?.[1] ?? '';
  if (path.split(/[/\\]/).some((s) => /^(?:\.|%2e){1,2}$/i.test(s))) throw err('"." and ".." path segments are refused');
  return u;
}
