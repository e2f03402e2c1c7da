// The http backend's `parameters` and `request_body`, checked and compiled. Guarantees: a spec
// that cannot work is refused when it is built (BACKEND_CONFIG at the field concerned): a style
// its location does not allow, a parameter or argument given twice, a path parameter whose
// {{arg}} is not in the url's path (so no parameter can choose the scheme, host or port), a
// header parameter fastsvc or `auth` sets itself (Authorization, Cookie, Content-Type, …) or
// that `headers` already sets, cookie parameters beside a Cookie header, request_body beside
// body or on GET; at call time an absent argument sends nothing, a path argument is required.

import { SvcError } from '../../errors.js';
import { configError } from './common.js';
import { formBody, serializeParameter, STYLES, type ParameterShape } from './http-parameters.js';
import type { HttpSpec } from './contract.js';

const KIND = 'http';
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Headers a parameter may not set: fastsvc sets them (body, cookies, credentials, framing). */
const RESERVED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'content-type', 'content-length', 'accept', 'host', 'transfer-encoding', 'connection', 'traceparent', 'tracestate']);

type Vars = Record<string, unknown>;
interface Param extends ParameterShape {
  arg: string;
}

export interface RequestParts {
  /** Arguments whose url placeholder is filled by a path parameter's serialization (already encoded). */
  readonly pathArgs: ReadonlySet<string>;
  /** The url placeholder values of the path parameters; throws INVALID_INPUT for a missing one. */
  pathValues(input: Vars): Vars;
  /** The query string (without "?"), or "" when no query parameter is sent. */
  query(input: Vars): string;
  /** Header and Cookie parameters as [name, value] pairs. */
  headers(input: Vars): [string, string][];
  /** The request_body argument as a payload, or undefined. */
  body(input: Vars): { payload: string; contentType: string } | undefined;
}

/** The header (lower case) an http backend's `auth` sets, if it has one. */
export function authHeaderOf(spec: Pick<HttpSpec, 'auth'>): string | undefined {
  return spec.auth && (spec.auth.static?.header ?? 'authorization').toLowerCase();
}

/** `authHeader`: the header `auth` sets (lower case), which no parameter may set. Pure: compile runs it too. */
export function compileRequestParts(spec: HttpSpec, authHeader: string | undefined): RequestParts {
  const params = (spec.parameters ?? []).map((p, i) => checkParam(p as Param, i, spec, authHeader));
  const fed = new Map<string, number>();
  const placed = new Map<string, number>();
  params.forEach((p, i) => {
    const where = p.in === 'header' ? `header ${p.name.toLowerCase()}` : `${p.in} ${p.name}`;
    if (placed.has(where)) throw configError(KIND, `parameters/${placed.get(where)} already sends ${where}`, `parameters/${i}/name`);
    placed.set(where, i);
    if (fed.has(p.arg)) throw configError(KIND, `argument ${p.arg} already feeds parameters/${fed.get(p.arg)}; give this one another arg`, `parameters/${i}`);
    fed.set(p.arg, i);
  });
  const rb = spec.request_body;
  if (rb) {
    if (spec.body !== undefined) throw configError(KIND, 'give either body (a template) or request_body (one argument), not both', 'request_body');
    if (spec.method === 'GET') throw configError(KIND, 'GET requests take no body', 'request_body');
    if (fed.has(rb.arg!)) throw configError(KIND, `argument ${rb.arg} already feeds parameters/${fed.get(rb.arg!)}`, 'request_body/arg');
  }
  const path = params.filter((p) => p.in === 'path');
  const query = params.filter((p) => p.in === 'query');
  const header = params.filter((p) => p.in === 'header');
  const cookie = params.filter((p) => p.in === 'cookie');
  return {
    pathArgs: new Set(path.map((p) => p.arg)),
    pathValues(input) {
      const out: Vars = {};
      for (const p of path) {
        if (input[p.arg] === undefined) throw new SvcError('INVALID_INPUT', `argument ${p.arg} is required (path parameter ${p.name})`, { data: { argument: p.arg } });
        out[p.arg] = serializeParameter(p, input[p.arg]);
      }
      return out;
    },
    query: (input) => sent(query, input).join('&'),
    headers(input) {
      const out = header.filter((p) => input[p.arg] !== undefined).map((p): [string, string] => [p.name, serializeParameter(p, input[p.arg])!]);
      const cookies = sent(cookie, input);
      if (cookies.length) out.push(['cookie', cookies.join('; ')]);
      return out;
    },
    body(input) {
      const value = rb && input[rb.arg!];
      if (value === undefined) return undefined;
      const contentType = rb!.content_type!;
      return { payload: contentType === 'application/json' ? JSON.stringify(value) : formBody(value, rb!.arg!), contentType };
    },
  };
}

function sent(params: Param[], input: Vars): string[] {
  const out: string[] = [];
  for (const p of params) {
    if (input[p.arg] === undefined) continue;
    const s = serializeParameter(p, input[p.arg]);
    if (s !== undefined) out.push(s);
  }
  return out;
}

function checkParam(p: Param, i: number, spec: HttpSpec, authHeader: string | undefined): Param {
  const at = `parameters/${i}`;
  const arg = p.arg ?? p.name;
  if (!STYLES[p.in].includes(p.style)) {
    throw configError(KIND, `style ${p.style} is not allowed for a ${p.in} parameter (${p.in} takes ${STYLES[p.in].join(', ')})`, `${at}/style`);
  }
  const has = (name: string) => Object.keys(spec.headers).some((k) => k.toLowerCase() === name);
  if (p.in === 'path') {
    if (!ARG_NAME.test(arg)) throw configError(KIND, `path parameter ${p.name} needs an arg that can be a {{placeholder}} (letters, digits, _)`, `${at}/${p.arg === undefined ? 'name' : 'arg'}`);
    // The path: what follows the scheme and authority, up to the query or fragment.
    const urlPath = /^[^:/?#]*:\/\/[^/?#]*([^?#]*)/.exec(spec.url)?.[1] ?? '';
    const placeholder = new RegExp(`\\{\\{\\s*${arg}\\s*\\}\\}`, 'g');
    const inPath = urlPath.match(placeholder)?.length ?? 0;
    if (!inPath) throw configError(KIND, `path parameter ${p.name}: the url's path has no {{${arg}}} placeholder for it`, at);
    if (inPath !== spec.url.match(placeholder)!.length) throw configError(KIND, `path parameter ${p.name}: {{${arg}}} may stand only in the url's path`, at);
  }
  if (p.in === 'header' || p.in === 'cookie') {
    if (!HEADER_NAME.test(p.name)) throw configError(KIND, `${p.in} parameter name ${JSON.stringify(p.name)} is not a valid token`, `${at}/name`);
  }
  if (p.in === 'header') {
    const lower = p.name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) throw configError(KIND, `header ${p.name} is set by fastsvc (or auth), not by a parameter`, `${at}/name`);
    if (lower === authHeader) throw configError(KIND, `auth sets the ${lower} header: no parameter may`, `${at}/name`);
    if (has(lower)) throw configError(KIND, `header ${p.name} is already set in headers`, `${at}/name`);
  }
  if (p.in === 'cookie' && (has('cookie') || authHeader === 'cookie')) throw configError(KIND, `cookie parameters and a Cookie header ${authHeader === 'cookie' ? 'set by auth' : 'in headers'} cannot be combined`, at);
  return { ...p, arg };
}
