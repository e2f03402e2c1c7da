// A throwaway PostgreSQL cluster for tests: Debian's server binaries (installed by
// scripts/ensure-postgres.sh when missing), `initdb` into a fresh temporary folder, the
// server on 127.0.0.1 and a free port with its socket in that folder. PostgreSQL refuses
// to run as root, so as root every binary runs as the `postgres` system user (runuser).
// Guarantees: url() is a connection string for a superuser `fastsvc` with trust auth on
// loopback only; stop()/start() stop and restart the same cluster (data kept); destroy()
// stops it and removes the folder; clusters still running when the test process exits
// are stopped (pg_ctl immediate).

import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export interface PgCluster {
  url(database?: string): string;
  port: number;
  dir: string;
  /** Fast shutdown (connections are closed); the data stays. */
  stop(): void;
  start(): void;
  destroy(): void;
}

const running = new Set<string>();
process.on('exit', () => {
  for (const data of running) pgCtl(data, ['stop', '-m', 'immediate'], false);
});

function binDir(): string {
  execFileSync('sh', [join(ROOT, 'scripts', 'ensure-postgres.sh')], { stdio: 'inherit' });
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

const asRoot = process.getuid?.() === 0;
function pgRun(bin: string, args: string[], check = true): void {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (check && r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}
let bin = '';
const pgCtl = (data: string, args: string[], check = true) => pgRun(join(bin, 'pg_ctl'), ['-D', data, ...args], check);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    }).on('error', reject);
  });
}

export async function startPostgres(): Promise<PgCluster> {
  bin ||= binDir();
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  pgRun(join(bin, 'initdb'), ['-D', data, '-U', 'fastsvc', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  const opts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=on -c max_connections=100`;
  const start = () => {
    pgCtl(data, ['start', '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', opts]);
    running.add(data);
  };
  const stop = () => {
    pgCtl(data, ['stop', '-w', '-m', 'fast']);
    running.delete(data);
  };
  start();
  return {
    port,
    dir,
    url: (database = 'postgres') => `postgres://fastsvc@127.0.0.1:${port}/${database}`,
    stop,
    start,
    destroy() {
      if (running.has(data)) stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
