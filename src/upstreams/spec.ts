// An `upstreams` entry as the runtime uses it. Guarantees: the schema's defaults are filled in
// (the types say which, nothing here has a default of its own); resolveUpstream() checks what
// a stdio upstream names on disk — its cwd by the exec backend's rule (an absolute one anywhere, a
// relative one under the manifest folder), its program found, and the script an interpreter is given
// where fastsvc can tell it is one (scriptArgument()) present in that folder — and returns the entry with
// cwd and program made absolute and the PATH its env gives the child reduced to absolute entries (so the
// folder the child runs in never decides which program it runs), throwing UPSTREAM_CONFIG at the field at fault.

import { statSync } from 'node:fs';
import path from 'node:path';
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
  const at = scriptArgument(u.command);
  if (at !== undefined) {
    const script = u.command[at]!;
    let file = false;
    try {
      file = statSync(path.resolve(cwd, script)).isFile();
    } catch {
      // not there
    }
    if (!file) throw fail(`script ${JSON.stringify(script)} not found in the child's folder (cwd ${JSON.stringify(u.cwd)}): ${path.basename(u.command[0]!)} would exit at start`, `command/${at}`);
  }
  const env = u.env?.PATH === undefined ? u.env : { ...u.env, PATH: absolutePathEntries(u.env.PATH) };
  return { ...u, cwd, command: [program, ...u.command.slice(1)], ...(env && { env }) };
}

/** Interpreters whose first argument that is not an option is the script they run. */
const INTERPRETER = /^(node|nodejs|bun|tsx|ts-node|python[0-9.]*|pypy[0-9.]*|ruby|perl|php|bash|sh|dash|zsh)$/;
/** What a script is named, for these interpreters (a bare `node server` may mean server.js or server/index.js: not told). */
const SCRIPT = /\.(m?js|cjs|mts|cts|tsx?|jsx|py|rb|pl|php|sh)$/i;
/** Their options known to take no value: an option fastsvc does not know may take the next argument (or be -e, -c, -m: code, not a file). */
const NO_VALUE = new Set(['-u', '-B', '-E', '-I', '-O', '-OO', '-s', '-S', '-q', '-w', '--enable-source-maps', '--no-warnings', '--no-deprecation', '--trace-warnings', '--trace-uncaught', '--experimental-strip-types', '--experimental-transform-types']);

/** The index in `command` of the script its interpreter runs, when fastsvc can tell one; else undefined. */
export function scriptArgument(command: readonly string[]): number | undefined {
  if (!INTERPRETER.test(path.basename(command[0] ?? ''))) return undefined;
  for (let i = 1; i < command.length; i++) {
    const arg = command[i]!;
    if (!arg.startsWith('-')) return SCRIPT.test(arg) ? i : undefined;
    if (!/^--[^=]+=/.test(arg) && !NO_VALUE.has(arg)) return undefined;
  }
  return undefined;
}
