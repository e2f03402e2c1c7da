// recordingProxy(): a loopback HTTP front that forwards every request unchanged to one origin (Prism, in the OpenAPI
// tests) and remembers what came and what went back, so a test can assert the exact request fastsvc built (method,
// path and query as sent, headers, body) and count what reached the API. Guarantees: listens on 127.0.0.1 only; the
// method, path with query, headers (Host rewritten to the origin's) and body reach the origin as received; the
// origin's status, headers and body reach the caller; each exchange is recorded once its answer is complete, in the
// order answers completed; bodies above 4 MiB are refused with 413 (a test's request is never that big).

import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  /** Path and query exactly as the request line carried them. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  /** The origin's answer headers (Prism puts the violations it found in sl-violations). */
  answerHeaders: IncomingHttpHeaders;
  answer: string;
}

export interface RecordingProxy {
  url: string;
  seen: Exchange[];
  close(): Promise<void>;
}

const LIMIT = 4 * 1024 * 1024;

export async function recordingProxy(origin: string): Promise<RecordingProxy> {
  const to = new URL(origin);
  const seen: Exchange[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= LIMIT) chunks.push(c);
    });
    req.on('end', () => {
      if (size > LIMIT) return void res.writeHead(413).end();
      const body = Buffer.concat(chunks);
      const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host }, timeout: 30_000 }, (answer) => {
        const got: Buffer[] = [];
        answer.on('data', (c: Buffer) => got.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(got);
          seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: body.toString('utf8'), status: answer.statusCode!, answerHeaders: answer.headers, answer: text.toString('utf8') });
          res.writeHead(answer.statusCode!, answer.headers).end(text);
        });
      });
      out.on('timeout', () => out.destroy(new Error('origin timed out')));
      out.on('error', (e) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`recording proxy: ${e.message}`));
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}
