// External tokens cached (issue 30): what 10,000 distinct valid external JWTs cost a server's memory, whether the
// cache of verified tokens stays bounded, and what verifying a token not yet cached costs, RS256 and ES256.
//
// On a fresh fastsvc-external server of its own (--inspect on a loopback port: one inspector session, for full
// collections and the retained heap), with `tokens` JWTs per IdP minted beforehand at the corporate IdPs' token
// endpoints (lib/idp.mjs; minting costs the IdP about a millisecond a token, far more than verifying one, so it stays
// off the clock). A pass sends POST /svc/tools/bench.echo once per token of a list, from 10 keep-alive connections
// (closed loop), every answer checked, then has the server collect its garbage (two full collections) and reads its
// retained heap; the server's CPU time over the pass (calls and collections) is read from /proc.
//   warm-up  one token, `tokens` times (cached after its first call)        → idle RSS and heap
//   fill     each RS256 token once: verified and cached (the cache fills)    → (the verifier's first use)
//   RS hit   the same again: all cache hits                                  → RSS and heap with `tokens` cached
//   then `cycles` times: ES cold (each verified, evicting an RS256 one), ES hit, RS cold (each evicting an ES256 one), RS hit
//                                                                             → RSS and heap at the end
// A cold verification's cost is a cold pass's server CPU per call minus that of the hit pass right after it (the same
// tokens, requests and collections; only the verification differs — decoding, signature, claim checks, principal,
// the token's digest, the cache insert and its eviction): the median over the cycles. The bound: the cache keeps at
// most 10,000 tokens (src/auth/external/issuers.ts, MAX_CACHED), so with `tokens` = 10,000 the heap at the end, after
// (2 × cycles + 1) × `tokens` distinct tokens, should be the heap with `tokens` cached.
import { TEXT, TOOL } from './scenarios.mjs';
import { inspectorEnv, openInspector } from './lib/inspector.mjs';
import { closedLoad, CONNECTIONS } from './lib/load.mjs';
import { cpuMs, rssMiB, sleep, startServer, stopServer } from './lib/proc.mjs';
import { median } from './lib/report.mjs';

const BODY = JSON.stringify({ text: TEXT });
const SVC = `/svc/tools/${TOOL}`;

/** One call per token, in order, from CONNECTIONS workers; throws unless every call answered 200 with the text. */
async function pass(url, tokens) {
  let next = 0;
  const res = await closedLoad(CONNECTIONS, {
    next: () => (next < tokens.length ? { url, headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[next++]}` }, body: BODY } : null),
    done: (_i, status, body) => status === 200 && body.includes(`"${TEXT}"`),
  }, { timeoutMs: 300_000 });
  if (res.total !== tokens.length || res.non2xx || res.errors || res.stopped) {
    throw new Error(`${res.total} of ${tokens.length} calls answered, ${res.non2xx} wrong, ${res.errors} errors${res.stopped ? `, stopped: ${res.stopped}` : ''}`);
  }
}

/**
 * def: the fastsvc-external server; env: its environment (the IdPs' issuers and secret included); idps: startIdps()'s.
 * Resolves { tokens, cycles, idleRss, cachedRss, endRss, idleHeap, cachedHeap, endHeap (MiB), cachedUs, coldUs: { fill,
 * rs256, es256 } (µs of server CPU per call; rs256/es256: medians over the cycles), passes: [{ name, us, heap }] }.
 */
export async function measureExternalCache({ def, env, idps, tokens: n, cycles = 3, idleMs = 1000, log = () => {} }) {
  const [rs, es, [warm]] = await Promise.all([idps.RS256.mintMany(n), idps.ES256.mintMany(n), idps.RS256.mintMany(1)]);
  log(`external cache: minted ${n} RS256 and ${n} ES256 JWTs`);
  const inspector = await inspectorEnv();
  const server = await startServer(def, { ...env, ...inspector.env });
  const url = `${server.url}${SVC}`;
  const out = { tokens: n, cycles, passes: [] };
  let insp;
  try {
    insp = await openInspector(inspector.port);
    const run = async (name, list) => {
      const cpu0 = cpuMs(server.pid);
      await pass(url, list);
      const heap = await insp.heapAfterGcMiB();
      const us = ((cpuMs(server.pid) - cpu0) * 1000) / list.length;
      if (server.died()) throw new Error(`server ${server.died()}`);
      out.passes.push({ name, us, heap });
      log(`external cache: ${name}: server CPU ${us.toFixed(1)} µs/call, heap after GC ${heap.toFixed(1)} MiB`);
      return { us, heap };
    };
    // VmRSS after a settle, as the other rows read it (the pass's garbage already collected).
    const rss = async () => {
      await sleep(idleMs);
      if (server.died()) throw new Error(`server ${server.died()}`);
      return rssMiB(server.pid);
    };
    out.idleHeap = (await run('warm-up', Array(n).fill(warm))).heap;
    out.idleRss = await rss();
    const fill = await run('RS256 fill', rs);
    const hit0 = await run('RS256 hit', rs);
    out.cachedHeap = hit0.heap;
    out.cachedRss = await rss();
    const cold = { rs256: [], es256: [] };
    const hits = [hit0.us];
    for (let c = 1; c <= cycles; c++) {
      for (const [alg, list] of [['es256', es], ['rs256', rs]]) {
        const miss = await run(`${alg.toUpperCase()} cold ${c}`, list);
        const hit = await run(`${alg.toUpperCase()} hit ${c}`, list);
        cold[alg].push(miss.us - hit.us);
        hits.push(hit.us);
        out.endHeap = hit.heap;
      }
    }
    out.endRss = await rss();
    out.cachedUs = median(hits);
    out.coldUs = { fill: fill.us - hit0.us, rs256: median(cold.rs256), es256: median(cold.es256) };
    return out;
  } finally {
    insp?.close();
    await stopServer(server);
  }
}
