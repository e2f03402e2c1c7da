// MCP tasks in both eras, over the one task engine (src/tasks/engine.ts). Guarantees:
// - 2025-11-25 (experimental core tasks, session path): a tools/call carrying params.task for
//   a tool declaring task optional|required answers {task}; a plain call to a task-required
//   tool is TASK_REQUIRED (-32601, as the 1.x SDK answers); tasks/get, tasks/list,
//   tasks/cancel (-32602 for a task already finished) and tasks/result (waits for the end,
//   then the tool's own result or error, tagged with related-task) are served.
// - 2026-07-28 (extension io.modelcontextprotocol/tasks): a task is made only for a request
//   declaring the extension; without it a task-required tool is MISSING_CLIENT_CAPABILITY
//   (-32021, data.requiredCapabilities); tasks/get, tasks/update, tasks/cancel need the
//   extension too; a backend failure is `completed` with an isError result, any other error
//   `failed` with the JSON-RPC error inline.
// - a tool declaring ask_before_task (2026-07-28): the call answers input_required rounds
//   (the request's InputRound, the plain call's machinery) until the handler calls channel.startTask();
//   that round answers the CreateTaskResult and the same run goes on as the task, so the
//   answers gathered before reach its result; the round's requestState never reaches the task;
// - invalid arguments start no task: they are an isError result, as for a plain call;
// - whether a tools/call runs as a task is the runtime's decision (its one decision per call);
//   this module only starts the call it admitted and encodes the answer in the era's shape;
// - every task method reads the task through the engine, so ownership and the runtime's
//   access decision (with the task's own arguments) are re-checked on each call; an unknown
//   or foreign id is NOT_FOUND (-32602); on a shared store get, list, result and cancel reach
//   tasks started on any replica.

