// Both official MCP SDK clients behind one face, for tests that run one table against each: the 1.x client
// (@modelcontextprotocol/sdk, 2025-11-25, a session) and the 2.x client (@modelcontextprotocol/client, which
// negotiates 2026-07-28 with fastsvc — asserted at connect), each on /mcp with a static bearer token. Guarantees:
// listAll() follows nextCursor to the last page (so a catalog of any size is seen whole, in the server's order);
// call() gives the result as the client returned it (the clients validate structuredContent against the listed
// outputSchema themselves) or the fastsvc code of a refusal (gateway-front's refusal()); close() ends the session.

import { legacyClient, modernClient, refusal, type Outcome } from './gateway-front.js';

export const SDK_CLIENTS = ['sdk 1.x (2025-11-25)', 'sdk 2.x (2026-07-28)'] as const;
export type SdkClient = (typeof SDK_CLIENTS)[number];

export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface McpCaller {
  listAll(): Promise<ListedTool[]>;
  call(name: string, args: Record<string, unknown>): Promise<Outcome>;
  close(): Promise<void>;
}

type Lister = (cursor?: string) => Promise<{ tools: unknown[]; nextCursor?: string }>;
type Caller = (name: string, args: Record<string, unknown>) => Promise<unknown>;

function face(list: Lister, call: Caller, close: () => Promise<void>): McpCaller {
  return {
    async listAll() {
      const all: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await list(cursor);
        all.push(...(page.tools as ListedTool[]));
        cursor = page.nextCursor;
      } while (cursor);
      return all;
    },
    async call(name, args) {
      try {
        return { result: (await call(name, args)) as Record<string, unknown> };
      } catch (e) {
        return refusal(e);
      }
    },
    close,
  };
}

/** Connects `kind` to URL/mcp with `token`; timeoutMs bounds each request (the SDKs' default is 60 s). */
export async function connectSdk(kind: SdkClient, url: string, token: string, timeoutMs = 60_000): Promise<McpCaller> {
  const options = { timeout: timeoutMs };
  if (kind === 'sdk 1.x (2025-11-25)') {
    const c = await legacyClient(url, token);
    return face((cursor) => c.client.listTools(cursor ? { cursor } : {}, options), (name, args) => c.client.callTool({ name, arguments: args }, undefined, options), () => c.close());
  }
  const c = await modernClient(url, token);
  if (c.getNegotiatedProtocolVersion() !== '2026-07-28') {
    await c.close();
    throw new Error(`client 2.x negotiated ${c.getNegotiatedProtocolVersion()}`);
  }
  return face((cursor) => c.listTools(cursor ? { cursor } : {}, options), (name, args) => c.callTool({ name, arguments: args }, options), () => c.close());
}
