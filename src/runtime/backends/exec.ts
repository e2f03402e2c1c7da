// The exec backend: runs one fixed program, never through a shell. Guarantees:
// argv[0] is a plain program (not templated), every other element renders to exactly
// one argument; cwd is fixed at load and never templated — a relative one stays under the
// manifest folder (`..` or a symlink cannot lead out), an absolute one (`${PROJECT_DIR}`) is
// the folder the operator named — and decides only where the program runs, never which
// (argv[0] is found without it, the child's PATH keeps only absolute entries); the child
// sees only allow-listed env vars; timeout/abort/oversize stdout SIGKILL its process group
// (so does exit).

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../errors.js';
import { compileTemplate } from '../template.js';
import { abortedError, byteLimit, configError, positiveInt, tail, timeoutError } from './common.js';
import { type BackendEnv, type BackendFn, type ExecSpec } from './contract.js';

const KIND = 'exec';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const STDERR_KEEP = 8192;

export function execBackend(spec: ExecSpec, env: BackendEnv): BackendFn {
  if (!Array.isArray(spec.argv) || spec.argv.length === 0 || !spec.argv.every((a) => typeof a === 'string')) {
    throw configError(KIND, 'argv must be a non-empty array of strings');
  }
  const fail = (message: string, field?: string) => configError(KIND, message, field);
  const cwd = resolveCwd(env.manifestDir, spec.cwd, fail);
  const childEnv = pickEnv(spec.env);
  const program = resolveProgram(spec.argv[0]!, env.manifestDir, childEnv.PATH, fail, 'argv/0');
  const args = spec.argv.slice(1).map((a) => compileTemplate(a));
  const timeoutMs = positiveInt(KIND, 'timeout_ms', spec.timeout_ms);
  const maxBytes = byteLimit(KIND, spec.max_bytes);

  return (input, ctx) => {
    const argv = args.map((t) => t.render(input));
    if (argv.some((a) => a.includes('\0'))) return Promise.reject(new SvcError('INVALID_INPUT', 'an argument contains a NUL byte'));
    if (ctx.signal.aborted) return Promise.reject(abortedError(KIND));

    return new Promise<string>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(program, argv, { cwd, env: childEnv, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        reject(new SvcError('BACKEND_FAILED', `${KIND} backend: cannot run ${path.basename(program)}`, { data: { reason: 'spawn_failed' }, cause: e }));
        return;
      }
      const out: Buffer[] = [];
      let outBytes = 0;
      let errText = '';
      let settled = false;

      const finish = (err: SvcError | null, value?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value!);
      };
      const kill = (): void => {
        try {
          // detached: the child leads its own process group; kill the whole group.
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const stop = (err: SvcError): void => {
        kill();
        finish(err);
      };
      const onAbort = (): void => stop(abortedError(KIND));
      const timer = setTimeout(() => stop(timeoutError(KIND, timeoutMs)), timeoutMs);
      ctx.signal.addEventListener('abort', onAbort, { once: true });

      child.stdout!.on('data', (chunk: Buffer) => {
        if (settled) return;
        outBytes += chunk.length;
        if (outBytes > maxBytes) {
          stop(new SvcError('BACKEND_FAILED', `${KIND} backend: output larger than ${maxBytes} bytes`, { data: { reason: 'too_large', max_bytes: maxBytes } }));
          return;
        }
        out.push(chunk);
      });
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => {
        errText = tail(errText + chunk, STDERR_KEEP);
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        const reason = e.code ?? 'spawn_failed';
        finish(new SvcError('BACKEND_FAILED', `${KIND} backend: cannot run ${path.basename(program)} (${reason})`, { data: { reason }, cause: e }));
      });
      child.on('close', (code, signal) => {
        kill(); // background processes the program left in its group die with the call
        if (code === 0) return finish(null, Buffer.concat(out).toString('utf8'));
        finish(new SvcError('BACKEND_FAILED', `${KIND} backend: ${path.basename(program)} exited with ${code ?? signal}`, {
          data: { exit_code: code, ...(signal && { signal }), stderr: tail(errText) },
        }));
      });
    });
  };
}

/**
 * A program's folder, resolved once (symlinks too). An absolute `cwd` — written so, or what `${VAR}`
 * gave — is the folder the operator named, wherever it is; a relative one is resolved against the
 * manifest folder and must stay under it. Never templated. `fail` makes the error (its field: `cwd`).
 */
export function resolveCwd(manifestDir: string, cwd: string, fail: (message: string, field?: string) => SvcError): string {
  if (typeof cwd !== 'string' || cwd.includes('\0')) throw fail('cwd must be a string');
  if (cwd.includes('{{')) throw fail(`cwd ${JSON.stringify(cwd)} is not templated: it is fixed when the manifest loads (name a folder, or \${VAR})`, 'cwd');
  const base = realpathSync(manifestDir);
  let real: string;
  try {
    real = realpathSync(path.resolve(base, cwd));
  } catch {
    throw fail(`cwd ${JSON.stringify(cwd)} does not exist`, 'cwd');
  }
  if (!path.isAbsolute(cwd) && real !== base && !real.startsWith(base + path.sep)) {
    throw fail(`cwd ${JSON.stringify(cwd)} leaves the manifest folder (a relative cwd stays under it; name a folder elsewhere by its absolute path)`, 'cwd');
  }
  if (!statSync(real).isDirectory()) throw fail(`cwd ${JSON.stringify(cwd)} is not a directory`, 'cwd');
  return real;
}

/** A PATH value with its relative entries ('', '.', 'bin') left out: they would be looked up in the child's cwd. */
export function absolutePathEntries(value: string): string {
  return value.split(path.delimiter).filter((dir) => path.isAbsolute(dir)).join(path.delimiter);
}

function pickEnv(names: readonly string[]): Record<string, string> {
  if (!Array.isArray(names)) throw configError(KIND, 'env must be a list of variable names');
  const out: Record<string, string> = {};
  for (const name of names) {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) throw configError(KIND, `bad env name ${JSON.stringify(name)}`);
    const v = process.env[name];
    if (v !== undefined) out[name] = name === 'PATH' ? absolutePathEntries(v) : v;
  }
  return out;
}

/** argv[0]: a path (resolved against the manifest folder) or a bare name looked up on `pathVar`; `fail` makes the error at `field`. */
export function resolveProgram(prog: string, manifestDir: string, pathVar: string | undefined, fail: (message: string, field?: string) => SvcError, field: string): string {
  if (prog === '' || prog.includes('\0') || prog.includes('{{')) {
    throw fail(`argv[0] must be a plain program name or path, got ${JSON.stringify(prog)}`, field);
  }
  const candidates = prog.includes('/')
    ? [path.resolve(manifestDir, prog)]
    : (pathVar ?? '').split(path.delimiter).filter((dir) => path.isAbsolute(dir)).map((dir) => path.join(dir, prog));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not this one
    }
  }
  throw fail(`program ${JSON.stringify(prog)} not found or not executable` + (prog.includes('/') ? '' : ' on the allowed PATH'), field);
}
