// Hosts a 1.x SDK MCP server over Streamable HTTP on 127.0.0.1 (port 0), a session per initialize:
// the plumbing the recording, feature and sessions test upstreams share. `build` makes the server a new
// session connects to; `peek` (optional) sees each request first and may return the POST body it read,
// which the transport then takes parsed; `refused` (optional), asked after peek, answers the request 401
// (a credential the server no longer accepts). An unknown session id gets 404 (MCP: start a new session),
// a session ended with DELETE included. What it counts, for tests of a client's manners: sessions opened
// (initialize answered) and ended by the client's DELETE, and the TCP connections open now.
// close() ends every session, then every connection, then the listener.

import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

interface Connectable {
  connect(transport: StreamableHTTPServerTransport): Promise<void>;
}

export interface SdkHost {
  url: string;
  /** Session ids opened so far (initialize answered), in order. */
  opened: string[];
  /** Session ids the client ended with DELETE, in order. */
  deleted: string[];
  /** TCP connections open now. */
  sockets(): number;
  close(): Promise<void>;
}

export async function hostSdkServer(build: () => Connectable, peek?: (req: http.IncomingMessage) => Promise<unknown>, refused?: (req: http.IncomingMessage) => boolean): Promise<SdkHost> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const opened: string[] = [];
  const deleted: string[] = [];
  const open = new Set<Socket>();
  const server = http.createServer(async (req, res) => {
    const body = peek ? await peek(req) : undefined;
    if (refused?.(req)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"error":"invalid_token"}');
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          opened.push(id);
          transports.set(id, transport!);
        },
        onsessionclosed: (id) => {
          deleted.push(id);
          transports.delete(id);
        },
      });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    opened,
    deleted,
    sockets: () => open.size,
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
