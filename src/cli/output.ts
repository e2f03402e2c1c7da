// What every command writes, said one way. Guarantees: the program is named `fastsvc` in every
// message (PROG; `svc` is only a second name for the bin); a command's own refusal is one line
// `fastsvc COMMAND: message` on stderr; manifest problems are one line each, FILE:LINE:COL: CODE:
// message, followed by one hint when an unset variable is among them; a reader that goes away (`fastsvc explain … | head -1`) ends a command
// quietly with exit 0, and ends nothing of `serve` (its stdout holds one line, its log is
// lost rather than the server).

import { relative } from 'node:path';
import type { SvcError } from '../errors.js';

export const PROG = 'fastsvc';

/** Text and a newline on stdout; exit 0. */
export function say(text: string): number {
  process.stdout.write(text + '\n');
  return 0;
}

/** `fastsvc COMMAND: message` on stderr (a refusal, or a remark beside the answer); returns `code` (1 unless said). */
export function tell(command: string, message: string, code = 1): number {
  process.stderr.write(`${PROG} ${command}: ${message}\n`);
  return code;
}

/** Each problem as FILE:LINE:COL: CODE: message on stderr; an ENV_UNSET among them is followed by one line saying the ways out. */
export function printProblems(problems: readonly SvcError[]): void {
  for (const p of problems) process.stderr.write(p.format() + '\n');
  if (problems.some((p) => p.code === 'ENV_UNSET')) {
    process.stderr.write('hint: set the variable, or give it a default (${VAR:-value}); validate, explain, diff, keys and upstreams take --allow-unset-env to go on with a placeholder (in CI, for secrets set only where the server runs)\n');
  }
}

/** The line saying which unset variables got a placeholder (--allow-unset-env): `verb` says what was done with them. */
export function unsetEnvNote(file: string, names: readonly string[], verb: string): string {
  return `${file}: note: ${verb} with placeholders for unset environment variables: ${names.join(', ')}`;
}

/** A path relative to the working directory when it is inside it, else absolute. */
export function shortPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') ? rel : abs;
}

/**
 * A closed pipe on stdout or stderr (EPIPE: the reader went away) ends the command at once
 * with exit 0, as `head` expects of the tools it reads; `keepRunning` (serve): the stream's
 * later writes are dropped and the process goes on. Any other stream error is thrown, as Node would.
 */
export function quietOnClosedPipe(keepRunning: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
      if (!keepRunning) process.exit(0);
    });
  }
}

/** A command line a command cannot run: the dispatcher prints `fastsvc COMMAND: message`, then the command's usage, and exits 2. */
export class UsageError extends Error {}
