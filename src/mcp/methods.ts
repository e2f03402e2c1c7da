// The MCP methods both protocol eras share, as one stateless table: lists, calls,
// reads, prompts and completions over the Runtime. The 2025 session (protocol.ts) and
// the 2026-07-28 stateless path (modern.ts) both dispatch here, so a method behaves the
// same whichever era asked. Guarantees: nothing here keeps state between calls; the
// CallContext is built only for methods that run a capability; a tools/call is decided once,
// by the runtime, which hands a call it admits as a task to the era's runAsTask; lists are the Runtime's
// (already filtered by the caller's scopes), paged by list-pages.ts (cursor → nextCursor);
// an unknown method throws MethodNotFound. On a progressive catalog (catalog/discovery.ts) tools/list and a
// meta-tool's tools/call are progressive.ts's, which runs call_tool as the real tools/call below.

import { isSvcError, SvcError } from '../errors.js';
import type { Catalog } from '../core/catalog.js';
import type { CallContext, Principal } from '../core/types.js';
import { toolErrorResult, type AdmittedTool, type Runtime, type TaskAsk } from '../runtime/runtime.js';
import { page, type ListName } from './list-pages.js';
import { withViewMeta } from './apps.js';
import { isProgressive } from '../catalog/discovery.js';
import { callsMetaTool, metaToolCall, progressiveListing, type SessionTools } from './progressive.js';

export type McpRuntime = Pick<Runtime,
  'current' | 'callTool' | 'readResource' | 'getPrompt' | 'authorizeRead' | 'mayRead' | 'mayDeliver' | 'listTools' | 'listResources'
  | 'listResourceTemplates' | 'listPrompts' | 'complete' | 'watchResource' | 'mayStillRead' | 'onChange' | 'updatedBy'>;

export class MethodNotFound extends Error {}

export interface MethodEnv {
  runtime: McpRuntime;
  catalog: Catalog;
  principal: Principal;
  /** Builds the call context; called only by methods that run a capability. */
  context(): CallContext;
  /** Invalid tool arguments become an isError result (2025-11-25 and later) instead of -32602. */
  inputErrorsAsToolResults: boolean;
  /** How a tools/call asked about running as a task (the era reads it from the request). */
  taskAsk: TaskAsk;
  /** The client declares MCP Apps (apps.ts): lists carry _meta.ui and app-only tools, a view's read its _meta.ui. */
  apps: boolean;
  /** Starts a tools/call the runtime admitted as a task and answers it in the era's shape; absent without a task engine. */
  runAsTask?: (call: AdmittedTool) => Promise<Record<string, unknown>>;
  /** A 2025 session's loaded tools (progressive endpoints' load_tools); absent on 2026-07-28, which has no session. */
  session?: SessionTools;
}

/** The shared methods, by name. */
export const SHARED_METHODS: ReadonlySet<string> = new Set([
  'tools/list', 'resources/list', 'resources/templates/list', 'prompts/list',
  'tools/call', 'resources/read', 'prompts/get', 'completion/complete',
]);

export async function runMethod(method: string, p: Record<string, unknown>, env: MethodEnv): Promise<unknown> {
  const { runtime: rt, catalog: cat, principal } = env;
  switch (method) {
    case 'tools/list':
      return listed('tools', isProgressive(cat) ? progressiveListing(env) : rt.listTools(principal, cat, env.apps), p, cat);
    case 'resources/list':
      return listed('resources', rt.listResources(principal, cat, env.apps), p, cat);
    case 'resources/templates/list':
      return listed('resourceTemplates', rt.listResourceTemplates(principal, cat), p, cat);
    case 'prompts/list':
      return listed('prompts', rt.listPrompts(principal, cat), p, cat);
    case 'tools/call': {
      const name = str(p, 'name');
      if (isProgressive(cat) && callsMetaTool(name, env)) return metaToolCall(name, p, env, (real, args) => callTool(real, args, env));
      return callTool(name, p.arguments, env);
    }
    case 'resources/read': {
      const uri = str(p, 'uri');
      const contents = await rt.readResource(uri, env.context(), { catalog: cat, apps: env.apps });
      return { contents: env.apps ? withViewMeta(cat, uri, contents) : contents };
    }
    case 'prompts/get':
      return await rt.getPrompt(str(p, 'name'), p.arguments, env.context(), { catalog: cat, apps: env.apps });
    case 'completion/complete': {
      const ref = p.ref;
      const arg = p.argument;
      if (!isObject(ref) || typeof ref.type !== 'string') throw new SvcError('INVALID_INPUT', 'params.ref must be an object with a type');
      if (!isObject(arg) || typeof arg.name !== 'string' || typeof arg.value !== 'string') {
        throw new SvcError('INVALID_INPUT', 'params.argument must be {name, value} strings');
      }
      const given = isObject(p.context) && isObject(p.context.arguments) ? p.context.arguments : undefined;
      const context = given && Object.fromEntries(Object.entries(given).filter((e): e is [string, string] => typeof e[1] === 'string'));
      return { completion: await rt.complete(ref as { type: string; name?: string; uri?: string }, arg.name, arg.value, env.context(), context, cat) };
    }
    default:
      throw new MethodNotFound(method);
  }
}

/** The tools/call of tool `name` (a real one: a meta-tool's call_tool comes here too). */
async function callTool(name: string, args: unknown, env: MethodEnv): Promise<unknown> {
  const { runtime: rt, catalog: cat } = env;
  try {
    const runAsTask = env.runAsTask;
    return runAsTask
      ? await rt.callTool(name, args, env.context(), { catalog: cat, apps: env.apps, task: env.taskAsk, startTask: runAsTask })
      : await rt.callTool(name, args, env.context(), { catalog: cat, apps: env.apps });
  } catch (e) {
    if (isSvcError(e) && (e.code === 'BACKEND_FAILED' || e.code === 'BACKEND_TIMEOUT'
      || (e.code === 'INVALID_INPUT' && env.inputErrorsAsToolResults))) {
      return toolErrorResult(e, cat, name);
    }
    throw e;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function str(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (typeof v !== 'string' || v === '') throw new SvcError('INVALID_INPUT', `params.${key} must be a non-empty string`);
  return v;
}

/** One page of a list answer: `{ [list]: items, nextCursor? }` (server.list_page_size items and list_page_bytes at most). */
function listed(list: ListName, items: readonly object[], p: Record<string, unknown>, cat: Catalog): Record<string, unknown> {
  const pg = page(list, items, p.cursor, cat.listPage);
  return pg.nextCursor === undefined ? { [list]: pg.items } : { [list]: pg.items, nextCursor: pg.nextCursor };
}
