// An `upstreams` entry as the runtime uses it. Guarantees: the schema's defaults are filled in
// (the types say which, nothing here has a default of its own); resolveUpstream() checks what
// a stdio upstream names on disk — its cwd by the exec backend's rule (an absolute one anywhere, a
// relative one under the manifest folder), its program found — and returns the entry with both made
// absolute and the PATH its env gives the child reduced to absolute entries (so the folder the child
// runs in never decides which program it runs), throwing UPSTREAM_CONFIG at the field at fault.

import { SvcError } from '../errors.js';
import type { Upstream } from '../core/manifest-types.gen.js';
import { absolutePathEntries, resolveCwd, resolveProgram } from '../runtime/backends/exec.js';

type Defaulted<T, K extends keyof T> = T & Required<Pick<T, K>>;

/** An upstream with the schema's defaults applied (ajv useDefaults). */
export type UpstreamSpec = Defaulted<Upstream, 'cwd' | 'expose' | 'timeout_ms' | 'connect_timeout_ms' | 'max_in_flight' | 'max_bytes' | 'poll_ms' | 'max_input_rounds' | 'restart' | 'pin'>;

/** The entry with a stdio upstream's cwd and program absolute (relative ones against `baseDir`). */
export function resolveUpstream(u: UpstreamSpec, baseDir: string): UpstreamSpec {
  if (!u.command) return u;
  const fail = (message: string, field?: string) => new SvcError('UPSTREAM_CONFIG', `upstream ${u.name}: ${message}`, { path: field });
  const cwd = resolveCwd(baseDir, u.cwd, fail);
  // A bare name is looked up on the child's PATH when env gives one, else on fastsvc's; a failure says which.
  const where = u.env?.PATH !== undefined ? 'the PATH its env gives' : "fastsvc's own PATH (its env gives none)";
  const program = resolveProgram(u.command[0], baseDir, u.env?.PATH ?? process.env.PATH, (m, field) =>
    fail(u.command![0]!.includes('/') ? m : `program ${JSON.stringify(u.command![0])} not found or not executable on ${where}; name the file by its path (relative to the manifest) or add its folder to env.PATH`, field), 'command/0');
  const env = u.env?.PATH === undefined ? u.env : { ...u.env, PATH: absolutePathEntries(u.env.PATH) };
  return { ...u, cwd, command: [program, ...u.command.slice(1)], ...(env && { env }) };
}
