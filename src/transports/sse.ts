// Server-sent events for /mcp: the answer to one POST (JSON until the call sends
// something first, then an SSE stream) and the session's standalone GET stream.
// Guarantees: nothing is written to a response that has ended or was destroyed;
// every event is one `event: message` frame holding one JSON-RPC message (with its `id:` when it has a
// number: a shared session's GET stream); an answer that
// is still plain JSON goes out with the status its caller gives it.

import type { ServerResponse } from 'node:http';
import { sendEmpty, sendJson } from '../http/raw.js';
import type { JsonRpcMessage } from '../mcp/jsonrpc.js';
import type { HandleResult, Sink } from '../mcp/protocol.js';

export interface Accepts { json: boolean; sse: boolean }

/**
 * The answer to one POST. It stays a plain JSON answer while the call sends nothing; the first
 * notification or server→client request turns it into an SSE stream (when the client accepts one),
 * and the result is the stream's last event. A client that accepts only SSE always gets a stream.
 */
export class PostReply {
  #mode: 'pending' | 'sse' | 'done' = 'pending';
  readonly #res: ServerResponse;
  readonly #accept: Accepts;
  readonly #fallback: Sink;

  constructor(res: ServerResponse, accept: Accepts, fallback: Sink) {
    this.#res = res;
    this.#accept = accept;
    this.#fallback = fallback;
  }

  /** The answer has turned into an SSE stream (its status line is sent). */
  get streaming(): boolean {
    return this.#mode === 'sse';
  }

  readonly sink: Sink = (m) => {
    if (this.#mode === 'done' || this.#res.destroyed) return this.#fallback(m);
    if (this.#mode === 'pending') {
      if (!this.#accept.sse) return this.#fallback(m);
      startSse(this.#res);
      this.#mode = 'sse';
    }
    return writeEvent(this.#res, m);
  };

  /** Sends the answer: as JSON with `status` (202 and no body when there is nothing to answer), or as the stream's last event once streaming. */
  finish(answer: HandleResult, status = 200): void {
    const mode = this.#mode;
    this.#mode = 'done';
    const res = this.#res;
    if (mode === 'done' || res.destroyed) return;
    if (mode === 'pending') {
      if (answer === undefined) return sendEmpty(res, 202);
      if (status !== 200 || this.#accept.json) return sendJson(res, status, answer);
      startSse(res);
    }
    for (const m of answer === undefined ? [] : Array.isArray(answer) ? answer : [answer]) writeEvent(res, m);
    res.end();
  }
}

export function startSse(res: ServerResponse, sessionId?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  if (sessionId) res.setHeader('Mcp-Session-Id', sessionId);
  res.flushHeaders();
}

export function writeEvent(res: ServerResponse, m: JsonRpcMessage, id?: number): boolean {
  if (res.writableEnded || res.destroyed) return false;
  res.write(id === undefined ? `event: message\ndata: ${JSON.stringify(m)}\n\n` : `id: ${id}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`);
  return true;
}
