// The callers in front of a gateway under test (a `svc serve` with upstreams), one per way in: /svc (REST),
// /mcp on 2026-07-28 (the SDK client 2.x), /mcp on 2025-11-25 (the SDK client 1.x) and /ws (JSON-RPC,
// 2025-11-25 after initialize). Each lists the tools a bearer token sees and makes one call, so a test can run
// the same table {caller, expected} against every transport. Guarantees: every client is closed (its MCP
// session ended) before a function returns, whatever happened; a call's outcome is either its result or the
// refusal's fastsvc code (error.code on /svc, the JSON-RPC error's data.code on /mcp and /ws), never a guess;
// a result has MCP's shape on every transport (content, structuredContent); readResource() reads one URI the same way.
import { Client as ModernClient, InsufficientScopeError, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RawWs } from './mcp-app.js';
import { getStreamWatch } from './sse.js';

export const FRONTS = ['svc', 'mcp-2026', 'mcp-2025', 'ws'] as const;
export type Front = (typeof FRONTS)[number];

/** A tool call's result, or the code fastsvc refused it with. */
export type Outcome = { result: Record<string, unknown> } | { refused: string };

/** POST /svc/tools/NAME with a bearer: the status and the parsed body. */
export async function svcCall(url: string, token: string, name: string, args: unknown, signal?: AbortSignal): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${url}/svc/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args), signal });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** The SDK client 2.x on /mcp, negotiating (fastsvc offers 2026-07-28); close() when done. */
export async function modernClient(url: string, token: string, o: ConstructorParameters<typeof ModernClient>[1] = {}): Promise<ModernClient> {
  const client = new ModernClient({ name: 'gateway-front', version: '1' }, { versionNegotiation: { mode: 'auto' }, ...o });
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { authProvider: { token: async () => token } }));
  return client;
}

/**
 * The SDK client 1.x on /mcp (2025-11-25); close() ends its session too. streamOpen() resolves once the session's GET
 * stream (which carries what the server sends outside any request: list changes, resource updates) is open.
 */
