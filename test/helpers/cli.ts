// The real `svc serve` as operators run it (`node dist/cli.js serve …`, built by `npm run
// build`): a child process with SVC_TOKEN/PORT/HOST removed from the environment (plus
// overrides), resolved once it prints `listening on http://HOST:PORT`, with its stderr
// (the JSON log) kept and parsed on demand, and a SIGTERM stop.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli.js');

export interface ServeChild {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** The JSON log lines on stderr so far (non-JSON lines skipped). */
  logs(): Record<string, unknown>[];
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** Our environment minus SVC_TOKEN/PORT/HOST, with the given overrides (undefined deletes). */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  for (const k of ['SVC_TOKEN', 'PORT', 'HOST']) delete env[k];
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function startServe(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const logs = () => stderr.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
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
      reject(new Error(`no listening line: ${stderr.slice(-1000)}`));
    }, 20_000);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /^listening on (http:\/\/\S+)\n/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr: () => stderr, logs, exit, stop });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening; stderr:\n${stderr.slice(-1000)}`));
    });
  });
}
