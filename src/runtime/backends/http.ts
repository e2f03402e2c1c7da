// The http backend: one templated HTTP call per tool call. Guarantees: URL values
// are percent-encoded and may not form dot segments; header values never carry
// CR/LF; the response is capped at max_bytes while streaming; redirects are
// followed (≤ 5) only within the same origin; non-2xx → BACKEND_FAILED {status, body, api_message};
// the active trace context is sent on as `traceparent`/`tracestate` (W3C) when an
// OpenTelemetry SDK is registered, unless the manifest sets that header itself. With `auth`, the
// backend's own credential (outbound/) is set on every request — never the caller's token;
// a fetched token the backend answers 401 to is replaced and the request sent once more —
// and the URL's scheme, host and port are fixed in the manifest (no argument can send the
// credential elsewhere; redirects stay on that origin); the header it sets may not also be
// among `headers`. `parameters` and `request_body` (http-request.ts) place arguments OpenAPI-style;
// a tool's answer is mapped by http-reply.ts (JSON → structured content, …); a non-2xx answer's
// BACKEND_FAILED message carries the status and the API's own message.

import { context, propagation } from '@opentelemetry/api';
import { SvcError } from '../../errors.js';
import { createOutboundCredential, type OutboundCredential, type OutboundHeader } from '../../outbound/index.js';
import type { CallContext } from '../../core/types.js';
import { compileTemplate, lookup, type Template } from '../template.js';
import { checkUrl, renderUrl } from './http-url.js';
import { abortedError, byteLimit, configError, deadline, head, positiveInt } from './common.js';
import { authHeaderOf, compileRequestParts } from './http-request.js';
import { apiMessage, toolReply } from './http-reply.js';
import { type BackendEnv, type BackendFn, type HttpSpec } from './contract.js';

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
  /** Resolve with a tool's result (http-reply.ts: JSON → JsonReply, binary → a content block) instead of text. */
  tool?: boolean;
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
  const authHeader = authHeaderOf(spec);
  const parts = compileRequestParts(spec, authHeader);
  const credential = spec.auth && credentialOf(spec, env, authHeader!);

  return async (input, ctx) => {
    const target = renderUrl(url, input, parts);
    const reqHeaders = new Headers();
    for (const [name, value] of [...headers.map(([n, t]) => [n, t.render(input)] as const), ...parts.headers(input)]) {
      if (BAD_HEADER_VALUE.test(value)) {
        throw new SvcError('INVALID_INPUT', `header ${name} would contain a line break, a control or a non-Latin-1 character`, { data: { header: name } });
      }
      reqHeaders.set(name, value);
    }
    if (!reqHeaders.has('traceparent')) propagation.inject(context.active(), reqHeaders, HEADER_SETTER);
    const payload = body ? { payload: JSON.stringify(body(input)), contentType: 'application/json' } : parts.body(input);
    if (payload && !hasContentType) reqHeaders.set('content-type', payload.contentType);
    const req = { method, url: target, headers: reqHeaders, body: payload?.payload };
    const limits = { timeoutMs, maxBytes };
    const res = credential ? await sendWith(credential, req, limits, ctx) : await send(req, limits, ctx);
    if (opts.bytes) return res.buf;
    return opts.tool ? toolReply(res.contentType, res.buf, res.url) : new TextDecoder().decode(res.buf);
  };
}

/** `req` with the credential's header; a fetched token the backend refused (revoked before its time) is forgotten and the request sent once more. */
async function sendWith(credential: OutboundCredential, req: Request, limits: { timeoutMs: number; maxBytes: number }, ctx: CallContext): Promise<Answer> {
  const sent = await credentialHeader(credential, ctx);
  req.headers.set(sent[0], sent[1]);
  try {
    return await send(req, limits, ctx);
  } catch (e) {
    if (!credential.refused || (e as SvcError).data?.status !== 401) throw e;
    credential.refused(ctx.principal, sent);
    const renewed = await credentialHeader(credential, ctx);
    req.headers.set(renewed[0], renewed[1]);
    return send(req, limits, ctx);
  }
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

interface Answer {
  buf: Buffer;
  contentType: string | null;
  /** Where the answer came from (after same-origin redirects). */
  url: URL;
}

async function send(req: Request, lim: { timeoutMs: number; maxBytes: number }, ctx: CallContext): Promise<Answer> {
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
        const message = apiMessage(res.headers.get('content-type'), buf);
        throw failed(`upstream answered ${res.status}${message && ': ' + message}`, { status: res.status, body: head(new TextDecoder().decode(buf)), api_message: message });
      }
      const { buf, over } = await readBody(res, lim.maxBytes);
      if (over) throw failed(`response larger than ${lim.maxBytes} bytes`, { reason: 'too_large', max_bytes: lim.maxBytes });
      return { buf, contentType: res.headers.get('content-type'), url };
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

/** The backend's credential; its URL's origin must be fixed, and its header not set twice. */
function credentialOf(spec: HttpSpec, env: BackendEnv, sets: string): OutboundCredential {
  if (/\{\{/.test(/^[^:]*:\/\/[^/?#]*/.exec(spec.url)?.[0] ?? spec.url)) {
    throw configError(KIND, 'with auth, the url\'s scheme, host and port must be written out: an argument may not choose where the credential goes', 'url');
  }
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
