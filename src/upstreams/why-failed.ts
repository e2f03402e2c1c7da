// What a failed connection attempt, or a lost connection, says: the words in /readyz's last_error and the
// upstream.connect_failed / upstream.lost log lines. Guarantees: describe() is the error's message, followed by
// what lies below it when that says more (a system error's code and address under undici's "fetch failed",
// found through `cause` and the SDK's `data.cause`, at most five levels down); ChildExited says how a stdio
// child ended — its exit code or signal — and the last line of its stderr as wire/stdio-transport.ts kept it
// (cut at 200 characters), and carries that exit for /readyz's last_exit.

import type { ChildExit } from './wire/stdio-transport.js';

/** An error's message, with what lies below it where it says more (`fetch failed` says little: ECONNREFUSED 10.0.0.5:443 says why). */
export function describe(e: unknown): string {
  const message = (e as Error)?.message ?? String(e);
  const below = (x: unknown): unknown => (x as { cause?: unknown })?.cause ?? (x as { data?: { cause?: unknown } })?.data?.cause;
  let deepest: unknown;
  for (let c = below(e), depth = 0; c && depth < 5; c = below(c), depth++) deepest = c;
  if (!deepest) return message;
  const { code, address, port } = deepest as { code?: unknown; address?: unknown; port?: unknown };
  const why = typeof code === 'string' ? `${code}${typeof address === 'string' ? ` ${address}${port !== undefined ? `:${String(port)}` : ''}` : ''}` : (deepest as Error).message;
  return typeof why === 'string' && why && !message.includes(why) ? `${message} (${why})` : message;
}

/** A stdio child exited: its exit, and a message that names its code (or signal) and its stderr's last line. */
export class ChildExited extends Error {
  readonly exit: ChildExit;

  constructor(exit: ChildExit, when: string) {
    const how = exit.code !== null ? `with code ${exit.code}` : `on signal ${exit.signal}`;
    const last = exit.stderr.split('\n').filter((l) => l.trim()).at(-1);
    super(`the upstream process exited ${how} ${when}${last ? `; its stderr ends: ${last.length > 200 ? `${last.slice(0, 200)}…` : last}` : '; it wrote nothing on stderr'}`);
    this.name = 'ChildExited';
    this.exit = exit;
  }
}
