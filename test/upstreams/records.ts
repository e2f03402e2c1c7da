// What an upstream test server saw, as JSON lines in a file the test names: the recorder
// (fastmcp-recorder.ts) writes every kind below (`message` in stdio mode only), the tap (tap.mjs, plain JavaScript, same
// format) writes `start`, `http` and `message`. A file outlives the process that wrote it, so what a killed or
// restarted upstream saw is still there. Guarantees: a record is appended whole and synchronously
// before the server acts on what it records; readRecords() returns them in the order written.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

export type UpstreamRecord =
  /** A server process started (a restarted one adds another). */
  | { kind: 'start'; pid: number }
  /** One HTTP request as it arrived (header names lower-cased, as node:http gives them). */
  | { kind: 'http'; method: string; path: string; headers: Record<string, string | string[]> }
  /** One JSON-RPC message read on stdin (a line that was not JSON is kept as `unparsed`). */
  | { kind: 'message'; message?: Record<string, unknown>; unparsed?: string }
  /** A tool call that reached the tool. */
  | { kind: 'call'; tool: string; arguments: Record<string, unknown>; requestId?: string; sessionId?: string }
  /** How the slow tool ended: cancelled (its signal aborted) or finished its sleep. */
  | { kind: 'slow'; outcome: 'cancelled' | 'finished'; requestId?: string; afterMs: number }
  /** What the client answered to the ask tool's elicitation (or the error it got instead). */
  | { kind: 'elicit'; result?: Record<string, unknown>; error?: string }
  /** A tool definition changed through the control endpoint (and list_changed announced). */
  | { kind: 'describe'; tool: string; description: string }
  /** A tool added through the control endpoint (and list_changed announced). */
  | { kind: 'add'; tool: string };

export function appendRecord(file: string, r: UpstreamRecord): void {
  appendFileSync(file, `${JSON.stringify(r)}\n`);
}

export function readRecords(file: string): UpstreamRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as UpstreamRecord);
}
