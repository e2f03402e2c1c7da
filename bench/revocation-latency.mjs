// Revocation propagation across replicas (issue 16), for bench/run.mjs: on a bench/peers/replicas-proxy.mjs server
// with two replicas A and B, each sample gets a fresh OAuth access token through the proxy (the real flow), has B
// accept it once (so B holds it in its token cache), then POSTs /revoke to A and polls B with the token until B
// refuses it (401). A sample is the time from sending the revocation to B's first refusal, in ms; every wait is bounded.
import { TEXT, TOOL } from './scenarios.mjs';
import { FORM_HEADERS, OAuthFlow } from './lib/oauth.mjs';
import { percentile } from './reload-latency.mjs';

const TIMEOUT_MS = 10_000;

/** One POST /svc call on `base` with `token`; resolves the status. */
async function call(base, token) {
  const res = await fetch(`${base}/svc/tools/${TOOL}`, {
    method: 'POST', body: JSON.stringify({ text: TEXT }), signal: AbortSignal.timeout(TIMEOUT_MS),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  return res.status;
}

/** `revocations` samples against the proxy at `url`; returns { p50, p99, samples } (ms). */
export async function measureRevocationLatency({ url, revocations }) {
  const replicas = await (await fetch(`${url}/.bench/replicas`, { signal: AbortSignal.timeout(TIMEOUT_MS) })).json();
  if (replicas.length < 2) throw new Error(`needs two replicas, the proxy has ${replicas.length}`);
  const [a, b] = replicas;
  const flow = await OAuthFlow.open(url);
  if (!flow.as.revocation_endpoint) throw new Error('no revocation_endpoint in the metadata');
  const revokeOnA = new URL(flow.as.revocation_endpoint.replace(url, a)).href;
  const resource = `${url}/svc`;
  const samples = [];
  for (let i = 0; i < revocations; i++) {
    const token = await flow.accessToken(resource);
    const accepted = await call(b, token);
    if (accepted !== 200) throw new Error(`B answered ${accepted} to a fresh token`);
    const t0 = performance.now();
    const revoked = await fetch(revokeOnA, {
      method: 'POST', headers: FORM_HEADERS, signal: AbortSignal.timeout(TIMEOUT_MS),
      body: new URLSearchParams({ token, token_type_hint: 'access_token', client_id: flow.client.client_id }).toString(),
    });
    await revoked.arrayBuffer();
    if (revoked.status !== 200) throw new Error(`POST /revoke on A answered ${revoked.status}`);
    for (;;) {
      const status = await call(b, token);
      if (status === 401) break;
      if (status !== 200) throw new Error(`B answered ${status} while the revocation propagated`);
      if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`B still accepted a revoked token after ${TIMEOUT_MS} ms`);
    }
    samples.push(performance.now() - t0);
  }
  const sorted = [...samples].sort((x, y) => x - y);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples };
}
