// The module backend (escape hatch): "./file.js#export" relative to the manifest,
// called with (input, context). Guarantees: the export is a function (else
// BACKEND_CONFIG); a throw after the caller's abort is CANCELLED; a probe checks the file exists, and that its syntax is
// the format Node will load it as (module-format.ts), but never runs its code; a file changed on disk (mtime) is imported afresh by the next
// moduleBackend() call; a handler's non-SvcError throw becomes BACKEND_FAILED.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CODES, SvcError, type ErrorCode } from '../../errors.js';
import { abortedError, configError } from './common.js';
import type { BackendEnv, BackendFn } from './contract.js';
import { formatProblem } from './module-format.js';

const KIND = 'module';
const REF = /^(\.{1,2}\/.+)#([A-Za-z_$][A-Za-z0-9_$]*)$/;

export async function moduleBackend(ref: string, env: BackendEnv): Promise<BackendFn> {
  const m = typeof ref === 'string' ? REF.exec(ref) : null;
  if (!m) throw configError(KIND, `${JSON.stringify(ref)} is not of the form ./file.js#exportName`);
  const [, rel, name] = m as unknown as [string, string, string];
  const file = path.resolve(env.manifestDir, rel);
  let mtime: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new Error('not a file');
    mtime = st.mtimeMs;
  } catch {
    throw configError(KIND, `${rel} does not exist or is not a file`);
  }
  // Validate reads what serve would import: a file whose syntax is not the format Node loads it as fails here, said plainly.
  const mismatch = formatProblem(file, rel);
  if (mismatch) throw configError(KIND, mismatch);
  if (env.probe) return () => Promise.reject(new SvcError('NOT_READY', `${KIND} backend: built to be checked, not called`));
  // ESM caches by URL: a new mtime gives a new URL, so an edited handler is loaded anew.
  const url = pathToFileURL(file);
  url.searchParams.set('v', String(mtime));
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url.href)) as Record<string, unknown>;
  } catch (e) {
    throw configError(KIND, `cannot load ${rel}: ${(e as Error)?.message ?? String(e)}`);
  }
  const fn = mod[name];
  if (typeof fn !== 'function') throw configError(KIND, `${rel} has no exported function ${name}`);

  return async (input, ctx) => {
    if (ctx.signal.aborted) throw abortedError(KIND);
    try {
      return await fn(input, ctx);
    } catch (e) {
      // A handler that stopped because the caller went away: CANCELLED, not a failure.
      if (ctx.signal.aborted && !(e instanceof SvcError)) throw abortedError(KIND);
      throw asSvcError(e, ref);
    }
  };
}

/** SvcErrors pass through (also one from another copy of fastsvc); anything else is BACKEND_FAILED. */
function asSvcError(e: unknown, ref: string): SvcError {
  if (e instanceof SvcError) return e;
  const o = e as { name?: unknown; code?: unknown; message?: unknown; data?: unknown } | null;
  if (o && o.name === 'SvcError' && typeof o.code === 'string' && Object.hasOwn(CODES, o.code)) {
    const data = o.data !== null && typeof o.data === 'object' ? (o.data as Record<string, unknown>) : undefined;
    return new SvcError(o.code as ErrorCode, String(o.message), { data, cause: e });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new SvcError('BACKEND_FAILED', `${KIND} backend ${ref}: ${message}`, { data: { reason: 'handler_error' }, cause: e });
}
