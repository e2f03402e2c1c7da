// The probes the catalog benches share (bench/large-manifest.mjs, bench/openapi-catalog.mjs): one JSON-RPC request
// over /mcp (MCP 2026-07-28, stateless) and one GET /svc on a keep-alive agent, a list page timed to its last byte,
// both lists walked page by page (every answer parsed and checked), the peak RSS of a server while something runs,
// and `svc validate FILE` timed with its peak RSS and CPU. The servers they probe take TOKEN; CLI is the build
// (FASTSVC_CLI points them at another one).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { ROOT, rssMiB } from './proc.mjs';

const VERSION = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'large-manifest-bench', version: '1.0.0' } };
export const TOKEN = 'large-manifest-bench-token-0123456789';
export const CLI = process.env.FASTSVC_CLI ?? 'dist/cli.js';
export const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One JSON-RPC request over /mcp (keep-alive; retried once when the server had closed the idle socket); resolves the parsed message. */
export function mcp(base, method, params, name) {
  return mcpOnce(base, method, params, name).catch((e) => {
    if (e.code !== 'ECONNRESET' && e.code !== 'EPIPE') throw e;
    return mcpOnce(base, method, params, name);
  });
}

function mcpOnce(base, method, params, name) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': VERSION, 'mcp-method': method, ...(name && { 'mcp-name': name }) };
  return new Promise((res, rej) => {
    const req = http.request(`${base}/mcp`, { method: 'POST', headers, agent, timeout: 30_000 }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          res(String(r.headers['content-type']).startsWith('text/event-stream')
            ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5))).find((m) => 'result' in m || 'error' in m)
            : JSON.parse(text));
        } catch {
          rej(new Error(`${method}: HTTP ${r.statusCode} ${text.slice(0, 160)}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method}: timeout`)));
    req.on('error', rej);
    req.end(body);
  });
}

/**
 * Milliseconds from sending one list request (tools/list on /mcp, or GET /svc) to its answer's last byte, on the
 * keep-alive agent: what the server and the wire take, not the client's JSON.parse (the walks check the answers).
 * Throws unless 200 with a body.
 */
export function pageMs(base, which) {
  const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } });
  const headers = which === 'mcp'
    ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/list' }
    : { authorization: `Bearer ${TOKEN}` };
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const req = http.request(`${base}/${which}`, { method: which === 'mcp' ? 'POST' : 'GET', headers, agent, timeout: 30_000 }, (r) => {
      let bytes = 0;
      r.on('data', (c) => (bytes += c.length));
      r.on('end', () => (r.statusCode === 200 && bytes > 0 ? res(performance.now() - t0) : rej(new Error(`${which} list page: HTTP ${r.statusCode}, ${bytes} bytes`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${which} list page: timeout`)));
    req.on('error', rej);
    req.end(which === 'mcp' ? mcpBody : undefined);
  });
}

export const timed = async (fn) => {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
};

/** Walks tools/list page by page; returns { pages, names }. Throws on an error answer. */
export async function walkList(base) {
  const names = [];
  let cursor;
  let pages = 0;
  do {
    const msg = await mcp(base, 'tools/list', cursor === undefined ? {} : { cursor });
    if (!msg.result) throw new Error(`tools/list answered ${JSON.stringify(msg).slice(0, 160)}`);
    for (const t of msg.result.tools) names.push(t.name);
    cursor = msg.result.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { pages, names };
}

/** GET /svc (with ?cursor= after the first page) on the keep-alive agent, as /mcp is timed; resolves the parsed answer. Throws unless 200. */
function svcList(base, cursor) {
  const url = `${base}/svc${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`;
  return new Promise((res, rej) => {
    const req = http.request(url, { headers: { authorization: `Bearer ${TOKEN}` }, agent, timeout: 30_000 }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (r.statusCode !== 200) return rej(new Error(`GET /svc answered ${r.statusCode} ${text.slice(0, 160)}`));
        res(JSON.parse(text));
      });
    });
    req.on('timeout', () => req.destroy(new Error('GET /svc: timeout')));
    req.on('error', rej);
    req.end();
  });
}

/** Walks GET /svc page by page (next_cursor; a server that does not page answers everything at once); returns { pages, names }. */
export async function walkSvc(base) {
  const names = [];
  let cursor;
  let pages = 0;
  do {
    const body = await svcList(base, cursor);
    for (const t of body.tools) names.push(t.name);
    cursor = body.next_cursor;
    pages++;
  } while (cursor !== undefined);
  return { pages, names };
}

/** Peak RSS while fn runs, in MiB: VmHWM after a clear_refs reset when the kernel lets us, else VmRSS polled. */
export async function peakDuring(pid, fn) {
  let reset = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    reset = true;
  } catch {} // not allowed here: fall back to polling
  let polled = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      polled = Math.max(polled, rssMiB(pid));
    } catch {} // exited
  }, 2);
  try {
    const v = await fn();
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return [reset && hwm ? Math.max(polled, Number(hwm[1]) / 1024) : polled, v];
  } finally {
    clearInterval(timer);
  }
}

/** `svc validate FILE`: wall ms, the child's peak RSS (MiB) and CPU ms (user + system), from /usr/bin/time -v. */
export function validateRun(file) {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-v', process.execPath, CLI, 'validate', file], { cwd: ROOT, env: { ...process.env, SVC_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', rej);
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return rej(new Error(`svc validate exited ${code}: ${(out + err).slice(0, 300)}`));
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(err);
      const cpu = ['User', 'System'].map((w) => new RegExp(`${w} time \\(seconds\\): ([\\d.]+)`).exec(err));
      res({ ms, peakMiB: kb ? Number(kb[1]) / 1024 : NaN, cpuMs: cpu.every(Boolean) ? (Number(cpu[0][1]) + Number(cpu[1][1])) * 1000 : NaN });
    });
  });
}
