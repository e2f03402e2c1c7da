// A loopback HTTPS server publishing Client ID Metadata Documents, for tests: a throwaway
// CA and a certificate for localhost/127.0.0.1 made with openssl in a temp folder (the
// server under test trusts the CA through oauth.client_id_metadata_documents.ca_file),
// listening on 127.0.0.1 only. Each path answers what the test put there (a document
// whose client_id is its own URL by default, or any status/headers/body) and counts hits.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a path answers; `stall`: headers sent, the body never finished. */
export interface Answer { status?: number; headers?: Record<string, string>; body: string; stall?: boolean }

export interface DocServer {
  /** https://localhost:PORT — a name that resolves to 127.0.0.1. */
  origin: string;
  /** PEM of the CA that signed the server's certificate. */
  caFile: string;
  hits: Map<string, number>;
  /** Publish a client metadata document at `path` (client_id = its URL unless `meta` says otherwise); returns its URL. */
  publish(path: string, meta: Record<string, unknown>, headers?: Record<string, string>): string;
  /** Answer `path` with anything. */
  answer(path: string, a: Answer): string;
  close(): Promise<void>;
}

function makeCertificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=fastsvc test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  return { key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')), caFile: join(dir, 'ca.pem') };
}

export async function startDocServer(): Promise<DocServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-cimd-'));
  const { key, cert, caFile } = makeCertificates(dir);
  const answers = new Map<string, Answer>();
  const hits = new Map<string, number>();
  const server = https.createServer({ key, cert }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const a = answers.get(path) ?? { status: 404, body: '{}' };
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers });
    if (a.stall) res.write(a.body);
    else res.end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  const answer = (path: string, a: Answer) => {
    answers.set(path, a);
    return `${origin}${path}`;
  };
  return {
    origin,
    caFile,
    hits,
    answer,
    publish: (path, meta, headers) => answer(path, { headers, body: JSON.stringify({ client_id: `${origin}${path}`, ...meta }) }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
