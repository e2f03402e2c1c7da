// `svc serve FILE --port 0` as operators run it: `node dist/cli.js` in a child process
// (run `npm run build` first), resolved once the `listening on http://HOST:PORT` line is
// out; the environment is ours minus SVC_TOKEN/PORT/HOST, plus what the test passes.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');

export interface ServeCli {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export function serveCli(file: string, env: Record<string, string> = {}): Promise<ServeCli> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of ['SVC_TOKEN', 'PORT', 'HOST']) if (!(k in env)) delete childEnv[k];
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exit;
  };
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      const m = /^listening on (http:\/\/\S+)\n/.exec(stdout);
      if (m) resolve({ child, url: m[1]!, stderr: () => stderr, stop });
    });
    void exit.then((code) => reject(new Error(`serve exited (${code}) before listening; stderr:\n${stderr}`)));
  });
}
