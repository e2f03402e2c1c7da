// The real command line as operators and scripts run it: `node dist/cli.js …` in a child
// process (run `npm run build` first). run() runs a command to its end; startServe() and
// serveCli() start `svc serve` and resolve once it prints `listening on http://HOST:PORT`,
// keeping stdout and stderr (logs() parses stderr's JSON log lines). Children get our
// environment minus SVC_TOKEN/PORT/HOST plus the test's overrides, and every server
// started here is killed when the test process exits, even after a failed test. Every
// child's output goes to the secret scan (test/helpers/secrets.ts), and the values of
// secret-named overrides passed to childEnv() (…TOKEN, …SECRET, …PASSWORD) are registered.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logLine, secretsOfEnv } from './secrets.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli.js');

/** One problem line: FILE:LINE:COL: CODE: message. */
export const PROBLEM_LINE = /^(.+):(\d+):(\d+): ([A-Z][A-Z_]+): \S.*$/;
export const STACK_FRAME = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

export interface Exit { code: number | null; signal: NodeJS.Signals | null }
export interface Run extends Exit { stdout: string; stderr: string }

/** Environment for children: ours minus SVC_TOKEN/PORT/HOST, LOG_LEVEL info, plus overrides (undefined deletes). */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  for (const k of ['SVC_TOKEN', 'PORT', 'HOST']) delete env[k];
  secretsOfEnv(extra);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Runs `node dist/cli.js ARGS` (or another program with `program`) to its end; no shell. */
export function run(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; program?: string[] } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const [cmd, ...pre] = opts.program ?? [process.execPath, CLI];
    const child = spawn(cmd!, [...pre, ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const source = `run ${args.slice(0, 2).join(' ')}`;
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      logLine(source, c);
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      logLine(source, c);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export interface ServeChild {
  child: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  /** stderr's JSON log lines so far, parsed (other lines skipped). */
  logs(): Record<string, unknown>[];
  exit: Promise<Exit>;
  /** SIGTERM (unless it already ended), then how it exited. */
  stop(): Promise<Exit>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Starts `svc serve ARGS` and resolves once the listening line is printed. */
export function startServe(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  const exit = new Promise<Exit>((resolve) => child.on('close', (code, signal) => {
    live.delete(child);
    resolve({ code, signal });
  }));
  const logs = () => stderr.split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l);
      return v && typeof v === 'object' ? [v as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exit;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line within 20 s; stderr:\n${stderr.slice(-2000)}`));
    }, 20_000);
    const source = `serve ${args[0] ?? ''}`;
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      logLine(source, c);
    });
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      logLine(source, c);
      const m = /^listening on (http:\/\/\S+)\n/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({ child, url: m[1]!, stdout: () => stdout, stderr: () => stderr, logs, exit, stop });
    });
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited (${code ?? signal}) before listening; stderr:\n${stderr.slice(-2000)}`));
    });
  });
}

export function stop(s: ServeChild): Promise<Exit> {
  return s.stop();
}

/** `svc serve FILE --port 0 [args]` with childEnv(env). */
export function serveCli(file: string, o: { args?: string[]; env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<ServeChild> {
  return startServe([file, '--port', '0', ...(o.args ?? [])], { cwd: o.cwd, env: childEnv(o.env) });
}
