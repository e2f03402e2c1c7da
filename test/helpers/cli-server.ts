// Starts the real server as an operator does: `node dist/cli.js serve FILE --port 0`
// (run `npm run build` first), resolved once it prints `listening on http://HOST:PORT`.
// Keeps stdout and stderr; logs() parses stderr's JSON log lines. Every process started
// here is killed when the test process exits, even after a failed test.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');

export interface CliServer {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stderr's JSON lines, parsed (other lines skipped). */
  logs(): Record<string, unknown>[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** `svc serve FILE --port 0 [args]`; env adds to (or, with undefined, removes from) the test's environment. */
export function serveCli(file: string, o: { args?: string[]; env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', NODE_ENV: undefined, PORT: undefined, HOST: undefined, ...o.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0', ...(o.args ?? [])], { cwd: o.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => {
    live.delete(child);
    resolve(code);
  }));
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => void (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => void (err += c));
  const logs = () => err.split('\n').flatMap((l) => {
    try {
      const v = JSON.parse(l);
      return v && typeof v === 'object' ? [v as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line within 20 s; stderr:\n${err.slice(-2000)}`));
    }, 20_000);
    child.stdout!.on('data', () => {
      const url = /^listening on (http:\/\/\S+)\n/.exec(out)?.[1];
      if (!url) return;
      clearTimeout(timer);
      resolve({
        url, child, logs, stdout: () => out, stderr: () => err,
        stop: () => {
          child.kill('SIGTERM');
          return exit;
        },
      });
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited (${code}) before listening; stderr:\n${err.slice(-2000)}`));
    });
  });
}
