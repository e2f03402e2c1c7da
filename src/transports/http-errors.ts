// Mapping errors to HTTP answers. Guarantees: one JSON error shape everywhere on
// HTTP — {"error": {"code", "message", ...data}} — with the status from the code
// registry; 401/403 always carry WWW-Authenticate; an unexpected error becomes a
// 500 INTERNAL with a request id and is logged, never shown with its stack; a
// client that went away mid-request (CANCELLED, a body stream cut short) is logged
// at info as `request.aborted`, without a stack, and is not an "unexpected error".

import type { ServerResponse } from 'node:http';
import type { Request, Response, NextFunction } from 'express';
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors.js';
import type { AuthGate, ChallengeError } from '../auth/gate.js';
import type { Logger } from '../log.js';
import { sendJson } from '../http/raw.js';

export function sendError(res: ServerResponse, err: SvcError, gate?: AuthGate, route?: string): void {
  if (gate && err.code === 'UNAUTHENTICATED') {
    const error = (err.data?.error as ChallengeError | undefined) ?? undefined;
    res.setHeader('WWW-Authenticate', gate.challenge({ error, route, description: error ? err.message : undefined }));
    if (typeof err.data?.dpopNonce === 'string') res.setHeader('DPoP-Nonce', err.data.dpopNonce);
  } else {
    refusalStatus(res, err, gate, route);
  }
  sendJson(res, err.status, { error: err.toJSON() });
}

/**
 * An access refusal of the runtime's decision, as HTTP says it on every route: INSUFFICIENT_SCOPE is 403 with the
 * insufficient_scope step-up challenge naming the scopes to ask for, a quota's RATE_LIMITED (it names its wait) 429
 * with Retry-After. Sets the headers and returns the status; undefined (nothing set) for any other error, which keeps
 * its transport's status.
 */
export function refusalStatus(res: ServerResponse, err: SvcError, gate: AuthGate | undefined, route: string | undefined): number | undefined {
  if (err.code === 'INSUFFICIENT_SCOPE') {
    if (gate) res.setHeader('WWW-Authenticate', gate.challenge({ error: 'insufficient_scope', scopes: err.data?.required as string[], route, description: err.message }));
    return err.status;
  }
  if (err.code === 'RATE_LIMITED' && typeof err.data?.retryAfterMs === 'number') {
    res.setHeader('Retry-After', String(retryAfterSeconds(err.data.retryAfterMs)));
    return err.status;
  }
  return undefined;
}

/** Retry-After in whole seconds (rounded up, at least 1) for a wait in milliseconds. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** A client that closed its connection before the answer: Node's body 'aborted' error or raw-body's `request.aborted`. */
function clientAborted(e: unknown): boolean {
  const ex = e as { type?: string; code?: string; message?: string } | undefined;
  return ex?.type === 'request.aborted' || (ex?.code === 'ECONNRESET' && ex.message === 'aborted');
}

export function toSvcError(e: unknown, log: Logger): SvcError {
  if (clientAborted(e)) e = new SvcError('CANCELLED', 'the client closed the connection before the request ended');
  if (e instanceof SvcError) {
    if (e.code === 'CANCELLED') log.info({ event: 'request.aborted', reason: e.message }, 'the client went away before the answer');
    return e;
  }
  const ex = e as { type?: string; status?: number; message?: string };
  if (ex?.type === 'entity.too.large') return new SvcError('PAYLOAD_TOO_LARGE', 'request body too large');
  if (ex?.type === 'entity.parse.failed') return new SvcError('INVALID_REQUEST', 'request body is not valid JSON');
  if (ex?.status && ex.status >= 400 && ex.status < 500) return new SvcError('INVALID_REQUEST', ex.message ?? 'bad request');
  const id = randomUUID();
  log.error({ err: e, request_id: id }, 'unexpected error');
  return new SvcError('INTERNAL', `internal error (request id ${id})`);
}

/** Express error middleware: the last word on any error a route let through. */
export function errorHandler(log: Logger, gate?: AuthGate) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = toSvcError(err, log); // logged here, once
    if (res.headersSent) return void res.destroy(); // too late for an error answer
    sendError(res, e, gate, req.path);
  };
}
