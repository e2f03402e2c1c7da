// The official client (@modelcontextprotocol/client v2) and the transport of one connection attempt
// (connection.ts). Guarantees: the client declares elicitation and sampling, speaks 2026-07-28 where the
// upstream offers it (else 2025-11-25; the probe bounded by connect_timeout_ms), and never answers a 2026
// upstream's questions by itself (question-rounds.ts asks them of the call that got them); the upstream's
// requests, log messages, list changes and resource updates go to `on`. A stdio upstream is a child in its
// own process group (wire/stdio-transport.ts); a Streamable HTTP upstream gets the manifest's headers, the
// connection's credential on every request no call's own credential replaces (credentials.ts), answers cut
// past max_bytes with the pending request told at once (wire/capped-fetch.ts), and its answers' bodies watched
// for an upstream that dies mid-answer (wire/body-watch.ts); either way a message may be max_bytes plus room
// for the JSON-RPC envelope around it. The client declares roots too (no listChanged: a caller's changes are
// its own, and fastsvc's session is every caller's), as it relays roots/list to the caller whose call asked.
// A Streamable HTTP transport has TCP connections of its own (an undici Agent per transport, so per connect
// attempt), never shared with another upstream or another attempt. endClient() ends a client as a client
// should: a Streamable HTTP session is DELETEd first (bounded), then the client and its transport are closed
// (a stdio child's process group killed) and the transport's TCP connections closed with them.

import { Client, StreamableHTTPClientTransport, type FetchLike, type Transport } from '@modelcontextprotocol/client';
import type { Agent } from 'undici';
import type { OutboundCredential } from '../outbound/index.js';
import { packageVersion } from '../util/package-root.js';
import { credentialedFetch } from './credentials.js';
import type { UpstreamSpec } from './spec.js';
import { watchBodies } from './wire/body-watch.js';
import { cappedFetch } from './wire/capped-fetch.js';
import { GroupStdioTransport, TOO_LARGE_RPC } from './wire/stdio-transport.js';

/** Room for the JSON-RPC envelope around an answer of max_bytes. */
const ENVELOPE = 64 * 1024;

/** Each Streamable HTTP transport's own connections. */
const agents = new WeakMap<Transport, Agent>();
/** undici, loaded by the first HTTP upstream's connect (loadHttp()): a gateway of stdio upstreams never reads it. */
let undici: typeof import('undici') | undefined;

/** Loads what a Streamable HTTP transport needs; call before upstreamTransport() for a `url` upstream. */
export async function loadHttp(): Promise<void> {
  if (undici) return;
  const m = await import('undici');
  // A CommonJS package: bundled, its exports may come as the default export only.
  undici = typeof m.Agent === 'function' ? m : (m as unknown as { default: typeof m }).default;
}

/** Where the client's messages from the upstream go. */
export interface ClientEvents {
  /** elicitation/create, sampling/createMessage, roots/list: the answer, or a rejection sent back as an error. */
  ask(method: string, params: Record<string, unknown>): Promise<unknown>;
  log(params: { level: string; data: unknown; logger?: string }): void;
  listChanged(): void;
  resourceUpdated(uri: string): void;
}

export function upstreamClient(connectTimeoutMs: number, on: ClientEvents): Client {
  const client = new Client({ name: 'fastsvc', version: packageVersion() }, {
    capabilities: { elicitation: {}, sampling: {}, roots: {} },
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: connectTimeoutMs } },
    // A 2026 upstream's questions are asked by the call that got them (question-rounds.ts), never by the SDK for no one in particular.
    inputRequired: { autoFulfill: false },
  });
  client.setRequestHandler('elicitation/create', (req) => on.ask('elicitation/create', req.params as Record<string, unknown>) as never);
  client.setRequestHandler('sampling/createMessage', (req) => on.ask('sampling/createMessage', req.params as Record<string, unknown>) as never);
  client.setRequestHandler('roots/list', (req) => on.ask('roots/list', (req.params ?? {}) as Record<string, unknown>) as never);
  client.setNotificationHandler('notifications/message', (n) => on.log(n.params));
  for (const kind of ['tools', 'resources', 'prompts'] as const) {
    client.setNotificationHandler(`notifications/${kind}/list_changed`, () => on.listChanged());
  }
  client.setNotificationHandler('notifications/resources/updated', (n) => on.resourceUpdated(n.params.uri));
  return client;
}

/** onGone: an answer's body broke below HTTP (wire/body-watch.ts), as when the upstream dies with a call in flight. */
export function upstreamTransport(s: UpstreamSpec, maxBytes: number, credential: OutboundCredential | undefined, onGone: () => void): Transport {
  const maxLine = maxBytes + ENVELOPE;
  if (s.command) return new GroupStdioTransport({ program: s.command[0], args: s.command.slice(1), cwd: s.cwd, env: s.env ?? {}, maxLine });
  if (!undici) throw new Error('loadHttp() first');
  const agent = new undici.Agent();
  const fetchVia = undici.fetch;
  const own: FetchLike = (url, init) => fetchVia(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;
  const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(s.url!), {
    requestInit: { headers: { ...s.headers } },
    fetch: credentialedFetch(watchBodies(cappedFetch(maxLine, (id) => transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_RPC, message: `the answer is larger than ${maxLine} bytes` } }), own), onGone), credential),
  });
  agents.set(transport, agent);
  return transport;
}

/**
 * Ends `client`: its Streamable HTTP session, if it has one, is ended upstream with DELETE first — waiting at most
 * `timeoutMs` for the answer (an upstream that refuses, 405 included, or does not answer is left to forget it) — then
 * the client and its transport are closed, and the transport's TCP connections with them. Never rejects.
 */
export async function endClient(client: Client, timeoutMs: number): Promise<void> {
  const t = client.transport;
  if (t instanceof StreamableHTTPClientTransport && t.sessionId !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([t.terminateSession().catch(() => undefined), late]);
    clearTimeout(timer);
  }
  await client.close().catch(() => undefined);
  if (t) await agents.get(t)?.destroy().catch(() => undefined);
}
