// Debian's nginx (installed by scripts/ensure-nginx.sh when missing) as a plain round-robin load balancer in
// front of replicas, for the tests that prove any replica serves any request: no affinity of any kind, HTTP/1.1
// to the replicas, no buffering (SSE streams flow as they are written), a read timeout far longer than any test
// (a quiet GET stream stays open), and `proxy_next_upstream error timeout`, so a request refused by a replica
// that was killed goes to the next one. It runs in the foreground (`daemon off; master_process on`) as the
// current user, with its config, pid, logs and temporary folders in a temporary folder of its own.
// Guarantees: url is http://127.0.0.1:PORT (a free port) once nginx answers there; every response carries
// X-Upstream (the replica's address, $upstream_addr: several, comma-separated, when nginx moved on from a
// refused one); accessLog() is every request completed so far, parsed (status, method, uri, upstream,
// upstream_status, session: the request's Mcp-Session-Id); stop() ends it (SIGTERM) once it has exited and
// removes its folder; an nginx still running when the test process exits is told to stop (SIGTERM: its master
// ends its workers) and its folder removed. stop() is SIGTERM too (nginx's fast shutdown): a graceful one would
// wait for every open SSE stream.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { freePort } from './postgres.js';
import { waitFor } from './wait.js';

export interface AccessEntry {
  status: number;
  method: string;
  uri: string;
  /** The replica(s) nginx tried, as $upstream_addr writes them (host:port, comma-separated). */
  upstream: string;
  upstream_status: string;
  /** The request's Mcp-Session-Id header ('' without one). */
  session: string;
}

export interface Nginx {
  url: string;
  /** The nginx master's pid. */
  pid: number;
  accessLog(): AccessEntry[];
  errorLog(): string;
  stop(): Promise<void>;
}

const NGINX = '/usr/sbin/nginx';
const running = new Map<ChildProcess, string>();
process.on('exit', () => {
  for (const [proc, dir] of running) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

const LOG_FORMAT = `'{"status":$status,"method":"$request_method","uri":"$request_uri","upstream":"$upstream_addr",'
    '"upstream_status":"$upstream_status","session":"$http_mcp_session_id"}'`;

function config(dir: string, port: number, replicas: string[]): string {
  const servers = replicas.map((r) => `    server ${new URL(r).host} max_fails=1 fail_timeout=60s;`).join('\n');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`).join('\n');
  return `daemon off;
master_process on;
worker_processes 1;
${process.getuid?.() === 0 ? 'user root;\n' : ''}pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
${temp}
  log_format replicas escape=json ${LOG_FORMAT};
  access_log ${join(dir, 'access.log')} replicas;
  upstream replicas {
${servers}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://replicas;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`;
}

/**
 * nginx on 127.0.0.1:`port` (default: a free one), round-robin over `replicas` (their base URLs, http://HOST:PORT).
 * Replicas whose issuer and base_url is the proxy start first, on a port taken with freePort() (test/helpers/postgres.ts).
 */
export async function startNginx(replicas: string[], port?: number): Promise<Nginx> {
  execFileSync('sh', [join(ROOT, 'scripts', 'ensure-nginx.sh')], { stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-nginx-'));
  for (const t of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
  port ??= await freePort();
  writeFileSync(join(dir, 'nginx.conf'), config(dir, port, replicas));
  const proc = spawn(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  running.set(proc, dir);
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exit = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const errorLog = () => {
    const file = join(dir, 'error.log');
    return stderr + (existsSync(file) ? readFileSync(file, 'utf8') : '');
  };
  const listening = () => new Promise<boolean | undefined>((resolve) => {
    if (proc.exitCode !== null) throw new Error(`nginx exited (${proc.exitCode}): ${errorLog()}`);
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    }).on('error', () => resolve(undefined));
  });
  await waitFor(listening, `nginx listening on 127.0.0.1:${port}`, 10_000);
  (proc as unknown as { unref(): void }).unref();
  (proc.stderr as unknown as { unref(): void }).unref();
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    accessLog: () => {
      const file = join(dir, 'access.log');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AccessEntry);
    },
    errorLog,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exit;
      running.delete(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
