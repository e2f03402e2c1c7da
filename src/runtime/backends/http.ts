// The http backend: one templated HTTP call per tool call. Guarantees: URL values
// are percent-encoded and may not form dot segments; header values never carry
// CR/LF; the response is capped at max_bytes while streaming; redirects are
// followed (≤ 5) only within the same origin; non-2xx → BACKEND_FAILED {status, body};
// the active trace context is sent on as `traceparent`/`tracestate` (W3C) when an
// OpenTelemetry SDK is registered, unless the manifest sets that header itself. With `auth`, the
// backend's own credential (auth/outbound/) is set on every request — never the caller's token;
// a fetched token the backend answers 401 to is replaced and the request sent once more —
// and the URL's scheme, host and port are fixed in the manifest (no argument can send the
// credential elsewhere; redirects stay on that origin); the header it sets may not also be
// among `headers`.

import { context, propagation } from '@opentelemetry/api';
import { SvcError } from '../../errors.js';
import { createOutboundCredential, type OutboundCredential, type OutboundHeader } from '../../auth/outbound/index.js';
import type { CallContext } from '../../core/types.js';
import { compileTemplate, lookup, type Template } from '../template.js';
import { abortedError, byteLimit, configError, deadline, head, positiveInt } from './common.js';
import { type BackendEnv, type BackendFn, type HttpSpec } from './types.js';

const KIND = 'http';
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// CR/LF/NUL and other controls (header injection), and what HTTP cannot carry (> U+00FF).
const BAD_HEADER_VALUE = /[^\t\x20-\xff]/;
const MAX_REDIRECTS = 5;
const HEADER_SETTER = { set: (h: Headers, k: string, v: string) => h.set(k, v) };
const ERROR_BODY_BYTES = 4096;

type Vars = Record<string, unknown>;
type BodyFn = (vars: Vars) => unknown;

export interface HttpOptions {
  /** Resolve with the raw body as a Buffer instead of text (binary resources). */
  bytes?: boolean;
}

export function httpBackend(spec: HttpSpec, env: BackendEnv, opts: HttpOptions = {}): BackendFn {
  const method = spec.method;
  if (!METHODS.has(method)) throw configError(KIND, `unknown method ${JSON.stringify(method)}`);
  const timeoutMs = positiveInt(KIND, 'timeout_ms', spec.timeout_ms);
  const maxBytes = byteLimit(KIND, spec.max_bytes);
  if (typeof spec.url !== 'string') throw configError(KIND, 'url must be a string');
  const url = compileTemplate(spec.url);
  checkUrl(url.render({}), (msg) => configError(KIND, `url ${JSON.stringify(spec.url)}: ${msg}`));
  const headers = compileHeaders(spec.headers);
  const body = spec.body === undefined ? undefined : compileBody(spec.body);
  if (body && (method === 'GET' || method === 'DELETE')) throw configError(KIND, `${method} requests take no body`);
  const hasContentType = Object.keys(spec.headers).some((k) => k.toLowerCase() === 'content-type');
  const credential = spec.auth && credentialOf(spec, env);

  return async (input, ctx) => {
    const target = renderUrl(url, input);
    const reqHeaders = new Headers();
    for (const [name, t] of headers) {
      const value = t.render(input);
      if (BAD_HEADER_VALUE.test(value)) {
        throw new SvcError('INVALID_INPUT', `header ${name} would contain a line break, a control or a non-Latin-1 character`, { data: { header: name } });
      }
      reqHeaders.set(name, value);
    }
    if (!reqHeaders.has('traceparent')) propagation.inject(context.active(), reqHeaders, HEADER_SETTER);
    let payload: string | undefined;
    if (body) {
      payload = JSON.stringify(body(input));
      if (!hasContentType) reqHeaders.set('content-type', 'application/json');
    }
    const req = { method, url: target, headers: reqHeaders, body: payload };
    const limits = { timeoutMs, maxBytes, bytes: !!opts.bytes };
    if (!credential) return send(req, limits, ctx);
    const sent = await credentialHeader(credential, ctx);
    reqHeaders.set(sent[0], sent[1]);
    try {
      return await send(req, limits, ctx);
    } catch (e) {
      // A fetched token the backend refused (revoked before its time): forgotten, and the request sent once more.
      if (!credential.refused || (e as SvcError).data?.status !== 401) throw e;
      credential.refused(ctx.principal, sent);
      const renewed = await credentialHeader(credential, ctx);
      reqHeaders.set(renewed[0], renewed[1]);
      return send(req, limits, ctx);
    }
  };
}

function credentialHeader(credential: OutboundCredential, ctx: CallContext): Promise<OutboundHeader> {
  return credential.header(ctx.principal, ctx.signal).catch((e: unknown) => {
    throw ctx.signal.aborted ? abortedError(KIND) : e;
  });
}

interface Request {
  method: string;
  url: URL;
  headers: Headers;
  body: string | undefined;
}

