// Every request fastsvc makes to an external issuer (discovery, keys, introspection) goes
// through here. Guarantees: it ends within the timeout (connect, headers and body
// together); a body larger than its cap is cut off and refused, whatever Content-Length
// says; redirects are not followed (a 3xx is a failure); the answer must be a JSON object;
// a failure is a FetchFailure whose message names the URL's origin and path and why — never
// a query string, a header or a body (introspection posts the token, so nothing sent is echoed).

import { readCapped } from '../../http/capped-body.js';

/** Every outbound request's deadline. */
export const FETCH_TIMEOUT_MS = 5000;

export class FetchFailure extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'FetchFailure';
  }
}

export interface JsonAnswer {
  status: number;
  json: Record<string, unknown>;
  /** Cache-Control max-age in seconds (0 for no-store or no-cache), when the answer says. */
  maxAge?: number;
}

export interface FetchOptions {
  maxBytes: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A form body (application/x-www-form-urlencoded). */
  form?: Record<string, string>;
  /** Statuses answered as they are (their JSON body parsed when it is one); any other non-2xx is a failure. */
  accept?: readonly number[];
  timeoutMs?: number;
}

export async function fetchJson(url: string, o: FetchOptions): Promise<JsonAnswer> {
  const where = describe(url);
  const signal = AbortSignal.timeout(o.timeoutMs ?? FETCH_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(url, {
      method: o.method ?? 'GET',
      redirect: 'manual',
      signal,
      headers: { accept: 'application/json', ...(o.form && { 'content-type': 'application/x-www-form-urlencoded' }), ...o.headers },
      ...(o.form && { body: new URLSearchParams(o.form).toString() }),
    });
  } catch (e) {
    throw new FetchFailure(`${where}: ${signal.aborted ? 'no answer in time' : causeOf(e)}`);
  }
  const ok = (res.status >= 200 && res.status < 300) || o.accept?.includes(res.status);
  if (!ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new FetchFailure(`${where}: HTTP ${res.status}`, res.status);
  }
  let text: string;
  try {
    text = (await readCapped(res, o.maxBytes)).toString('utf8');
  } catch (e) {
    throw new FetchFailure(`${where}: ${signal.aborted ? 'no answer in time' : (e as Error).message}`, res.status);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FetchFailure(`${where}: the answer is not JSON`, res.status);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new FetchFailure(`${where}: the answer is not a JSON object`, res.status);
  return { status: res.status, json: json as Record<string, unknown>, ...maxAgeOf(res.headers.get('cache-control')) };
}

function maxAgeOf(cc: string | null): { maxAge?: number } {
  if (!cc) return {};
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(cc)) return { maxAge: 0 };
  const m = /(^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(,|$)/i.exec(cc);
  return m ? { maxAge: Number(m[2]) } : {};
}

/** origin + path: what a log line may say about a URL. */
function describe(url: string): string {
  const u = URL.parse(url);
  return u ? `${u.origin}${u.pathname}` : 'an invalid URL';
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message ?? 'unreachable';
}
