// Request and response helpers on Node's own http API, shared by the transports'
// hot paths (which the server may call without Express) and by Express routes.
// Guarantees: a body is read up to `limit` bytes and never beyond (413
// PAYLOAD_TOO_LARGE, declared or actual); a body cut short by the client is
// CANCELLED; compressed bodies are refused rather than misread; JSON answers carry an exact Content-Length.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../errors.js';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // writeHead with a list merges headers set earlier (Mcp-Session-Id, CORS) and skips setHeader's per-call work.
  res.writeHead(status, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text))]);
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.statusCode = status;
  res.end();
}

export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      req.resume();
      return reject(new SvcError('INVALID_REQUEST', `Content-Encoding ${encoding} is not accepted; send the body uncompressed`));
    }
    const declared = Number(req.headers['content-length']);
    const tooLarge = () => new SvcError('PAYLOAD_TOO_LARGE', `the body exceeds server.body_limit (${limit} bytes)`);
    if (declared > limit) {
      req.resume();
      return reject(tooLarge());
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        return reject(tooLarge());
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    // A client that disconnects mid-body (even before we listen) is not a malformed request: CANCELLED.
    const cut = (cause?: unknown) => new SvcError('CANCELLED', 'the client closed the connection before the body ended', { cause });
    if (req.destroyed && !req.complete) return reject(cut());
    req.on('error', (e) => reject(req.complete ? e : cut(e)));
    req.on('close', () => req.complete || reject(cut()));
  });
}

/** A JSON body (an empty body is {}); malformed JSON is INVALID_REQUEST. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const text = await readBody(req, limit);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError('INVALID_REQUEST', 'request body is not valid JSON');
  }
}