import type { Catalog } from '../core/catalog.js';
import type { CallChannel, Principal, ToolResult } from '../core/types.js';
import { SvcError } from '../errors.js';
import { toolErrorResult, type AdmittedTool } from '../runtime/runtime.js';
import type { TaskEngine, TaskRecord } from '../tasks/engine.js';
import { TERMINAL } from '../tasks/task-store.js';
import { isObject, str } from './methods.js';
import type { InputRound } from './input-rounds.js';
import type { RequestScope } from '../core/request-scope.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The 2025-11-25 server capability. */
export const LEGACY_TASKS_CAPABILITY = Object.freeze({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

export interface TaskCall {
  tasks: TaskEngine;
  catalog: Catalog;
  principal: Principal;
  transport: 'mcp' | 'ws';
  /** The request's address and trace headers (audit log, tracing), when the transport built them. */
  scope?: RequestScope;
  /** 2026-07-28: the request's input_required round (and its progress and logs), which a tool declaring ask_before_task answers before its task exists. */
  round?: InputRound & CallChannel;
}

/** Errors a tool call reports as an isError result rather than a protocol error. */
const TOOL_ERRORS = new Set(['BACKEND_FAILED', 'BACKEND_TIMEOUT']);

function who(c: TaskCall) {
  return { principal: c.principal, transport: c.transport, catalog: c.catalog, scope: c.scope };
}

// ---- 2025-11-25 ----

export function legacyTask(t: TaskRecord): Record<string, unknown> {
  return {
    taskId: t.id, status: t.status,
    ...(t.statusMessage !== undefined && { statusMessage: t.statusMessage }),
    createdAt: t.createdAt, lastUpdatedAt: t.lastUpdatedAt, ttl: t.ttlMs, pollInterval: t.pollIntervalMs,
  };
}

/** A 2025 tools/call the runtime admitted as a task: started (the session answers it as {task} and follows its status). */
export function startLegacyTask(call: AdmittedTool, c: TaskCall): Promise<TaskRecord> {
  return c.tasks.start({ call, principal: c.principal, transport: c.transport, scope: c.scope });
}

export async function legacyTaskMethod(method: string, p: Record<string, unknown>, c: TaskCall): Promise<unknown> {
  switch (method) {
    case 'tasks/get':
      return legacyTask(await c.tasks.get(str(p, 'taskId'), who(c)));
    case 'tasks/list':
      if (p.cursor !== undefined) throw new SvcError('INVALID_INPUT', 'unknown cursor: every list is returned in one page');
      return { tasks: (await c.tasks.list(who(c))).map(legacyTask) };
    case 'tasks/cancel': {
      const id = str(p, 'taskId');
      const t = await c.tasks.get(id, who(c));
      if (TERMINAL.has(t.status)) throw new SvcError('INVALID_INPUT', `task ${id} already ended (${t.status}) and cannot be cancelled`, { data: { taskId: id, status: t.status } });
      return legacyTask(await c.tasks.cancel(id, who(c)));
    }
    case 'tasks/result': {
      const t = await c.tasks.settled(str(p, 'taskId'), who(c));
      const related = { [RELATED_TASK]: { taskId: t.id } };
      if (t.status === 'completed') return { ...t.result, _meta: { ...(t.result as { _meta?: object })._meta, ...related } };
      if (t.error && TOOL_ERRORS.has(t.error.code)) return { ...toolErrorResult(t.error, c.catalog, t.tool), _meta: related };
      throw t.error ?? new SvcError('CANCELLED', `task ${t.id} was ${t.statusMessage ?? 'cancelled'}`, { data: { taskId: t.id } });
    }
    default:
      return NOT_A_TASK_METHOD;
  }
}

export const NOT_A_TASK_METHOD = Symbol('not a task method');

// ---- 2026-07-28 ----

export function declaresExtension(clientCapabilities: Record<string, unknown>): boolean {
  const ext = clientCapabilities.extensions;
  return isObject(ext) && ext[TASKS_EXTENSION] !== undefined;
}

export function missingExtension(what: string): SvcError {
  return new SvcError('MISSING_CLIENT_CAPABILITY', `${what} needs the ${TASKS_EXTENSION} extension: declare it in _meta clientCapabilities.extensions`, {
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  });
}

function modernTask(t: TaskRecord): Record<string, unknown> {
  const toolError = t.status === 'failed' && t.error !== undefined && TOOL_ERRORS.has(t.error.code);
  return {
    taskId: t.id, status: toolError ? 'completed' : t.status,
    ...(t.statusMessage !== undefined && !toolError && { statusMessage: t.statusMessage }),
    createdAt: t.createdAt, lastUpdatedAt: t.lastUpdatedAt, ttlMs: t.ttlMs, pollIntervalMs: t.pollIntervalMs,
  };
}

/** tasks/get's DetailedTask: the task, plus its result, error or outstanding input requests. */
export function detailedTask(t: TaskRecord, cat: Catalog): Record<string, unknown> {
  const out = modernTask(t);
  if (t.status === 'completed') out.result = t.result as ToolResult;
  else if (t.status === 'failed' && t.error) {
    if (TOOL_ERRORS.has(t.error.code)) out.result = toolErrorResult(t.error, cat, t.tool);
    else out.error = { code: t.error.rpcCode, message: t.error.message, data: { code: t.error.code, ...t.error.data } };
  } else if (t.status === 'input_required') out.inputRequests = { ...t.inputRequests };
  return out;
}

/** Client requests a 2026 task may park on, from the request's declared capabilities. */
function askable(caps: Record<string, unknown>): Set<string> {
  const s = new Set<string>();
  if (caps.elicitation !== undefined) s.add('elicitation/create');
  if (caps.sampling !== undefined) s.add('sampling/createMessage');
  if (caps.roots !== undefined) s.add('roots/list');
  return s;
}

/**
 * A 2026 tools/call the runtime admitted as a task: a CreateTaskResult. A tool declaring ask_before_task runs
 * first in the request's input_required round (c.round); its task exists once the handler calls startTask().
 */
export async function startModernTask(call: AdmittedTool, caps: Record<string, unknown>, c: TaskCall): Promise<Record<string, unknown>> {
  const req = { call, principal: c.principal, transport: c.transport, scope: c.scope, askable: askable(caps) };
  if (!call.entry.askBeforeTask || !c.round) return { resultType: 'task', ...modernTask(await c.tasks.start(req)) };
  const r = await c.tasks.startAfterInput(req, c.round);
  if ('task' in r) {
    // A question went unanswered before the handler started its task anyway: the request answers input_required, so no task.
    if (c.round.pending()) await c.tasks.cancel(r.task.id, who(c));
    return { resultType: 'task', ...modernTask(r.task) };
  }
  // The run ended first: with a question unanswered the round answers input_required and no task exists; else the task is created, finished.
  if (c.round.pending()) return { resultType: 'complete' }; // never seen: the request's settleRound answers the round's input_required instead
  return { resultType: 'task', ...modernTask(await r.ended()) };
}

export const MODERN_TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

export async function modernTaskMethod(method: string, p: Record<string, unknown>, caps: Record<string, unknown>, c: TaskCall): Promise<Record<string, unknown>> {
  if (!declaresExtension(caps)) throw missingExtension(method);
  const id = str(p, 'taskId');
  switch (method) {
    case 'tasks/get':
      return detailedTask(await c.tasks.get(id, who(c)), c.catalog);
    case 'tasks/update': {
      if (!isObject(p.inputResponses)) throw new SvcError('INPUT_RESPONSES_INVALID', 'params.inputResponses must be an object');
      await c.tasks.update(id, who(c), p.inputResponses);
      return {};
    }
    default:
      await c.tasks.cancel(id, who(c));
      return {};
  }
}
