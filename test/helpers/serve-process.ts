// The real `svc serve` as operators run it: `node dist/cli.js serve …` in a child
// process (run `npm run build` first). startServe resolves once the single
// `listening on http://HOST:PORT` line is printed and keeps stdout/stderr for the
// test to read; stop() sends SIGTERM and waits for the exit.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli.js');

/** Environment for children: ours minus SVC_TOKEN/PORT/HOST, plus overrides. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.SVC_TOKEN;
  delete env.PORT;
  delete env.HOST;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface Server { child: ChildProcess; url: string; stdout: () => string; stderr: () => string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

/** Starts `svc serve …` and resolves once the listening line is printed. */
export function startServe(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /^listening on (http:\/\/\S+)\n/.exec(stdout);
      if (m) resolve({ child, url: m[1]!, stdout: () => stdout, stderr: () => stderr, exit });
    });
    void exit.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before listening; stderr:\n${stderr}`)));
  });
}

export async function stop(s: Server): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  return s.exit;
}
