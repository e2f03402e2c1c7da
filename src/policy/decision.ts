// The decision for one tools/call, as a value: the runtime enforces it and `explain` prints
// it, so the two cannot drift. Guarantees: the checks run in one order — the caller's access
// (fixed scopes, tenant patterns filled from the arguments, bound arguments: decideCall()),
// then whether the call may run the way it asked (task or plain), then the arguments against
// the tool's input schema; the allowed path of a tool without patterns or bindings allocates
// only the verdict. Quotas are the runtime's (they count, so they are taken, not decided).

import type { ToolEntry } from '../core/catalog.js';
import type { Principal, TaskSupport } from '../core/types.js';
import { inputProblems, type InputProblems } from './input-errors.js';
import { decideCall, type Denial } from './scopes.js';

/**
 * How a call asked about running as a task: `asked` (params.task, the 2026 tasks extension,
 * `Prefer: respond-async`), `plain` (an MCP call that asked nothing: a task-required tool refuses
 * it), `auto` (/svc: a task exactly when the tool requires one).
 */
export type TaskAsk = 'asked' | 'plain' | 'auto';

export type ToolVerdict =
  | { ok: true; input: Record<string, unknown>; task: boolean }
  | { ok: false; denial: Denial }
  | { ok: false; taskRequired: true }
  | { ok: false; invalid: InputProblems | 'not_object' };

/** Whether the call runs as a task, or is refused because the tool runs only as one. */
export function taskMode(support: TaskSupport, ask: TaskAsk): boolean | 'refused' {
  if (support === 'forbidden') return false;
  if (ask === 'asked') return true;
  if (support === 'required') return ask === 'auto' ? true : 'refused';
  return false;
}

/** The decision for calling `entry` with `args` as `p`. */
export function decideTool(entry: ToolEntry, p: Principal, args: unknown, ask: TaskAsk): ToolVerdict {
  const d = decideCall(entry, p, args);
  if (!d.ok) return { ok: false, denial: d };
  const task = taskMode(entry.task, ask);
  if (task === 'refused') return { ok: false, taskRequired: true };
  const input = d.args ?? (args === undefined || args === null ? {} : args);
  if (typeof input !== 'object' || Array.isArray(input)) return { ok: false, invalid: 'not_object' };
  if (!entry.validate(input)) return { ok: false, invalid: inputProblems(entry.validate.errors) };
  return { ok: true, input: input as Record<string, unknown>, task };
}