export async function legacyClient(url: string, token: string, o: ConstructorParameters<typeof LegacyClient>[1] = {}): Promise<{ client: LegacyClient; streamOpen(): Promise<void>; close(): Promise<void> }> {
  const stream = getStreamWatch();
  const transport = new LegacyTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: stream.fetch });
  const client = new LegacyClient({ name: 'gateway-front-legacy', version: '1' }, o);
  await client.connect(transport);
  return {
    client,
    streamOpen: stream.opened,
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/**
 * The fastsvc code of a refusal: the JSON-RPC error's data.code (/ws, client 2.x), which client 1.x only puts in
 * its message (the 403's body); client 2.x raises fastsvc's 403 insufficient_scope challenge as
 * InsufficientScopeError (it would step up, given a way to), which is INSUFFICIENT_SCOPE. Anything else is thrown.
 */
export function refusal(e: unknown): Outcome {
  if (e instanceof InsufficientScopeError) return { refused: 'INSUFFICIENT_SCOPE' };
  let code = (e as { data?: { code?: unknown } })?.data?.code;
  const body = /\{.*\}$/s.exec((e as Error)?.message ?? '')?.[0];
  if (code === undefined && body) code = (JSON.parse(body) as { error?: { data?: { code?: unknown } } }).error?.data?.code;
  if (typeof code !== 'string') throw e;
  return { refused: code };
}

/** JSON-RPC on /ws after a 2025-11-25 initialize: the result, or the refusal's data.code. */
async function overWs<T>(url: string, token: string, run: (ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>) => Promise<T>): Promise<T> {
  const ws = RawWs.open(url, token);
  try {
    await ws.initialize();
    return await run(async (method, params) => ws.call(method, params));
  } finally {
    ws.socket.close();
  }
}

/** The tool names `token` is shown on `front`, sorted. */
export async function listTools(front: Front, url: string, token: string): Promise<string[]> {
  const sorted = (tools: { name: string }[]) => tools.map((t) => t.name).sort();
  switch (front) {
    case 'svc': {
      const tools: { name: string }[] = [];
      let cursor: string | undefined;
      do { // every page: GET /svc pages its lists by server.list_page_size
        const r = await fetch(`${url}/svc${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await r.json()) as { tools: { name: string }[]; next_cursor?: string };
        tools.push(...body.tools);
        cursor = body.next_cursor;
      } while (cursor !== undefined);
      return sorted(tools);
    }
    case 'mcp-2026': {
      const c = await modernClient(url, token);
      try {
        if (c.getNegotiatedProtocolVersion() !== '2026-07-28') throw new Error(`client 2.x negotiated ${c.getNegotiatedProtocolVersion()}`);
        return sorted((await c.listTools()).tools);
      } finally {
        await c.close();
      }
    }
    case 'mcp-2025': {
      const c = await legacyClient(url, token);
      try {
        return sorted((await c.client.listTools()).tools);
      } finally {
        await c.close();
      }
    }
    case 'ws':
      return overWs(url, token, async (ask) => sorted(((await ask('tools/list', {})).result as { tools: { name: string }[] }).tools));
  }
}

/** One tools/call of `name` by `token` on `front`. */
export async function callTool(front: Front, url: string, token: string, name: string, args: Record<string, unknown>): Promise<Outcome> {
  switch (front) {
    case 'svc': {
      // A result in MCP's shape: /svc names structured content structured_content.
      const r = await svcCall(url, token, name, args);
      if (r.status !== 200) return { refused: (r.body.error as { code: string }).code };
      return { result: { content: r.body.content, ...(r.body.structured_content !== undefined && { structuredContent: r.body.structured_content }) } };
    }
    case 'mcp-2026': {
      const c = await modernClient(url, token);
      try {
        return { result: (await c.callTool({ name, arguments: args })) as Record<string, unknown> };
      } catch (e) {
        return refusal(e);
      } finally {
        await c.close();
      }
    }
    case 'mcp-2025': {
      const c = await legacyClient(url, token);
      try {
        return { result: (await c.client.callTool({ name, arguments: args })) as Record<string, unknown> };
      } catch (e) {
        return refusal(e);
      } finally {
        await c.close();
      }
    }
    case 'ws':
      return overWs(url, token, async (ask) => {
        const m = await ask('tools/call', { name, arguments: args });
        if (m.error) return refusal(m.error);
        return { result: m.result as Record<string, unknown> };
      });
  }
}

/** One resources/read of `uri` by `token` on `front` (GET /svc/resources?uri= on /svc): its contents, or the refusal's code. */
export async function readResource(front: Front, url: string, token: string, uri: string): Promise<{ contents: Record<string, unknown>[] } | { refused: string }> {
  switch (front) {
    case 'svc': {
      const r = await fetch(`${url}/svc/resources?uri=${encodeURIComponent(uri)}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await r.json()) as { contents?: Record<string, unknown>[]; error?: { code: string } };
      return r.status === 200 ? { contents: body.contents! } : { refused: body.error!.code };
    }
    case 'mcp-2026': {
      const c = await modernClient(url, token);
      try {
        return { contents: (await c.readResource({ uri })).contents as Record<string, unknown>[] };
      } catch (e) {
        return refusal(e) as { refused: string };
      } finally {
        await c.close();
      }
    }
    case 'mcp-2025': {
      const c = await legacyClient(url, token);
      try {
        return { contents: (await c.client.readResource({ uri })).contents as Record<string, unknown>[] };
      } catch (e) {
        return refusal(e) as { refused: string };
      } finally {
        await c.close();
      }
    }
    case 'ws':
      return overWs(url, token, async (ask) => {
        const m = await ask('resources/read', { uri });
        return m.error ? (refusal(m.error) as { refused: string }) : { contents: (m.result as { contents: Record<string, unknown>[] }).contents };
      });
  }
}
