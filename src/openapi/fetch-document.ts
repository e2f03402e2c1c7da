// A document at a URL, fetched synchronously (the manifest is loaded synchronously: start-up,
// validate, every reload). Guarantees: https, or http only to a loopback host; no redirect
// followed; the whole fetch bounded by FETCH_TIMEOUT_MS and the body by MAX_DOCUMENT_BYTES
// (refused past it, never truncated); run in a child node process started without a shell
// (execFileSync) so the caller's event loop is only blocked, never re-entered; a failure is
// FILE_UNREADABLE naming the URL (without its query, which may carry secrets) and why. The
// caller checks the bytes against the pinned sha256.

import { execFileSync } from 'node:child_process';
import { SvcError } from '../errors.js';
import { isLoopbackUrl } from '../util/loopback.js';

/** How long fetching one document may take, in milliseconds. */
export const FETCH_TIMEOUT_MS = 30_000;

const SCRIPT = `
const [url, max, ms] = process.argv.slice(1);
const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(Number(ms)) });
if (!res.ok) { process.stderr.write('HTTP ' + res.status); process.exit(2); }
const chunks = []; let n = 0;
for await (const c of res.body) { n += c.length; if (n > Number(max)) { process.stderr.write('larger than ' + max + ' bytes'); process.exit(3); } chunks.push(c); }
process.stdout.write(Buffer.concat(chunks));
`;

export function fetchDocument(url: string, maxBytes: number): Buffer {
  const shown = url.replace(/[?#].*$/, '');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SvcError('FILE_UNREADABLE', `cannot fetch OpenAPI document ${shown}: not a URL`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new SvcError('FILE_UNREADABLE', `cannot fetch OpenAPI document ${shown}: only https (http only to a loopback address)`);
  }
  try {
    return execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, url, String(maxBytes), String(FETCH_TIMEOUT_MS)], {
      timeout: FETCH_TIMEOUT_MS + 5_000, maxBuffer: maxBytes + 1, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true,
    });
  } catch (e) {
    const why = ((e as { stderr?: Buffer }).stderr?.toString().trim().split('\n').pop() || (e as Error).message).slice(0, 200);
    throw new SvcError('FILE_UNREADABLE', `cannot fetch OpenAPI document ${shown}: ${why}`);
  }
}