async function send(req: Request, lim: { timeoutMs: number; maxBytes: number; bytes: boolean }, ctx: CallContext): Promise<unknown> {
  const dl = deadline(KIND, lim.timeoutMs, ctx.signal);
  let { method, url, body } = req;
  const headers = new Headers(req.headers);
  try {
    for (let followed = 0; ; followed++) {
      const res = await fetch(url, { method, headers, body, redirect: 'manual', signal: dl.signal });
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        await res.body?.cancel();
        const next = redirectTarget(res, url);
        if (next.origin !== url.origin) {
          throw failed(`redirect to another origin refused`, { status: res.status, reason: 'cross_origin_redirect' });
        }
        if (followed >= MAX_REDIRECTS) throw failed(`more than ${MAX_REDIRECTS} redirects`, { status: res.status, reason: 'too_many_redirects' });
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers.delete('content-type');
        }
        url = next;
        continue;
      }
      if (!res.ok) {
        const { buf } = await readBody(res, ERROR_BODY_BYTES);
        throw failed(`upstream answered ${res.status}`, { status: res.status, body: head(new TextDecoder().decode(buf)) });
      }
      const { buf, over } = await readBody(res, lim.maxBytes);
      if (over) throw failed(`response larger than ${lim.maxBytes} bytes`, { reason: 'too_large', max_bytes: lim.maxBytes });
      return lim.bytes ? buf : new TextDecoder().decode(buf);
    }
  } catch (e) {
    if (e instanceof SvcError) throw e;
    if (dl.signal.aborted) throw dl.error();
    const cause = (e as { cause?: { code?: unknown } }).cause;
    const reason = typeof cause?.code === 'string' ? cause.code : 'request_failed';
    throw failed(`request failed (${reason})`, { reason }, e);
  }
}

function failed(message: string, data: Record<string, unknown>, cause?: unknown): SvcError {
  return new SvcError('BACKEND_FAILED', `${KIND} backend: ${message}`, { data, cause });
}

function redirectTarget(res: Response, base: URL): URL {
  const loc = res.headers.get('location');
  try {
    if (loc === null) throw new Error('no location');
    return new URL(loc, base);
  } catch {
    throw failed(`redirect without a usable Location`, { status: res.status, reason: 'bad_redirect' });
  }
}

/** Reads at most `limit` bytes; `over` says the body had more (the rest is cancelled). */
async function readBody(res: Response, limit: number): Promise<{ buf: Buffer; over: boolean }> {
  if (!res.body) return { buf: Buffer.alloc(0), over: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { buf: Buffer.concat(chunks), over: false };
    chunks.push(value);
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return { buf: Buffer.concat(chunks).subarray(0, limit), over: true };
    }
  }
}

function renderUrl(t: Template, input: Vars): URL {
  let raw: string;
  try {
    raw = t.render(input, encodeURIComponent);
  } catch {
    throw new SvcError('INVALID_INPUT', 'a URL argument is not valid Unicode');
  }
  return checkUrl(raw, (msg) => new SvcError('INVALID_INPUT', `the arguments make a bad URL: ${msg}`));
}

function checkUrl(raw: string, err: (msg: string) => SvcError): URL {
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

/** The backend's credential; its URL's origin must be fixed, and its header not set twice. */
function credentialOf(spec: HttpSpec, env: BackendEnv): OutboundCredential {
  if (/\{\{/.test(/^[^:]*:\/\/[^/?#]*/.exec(spec.url)?.[0] ?? spec.url)) {
    throw configError(KIND, 'with auth, the url\'s scheme, host and port must be written out: an argument may not choose where the credential goes', 'url');
  }
  const sets = (spec.auth!.static?.header ?? 'authorization').toLowerCase();
  if (Object.keys(spec.headers).some((k) => k.toLowerCase() === sets)) throw configError(KIND, `auth sets the ${sets} header: leave it out of headers`, 'headers');
  return createOutboundCredential(spec.auth!, { baseDir: env.manifestDir });
}

function compileHeaders(spec: Record<string, string>): [string, Template][] {
  if (spec === null || typeof spec !== 'object') throw configError(KIND, 'headers must be an object');
  return Object.entries(spec).map(([name, value]) => {
    if (!HEADER_NAME.test(name)) throw configError(KIND, `bad header name ${JSON.stringify(name)}`);
    if (typeof value !== 'string' || BAD_HEADER_VALUE.test(value)) {
      throw configError(KIND, `header ${name} must be a string without line breaks or control characters`);
    }
    return [name, compileTemplate(value)];
  });
}

/** String leaves are templates; a leaf that is exactly one placeholder keeps the argument's JSON type. */
function compileBody(node: unknown): BodyFn {
  if (typeof node === 'string') {
    const t = compileTemplate(node);
    if (t.single !== undefined) {
      const path = t.single.split('.');
      return (vars) => lookup(vars, path);
    }
    return (vars) => t.render(vars);
  }
  if (Array.isArray(node)) {
    const items = node.map(compileBody);
    return (vars) => items.map((f) => f(vars));
  }
  if (node !== null && typeof node === 'object') {
    const entries = Object.entries(node).map(([k, v]) => [k, compileBody(v)] as const);
    return (vars) => Object.fromEntries(entries.map(([k, f]) => [k, f(vars)]));
  }
  return () => node;
}
