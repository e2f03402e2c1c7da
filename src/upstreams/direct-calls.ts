// fastsvc's own requests on a 2025-era upstream's transport, beside the official client that keeps
// the connection (initialize, lists, notifications, the upstream's requests). Why: the client's
// request path checks every answer against the method's result schema, on top of classifying each
// message by schema, and that was most of a proxied call's CPU (issue 31); what fastsvc passes on is
// checked by the client in front of it. Guarantees: request ids are strings `fastsvc-N`, which the
// client's numeric ids never are, so the answer to one of these requests, a progress notification
// for it and a too-large error synthesized for it (wire/stdio-transport.ts, wire/capped-fetch.ts) are taken
// here and never reach the client; every other message reaches the client unchanged and in order.
// A request ends exactly once: with its result (a JSON object, else SdkError InvalidResult; an
// answer larger than maxBytes — its message's bytes as the transport read them where it says,
// wire/stdio-transport.ts's messageBytes, else as JSON — is the too-large error instead, and a result is
// never serialized again to be measured), with its JSON-RPC error as the client's ProtocolError,
// when its call is aborted (notifications/cancelled then goes upstream with the same reason text as
// the client's), or when the transport closes (SdkError ConnectionClosed), which also refuses every
// later request. No timer and no AbortSignal of its own: the call's Abortable carries the deadline.
// Not for the 2026-07-28 wire, whose requests carry the client's _meta envelope and whose answers
// may be input_required rounds: the client keeps those.

import { ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import type { Abortable } from '../core/lazy-abort.js';
import { TOO_LARGE_RPC } from './wire/stdio-transport.js';

const PREFIX = 'fastsvc-';

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  onprogress?: (progress: ProgressParams) => void;
  /** Stops listening for the abort. */
  stop: (() => void) | undefined;
}

export interface ProgressParams {
  progress: number;
  total?: number;
  message?: string;
}

type Message = { id?: unknown; method?: unknown; params?: { progressToken?: unknown } & Record<string, unknown>; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };

export class DirectCalls {
  readonly #transport: Transport & { readonly messageBytes?: number };
  readonly #maxBytes: number;
  readonly #pending = new Map<string, Pending>();
  #next = 0;
  #closed = false;

  /** Call after the client's connect(): the client's own onmessage and onclose stay behind these. */
  constructor(transport: Transport, maxBytes: number) {
    this.#transport = transport;
    this.#maxBytes = maxBytes;
    const toClient = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.#took(message as Message)) toClient?.(message, extra);
    };
    const closeClient = transport.onclose;
    transport.onclose = () => {
      this.#close();
      closeClient?.();
    };
  }

  /**
   * `method` with `params`, `headers` on its HTTP request (a Streamable HTTP transport's; wire/related-stream.ts's routing
   * tag); `onprogress` asks the upstream for progress (a progressToken) and hears it.
   */
  request(method: string, params: Record<string, unknown>, abort: Abortable, headers?: Record<string, string>, onprogress?: (p: ProgressParams) => void): Promise<Record<string, unknown>> {
    if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    if (abort.aborted) return Promise.reject(abort.reason);
    const id = PREFIX + this.#next++;
    const sent = onprogress ? { ...params, _meta: { ...(params._meta as object | undefined), progressToken: id } } : params;
    return new Promise((resolve, reject) => {
      const pending: Pending = { resolve, reject, onprogress, stop: undefined };
      this.#pending.set(id, pending);
      pending.stop = abort.onAbort((reason) => {
        if (!this.#pending.delete(id)) return;
        reject(reason);
        void this.#transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } }).catch(() => undefined);
      });
      this.#transport.send({ jsonrpc: '2.0', id, method, params: sent } as JSONRPCMessage, headers && { headers }).catch((e: Error) => this.#end(id)?.reject(e));
    });
  }

  /** The pending request `id`, no longer pending (its abort listener removed); undefined when it already ended. */
  #end(id: string): Pending | undefined {
    const p = this.#pending.get(id);
    if (!p) return undefined;
    this.#pending.delete(id);
    p.stop?.();
    return p;
  }

  /** Whether the message belongs to one of these requests (then it is handled here). */
  #took(m: Message): boolean {
    if (m.method === undefined) {
      if (typeof m.id !== 'string' || !m.id.startsWith(PREFIX)) return false;
      const p = this.#end(m.id);
      if (!p) return true; // a late answer to a request that ended (cancelled): nobody waits for it
      if (m.error !== undefined) p.reject(protocolError(m.error));
      else if ((this.#transport.messageBytes ?? Buffer.byteLength(JSON.stringify(m))) > this.#maxBytes) p.reject(new ProtocolError(TOO_LARGE_RPC, `the answer is larger than ${this.#maxBytes} bytes`));
      else if (m.result !== null && typeof m.result === 'object' && !Array.isArray(m.result)) p.resolve(m.result as Record<string, unknown>);
      else p.reject(new SdkError(SdkErrorCode.InvalidResult, 'Invalid result: not a JSON object'));
      return true;
    }
    if (m.method !== 'notifications/progress') return false;
    const token = m.params?.progressToken;
    if (typeof token !== 'string' || !token.startsWith(PREFIX)) return false;
    const { progress, total, message } = m.params as Record<string, unknown>;
    if (typeof progress === 'number') {
      this.#pending.get(token)?.onprogress?.({ progress, ...(typeof total === 'number' && { total }), ...(typeof message === 'string' && { message }) });
    }
    return true;
  }

  #close(): void {
    this.#closed = true;
    const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    for (const id of [...this.#pending.keys()]) this.#end(id)?.reject(error);
  }
}

function protocolError(e: NonNullable<Message['error']>): ProtocolError {
  const code = typeof e.code === 'number' ? e.code : -32603;
  return ProtocolError.fromError(code, typeof e.message === 'string' ? e.message : 'Internal error', e.data);
}
