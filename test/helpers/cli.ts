// Running the real command line in a child process (`node dist/cli.js …`, built
// by `npm run build`), as users and scripts run it. Shared by the CLI tests.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli.js');
/** One problem line: FILE:LINE:COL: CODE: message. */
export const PROBLEM_LINE = /^(.+):(\d+):(\d+): ([A-Z][A-Z_]+): \S.*$/;
export const STACK_FRAME = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

export interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Environment for children: ours minus SVC_TOKEN/PORT/HOST, plus overrides (undefined deletes). */
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

/** Runs `node dist/cli.js ARGS` (or another program with `program`) to its end; no shell. */
export function run(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; program?: string[] } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const [cmd, ...pre] = opts.program ?? [process.execPath, CLI];
    const child = spawn(cmd!, [...pre, ...args], { cwd: opts.cwd ?? ROOT, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
