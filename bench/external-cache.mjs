// External tokens cached (issue 30): what 10,000 distinct valid external JWTs cost a server's memory, whether the
// cache of verified tokens stays bounded, and what verifying a token not yet cached costs, RS256 and ES256.
//
// On a fresh fastsvc-external server of its own (--inspect on a loopback port, for the retained heap), with
// `tokens` JWTs per IdP minted beforehand at the corporate IdPs' token endpoints (lib/idp.mjs; minting costs the
// IdP about 1 ms a token, far more than verifying one, so it stays off the clock). Passes, each `tokens`
// POST /svc/tools/bench.echo calls from 10 keep-alive connections (closed loop), every answer checked:
//   warm-up  one token, `tokens` times (cached after its first call)      → idle RSS and heap
//   A        each RS256 token once: verified, cached (the cache fills)     → RSS and heap with `tokens` cached
//   B        the same again: every call a cache hit                        → server CPU per cached call
//   C        each ES256 token once: verified, each evicting an RS256 one
//   D        each RS256 token once more: verified again, each evicting an ES256 one
//   E        the same again: every call a cache hit                        → RSS and heap after 3 × `tokens` distinct
// Server CPU per call is read from /proc around each pass; a cold verification's cost is a cold pass's CPU per call
// minus the cached passes' (B and E, averaged): the same requests, the same server, one run, so what differs is the
// verification — decoding, the signature, the claim checks, the principal, the token's digest, the cache insert
// (and eviction, in C and D). The bound: the cache keeps at most 10,000 tokens (src/auth/external/issuers.ts,
// MAX_CACHED), so with `tokens` = 10,000 the RSS and heap after E should match those after A.
import { TEXT, TOOL } from './scenarios.mjs';
import { inspectorEnv, openInspector } from './lib/inspector.mjs';
import { closedLoad, CONNECTIONS } from './lib/load.mjs';
import { cpuMs, rssMiB, sleep, startServer, stopServer } from './lib/proc.mjs';

const BODY = JSON.stringify({ text: TEXT });
const SVC = `/svc/tools/${TOOL}`;

/** One call per token, in order, from CONNECTIONS workers; throws unless every call answered 200 with the text. */
async function pass(url, pid, tokens) {
  let next = 0;
  const cpu0 = cpuMs(pid);
  const res = await closedLoad(CONNECTIONS, {
    next: () => (next < tokens.length ? { url, headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[next++]}` }, body: BODY } : null),
    done: (_i, status, body) => status === 200 && body.includes(`"${TEXT}"`),
  }, { timeoutMs: 300_000 });
  const cpuUs = ((cpuMs(pid) - cpu0) * 1000) / res.total;
  if (res.total !== tokens.length || res.non2xx || res.errors || res.stopped) {
    throw new Error(`${res.total} of ${tokens.length} calls answered, ${res.non2xx} wrong, ${res.errors} errors${res.stopped ? `, stopped: ${res.stopped}` : ''}`);
  }
  return cpuUs;
}

/**
 * def: the fastsvc-external server; env: its environment (the IdPs' issuers and secret included); idps: startIdps()'s.
 * Resolves { tokens, idleRss, cachedRss, endRss, idleHeap, cachedHeap, endHeap (MiB), cachedUs, coldUs: { rs256Filling,
 * rs256, es256 } (µs of server CPU per call), passUs }.
 */
export async function measureExternalCache({ def, env, idps, tokens: n, idleMs = 1000, log = () => {} }) {
  const [rs, es, [warm]] = await Promise.all([idps.RS256.mintMany(n), idps.ES256.mintMany(n), idps.RS256.mintMany(1)]);
  log(`external cache: minted ${n} RS256 and ${n} ES256 JWTs`);
  const inspector = await inspectorEnv();
  const server = await startServer(def, { ...env, ...inspector.env });
  const url = `${server.url}${SVC}`;
  const heap = async () => {
    const insp = await openInspector(inspector.port);
    try {
      return await insp.heapAfterGcMiB();
    } finally {
      insp.close();
    }
  };
  // RSS first (VmRSS after a settle, as the other rows read it), then the heap still reachable after a full collection.
  const sample = async () => {
    await sleep(idleMs);
    if (server.died()) throw new Error(`server ${server.died()}`);
    return { rss: rssMiB(server.pid), heap: await heap() };
  };
  const out = { tokens: n, passUs: {} };
  try {
    const steps = [
      ['warm-up', Array(n).fill(warm), 'idle'],
      ['A', rs, 'cached'],
      ['B', rs],
      ['C', es],
      ['D', rs],
      ['E', rs, 'end'],
    ];
    for (const [name, list, at] of steps) {
      out.passUs[name] = await pass(url, server.pid, list);
      if (server.died()) throw new Error(`server ${server.died()}`);
      if (at) {
        const s = await sample();
        out[`${at}Rss`] = s.rss;
        out[`${at}Heap`] = s.heap;
      }
      log(`external cache: pass ${name}, server CPU ${out.passUs[name].toFixed(1)} µs/call${at ? `, RSS ${out[`${at}Rss`].toFixed(1)} MiB, heap ${out[`${at}Heap`].toFixed(1)} MiB` : ''}`);
    }
    const p = out.passUs;
    out.cachedUs = (p.B + p.E) / 2;
    out.coldUs = { rs256Filling: p.A - out.cachedUs, rs256: p.D - out.cachedUs, es256: p.C - out.cachedUs };
    return out;
  } finally {
    await stopServer(server);
  }
}
