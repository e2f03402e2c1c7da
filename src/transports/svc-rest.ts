// The native transport, /svc. Guarantees: plain JSON over HTTP, decided by the
// shared runtime (no policy here) on one catalog per request: the policy snapshot
// its caller was authenticated with (res.locals.policy, or the direct path's). Routes and shapes (documented in README):
//   GET  /svc[?cursor=C]           → {tools, resources, resource_templates, prompts, next_cursor?} the caller may use,
//                                    at most server.list_page_size (and list_page_bytes) of each list; next_cursor while some list has more
//   POST /svc/tools/:name          body = arguments → {result, content, structured_content?}
//   GET  /svc/resources?uri=URI    → {contents}
//   POST /svc/prompts/:name        body = arguments → {description?, messages}
//   A tool declaring `task: required` (or `optional`, with `Prefer: respond-async`) runs as a task:
//   POST answers 202 Accepted, Location /svc/tasks/ID and the task; only its caller can then
//   GET  /svc/tasks                → {tasks} (the caller's own)
//   GET  /svc/tasks/:id            → the task: status, and its result or error once it ended
//   DELETE /svc/tasks/:id          → cancels it (the work is aborted), answers the task
//   GET  /svc/explain              → the caller's own view, explained (policy/explain.ts);
//        ?capability=ID&args=JSON  explains one call; ?as=TOKEN_NAME another token's view,
//        only for a caller holding the scope svc.explain (EXPLAIN_ANY_SCOPE)
// A named endpoint NAME serves the same routes under /svc/NAME (GET /svc/NAME, POST /svc/NAME/tools/X,
// GET /svc/NAME/tasks/ID …) on its view of the catalog, behind its door (endpoint-door.ts); endpoint names
// never shadow these routes (tools, resources, prompts, tasks and explain are reserved). GET /svc/explain
// ?endpoint=NAME explains the caller's view through NAME (with ?capability=, one call through it: its door,
// then the call on its view), and without it lists each endpoint too.
// Errors: {error: {code, message, ...}} with the registry's status; a backend
// failure (an error tool result included) is 502 BACKEND_FAILED, a timeout 504
// BACKEND_TIMEOUT, each with the status the error table gives it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Response, type Router } from 'express';
import type { CallContext, Principal, ToolResult } from '../core/types.js';
import type { Catalog } from '../core/catalog.js';
import type { PolicySnapshot } from '../policy/store.js';
import { SvcError } from '../errors.js';
import type { AdmittedTool, Runtime } from '../runtime/runtime.js';
import type { AuthGate } from '../auth/gate.js';
import type { Logger } from '../log.js';
import { sendError, toSvcError } from './http-errors.js';
import { responseContext } from './response-context.js';
import { scopeOf } from '../core/request-scope.js';
import { readJson, sendJson } from '../http/raw.js';
import type { TaskEngine, TaskRecord } from '../tasks/engine.js';
import { EXPLAIN_ANY_SCOPE, explainCall, explainView } from '../policy/explain.js';
import { explainEndpoint, explainEndpointCall, explainEndpoints } from '../policy/endpoint-explain.js';
import { admitAccess } from '../policy/admission.js';
import { compileGuard } from '../core/guard.js';
import { denial } from '../runtime/denial.js';
import { pageAll } from '../mcp/list-pages.js';

/** GET /svc/explain?as=: explaining another token's view needs the scope svc.explain, decided as any capability's access. */
const EXPLAIN_ANY = compileGuard([EXPLAIN_ANY_SCOPE]);

export interface SvcTransport {
  router: Router;
  /** POST /svc/tools/NAME for a principal the caller authenticated with the policy of `cat` (the server's direct path; see server/app.ts). */
  callTool(req: IncomingMessage, res: ServerResponse, p: Principal, name: string, cat?: Catalog): Promise<void>;
}

