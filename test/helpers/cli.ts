// The real command line as operators and scripts run it: `node dist/cli.js …` in a child
// process (run `npm run build` first). run() runs a command to its end, keeping stdout and
// stderr; a server is started with serveManifest() (test/helpers/serve.ts). Children get our
// environment minus SVC_TOKEN/PORT/HOST plus the test's overrides. Every child's output goes
// to the secret scan (test/helpers/secrets.ts), and the values of secret-named overrides
// passed to childEnv() (…TOKEN, …SECRET, …PASSWORD) are registered.

import { spawn } from 'node:child_process';
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
