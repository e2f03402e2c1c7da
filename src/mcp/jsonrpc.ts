// JSON-RPC 2.0 message shapes, classification and error answers for the MCP core.
// Guarantees: classify() never throws and sorts any parsed value into exactly one
// of request / notification / response / invalid; error answers carry codes from
// src/errors.ts (CODES[code].rpc) or the JSON-RPC reserved codes named here.

import { CODES, SvcError, type ErrorCode } from '../errors.js';

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Reserved JSON-RPC codes that have no SvcError code of their own. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: CODES.INVALID_REQUEST.rpc,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: CODES.INVALID_INPUT.rpc,
  INTERNAL: CODES.INTERNAL.rpc,
} as const;

export type Classified =
  | { kind: 'request'; msg: JsonRpcRequest }
  | { kind: 'notification'; msg: JsonRpcNotification }
  | { kind: 'response'; msg: JsonRpcResponse }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Sort one parsed JSON value into a JSON-RPC message kind (MCP forbids null ids). */
export function classify(v: unknown): Classified {
  if (!isObject(v)) return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  const id = isId(v.id) ? v.id : null;
  if (v.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if (v.params !== undefined && !isObject(v.params)) return { kind: 'invalid', id, reason: 'params must be an object' };
  if (typeof v.method === 'string') {
    if (v.id === undefined) return { kind: 'notification', msg: v as unknown as JsonRpcNotification };
    if (!isId(v.id)) return { kind: 'invalid', id: null, reason: 'id must be a string or a number' };
    return { kind: 'request', msg: v as unknown as JsonRpcRequest };
  }
  if (v.method === undefined && isId(v.id) && (('result' in v) !== ('error' in v))) {
    if ('error' in v && !(isObject(v.error) && typeof v.error.code === 'number')) {
      return { kind: 'invalid', id, reason: 'error must be an object with a numeric code' };
    }
    return { kind: 'response', msg: v as unknown as JsonRpcResponse };
  }
  return { kind: 'invalid', id, reason: 'not a request, notification or response' };
}

export function result(id: JsonRpcId, value: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result: value };
}

export function failure(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** The JSON-RPC error for a SvcError. INSUFFICIENT_SCOPE adds `scope`: the space-joined required scopes. */
export function errorFrom(id: JsonRpcId | null, err: SvcError): JsonRpcResponse {
  const data: Record<string, unknown> = { code: err.code, ...(err.data ?? {}) };
  if (err.code === 'INSUFFICIENT_SCOPE' && Array.isArray(err.data?.required)) {
    data.scope = (err.data.required as string[]).join(' ');
  }
  return failure(id, err.rpcCode, err.message, data);
}

export function errorOf(id: JsonRpcId | null, code: ErrorCode, message: string, data?: Record<string, unknown>): JsonRpcResponse {
  return errorFrom(id, new SvcError(code, message, data === undefined ? {} : { data }));
}