export function svcTransport(deps: { runtime: Runtime; gate: AuthGate; logger: Logger; bodyLimit: number; tasks?: TaskEngine; publicRoutes: readonly string[]; ipOf: (req: IncomingMessage) => string | undefined }): SvcTransport {
  const { runtime, gate, logger } = deps;
  const r = express.Router();
  const principalOf = (res: Response) => res.locals.principal as Principal;
  /** The request's catalog (a named endpoint's view, set by its door); undefined lets the runtime read the current one. */
  const catalogOf = (res: Response) => (res.locals.catalog as Catalog | undefined) ?? (res.locals.policy as PolicySnapshot | undefined)?.catalog;
  /** The route a challenge names: /svc, or /svc/NAME on a named endpoint. */
  const routeOf = (res: ServerResponse) => {
    const named = (res as Response).locals?.endpoint as string | undefined;
    return named ? `/svc/${named}` : '/svc';
  };
  /** The request's scope for the audit log and tracing (only while either is on). */
  const scope = (req: IncomingMessage) => (runtime.observer.scoped() ? scopeOf(req, deps.ipOf(req)) : undefined);
  /** A call context whose signal aborts when the caller goes away before the answer. */
  const ctx = (p: Principal, req: IncomingMessage, res: ServerResponse) => responseContext(p, logger, res, scope(req));
  const fail = (res: ServerResponse, e: unknown) => sendError(res, toSvcError(e, logger), gate, routeOf(res));

  /** A call the runtime decided runs as a task starts here (a task-required tool's plain POST included). */
  const startTask = deps.tasks && ((call: AdmittedTool, c: CallContext) => deps.tasks!.start({ call, principal: c.principal, transport: 'svc', scope: c.scope }));

  /** POST /svc/tools/NAME on Node's own request/response API: the Express route and the server's direct path both run it. */
  const callTool = async (req: IncomingMessage, res: ServerResponse, p: Principal, name: string, cat?: Catalog): Promise<void> => {
    try {
      const args = await readJson(req, deps.bodyLimit);
      const c = ctx(p, req, res);
      // A plain POST to a task-required tool is not refused: /svc makes it the task it must be ('auto').
      const result = startTask
        ? await runtime.callTool(name, args, c, { catalog: cat, task: /\brespond-async\b/i.test(String(req.headers.prefer ?? '')) ? 'asked' : 'auto', startTask })
        : await runtime.callTool(name, args, c, { catalog: cat });
      if (!('content' in result)) {
        res.setHeader('Location', `${routeOf(res)}/tasks/${result.id}`);
        res.setHeader('Retry-After', String(Math.ceil(result.pollIntervalMs / 1000)));
        return sendJson(res, 202, taskBody(result));
      }
      if (result.isError) return fail(res, new SvcError('BACKEND_FAILED', textOf(result), { data: { content: result.content } }));
      sendJson(res, 200, toolBody(result));
    } catch (e) {
      fail(res, e);
    }
  };

  r.get('/', (req, res) => {
    const p = principalOf(res);
    const cat = catalogOf(res) ?? runtime.current(); // one policy for the whole listing
    try {
      const { pages, nextCursor } = pageAll({
        tools: runtime.listTools(p, cat, false, false), // a /svc caller answers nothing a tool asks
        resources: runtime.listResources(p, cat),
        resourceTemplates: runtime.listResourceTemplates(p, cat),
        prompts: runtime.listPrompts(p, cat),
      }, req.query.cursor, cat.listPage);
      res.json({ tools: pages.tools, resources: pages.resources, resource_templates: pages.resourceTemplates, prompts: pages.prompts, ...(nextCursor !== undefined && { next_cursor: nextCursor }) });
    } catch (e) {
      fail(res, e);
    }
  });

  r.get('/explain', (req, res) => {
    const cat = catalogOf(res) ?? runtime.current();
    let p = principalOf(res);
    const as = req.query.as;
    if (as !== undefined) {
      const d = admitAccess(EXPLAIN_ANY, p);
      if (!d.ok) return fail(res, denial(logger, p, 'svc', 'explain', String(as), d, runtime.observer, scope(req)));
      const other = typeof as === 'string' ? (res.locals.policy as PolicySnapshot | undefined)?.tokens?.principalNamed(as) : undefined;
      if (!other) return fail(res, new SvcError('NOT_FOUND', `no token named ${String(as)}`));
      p = other;
    }
    const id = req.query.capability;
    const apps = flag(req.query.apps);
    const named = req.query.endpoint;
    if (named !== undefined && (typeof named !== 'string' || cat.endpoint || !cat.endpoints?.has(named))) return fail(res, new SvcError('NOT_FOUND', `no endpoint ${String(named)}`));
    if (typeof named === 'string' && id === undefined) return res.json(explainEndpoint(cat, p, named, { publicRoutes: deps.publicRoutes, apps }));
    if (id === undefined) {
      const endpoints = cat.endpoint ? [] : explainEndpoints(cat, p, { publicRoutes: deps.publicRoutes, apps });
      return res.json({ ...explainView(cat, p, { publicRoutes: deps.publicRoutes, apps }), ...(endpoints.length && { endpoints }) });
    }
    let args: unknown = {};
    try {
      args = typeof req.query.args === 'string' ? JSON.parse(req.query.args) : {};
    } catch {
      return fail(res, new SvcError('INVALID_REQUEST', '?args must be JSON'));
    }
    const ask = { task: flag(req.query.task), apps };
    const v = typeof id !== 'string' ? undefined : typeof named === 'string' ? explainEndpointCall(cat, p, named, id, args, ask) : explainCall(cat, p, id, args, ask);
    return v ? res.json(v) : fail(res, new SvcError('NOT_FOUND', `no capability ${String(id)}`));
  });

  r.post('/tools/:name', (req, res) => callTool(req, res, principalOf(res), req.params.name as string, catalogOf(res)));

  r.get('/resources', async (req, res) => {
    const uri = req.query.uri;
    if (typeof uri !== 'string' || !uri) return fail(res, new SvcError('INVALID_REQUEST', 'give the resource as ?uri=…'));
    try {
      res.json({ contents: await runtime.readResource(uri, ctx(principalOf(res), req, res), { catalog: catalogOf(res) }) });
    } catch (e) {
      fail(res, e);
    }
  });

  r.post('/prompts/:name', async (req, res) => {
    try {
      res.json(await runtime.getPrompt(req.params.name as string, await readJson(req, deps.bodyLimit), ctx(principalOf(res), req, res), { catalog: catalogOf(res) }));
    } catch (e) {
      fail(res, e);
    }
  });

  const tasks = deps.tasks;
  if (tasks) {
    const who = (req: IncomingMessage, res: Response) => ({ principal: principalOf(res), transport: 'svc' as const, catalog: catalogOf(res), scope: scope(req) });
    r.get('/tasks', async (req, res) => {
      try {
        res.json({ tasks: (await tasks.list(who(req, res))).map((t) => taskBody(t)) });
      } catch (e) {
        fail(res, e);
      }
    });
    r.get('/tasks/:id', async (req, res) => {
      try {
        const t = await tasks.get(req.params.id as string, who(req, res));
        if (t.status === 'working' || t.status === 'input_required') res.setHeader('Retry-After', String(Math.ceil(t.pollIntervalMs / 1000)));
        res.json(taskBody(t, true));
      } catch (e) {
        fail(res, e);
      }
    });
    r.delete('/tasks/:id', async (req, res) => {
      try {
        res.json(taskBody(await tasks.cancel(req.params.id as string, who(req, res)), true));
      } catch (e) {
        fail(res, e);
      }
    });
  }

  r.use((_req, res) => fail(res, new SvcError('NOT_FOUND', 'no such /svc route')));
  return { router: r, callTool };
}

/** A task as /svc shows it; `detailed` adds the result (completed) or the error (failed, or a tool error). */
function taskBody(t: TaskRecord, detailed = false): Record<string, unknown> {
  const out: Record<string, unknown> = {
    task_id: t.id, tool: t.tool, status: t.status,
    ...(t.statusMessage !== undefined && { status_message: t.statusMessage }),
    ...(t.cancelledBy !== undefined && { cancelled_by: t.cancelledBy }),
    created_at: t.createdAt, updated_at: t.lastUpdatedAt, ttl_ms: t.ttlMs, poll_interval_ms: t.pollIntervalMs,
  };
  if (!detailed) return out;
  if (t.status === 'completed' && t.result) {
    if (t.result.isError) out.error = new SvcError('BACKEND_FAILED', textOf(t.result), { data: { content: t.result.content } }).toJSON();
    else out.result = toolBody(t.result);
  } else if (t.status === 'failed' && t.error) out.error = t.error.toJSON();
  return out;
}

/** A query flag: ?x=1 or ?x=true. */
function flag(v: unknown): boolean {
  return v === 'true' || v === '1';
}

function textOf(result: ToolResult): string {
  const c = result.content;
  if (c.length === 1) return c[0]!.type === 'text' ? c[0]!.text : '';
  return c.map((x) => (x.type === 'text' ? x.text : '')).join('');
}

function toolBody(result: ToolResult): Record<string, unknown> {
  // json output: `result` is the backend's value itself (structuredContent wraps non-objects as {result}).
  if (result.structuredContent) return { result: valueOf(result), content: result.content, structured_content: result.structuredContent };
  const onlyText = result.content.length === 1 ? result.content[0]!.type === 'text' : result.content.every((c) => c.type === 'text');
  return onlyText ? { result: textOf(result), content: result.content } : { content: result.content };
}

/** A structured result's value: its text is the value's JSON for json output; an upstream's may be prose, then the text itself. */
function valueOf(result: ToolResult): unknown {
  const text = textOf(result);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
