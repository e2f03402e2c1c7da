// The official client (@modelcontextprotocol/client v2) and the transport of one connection attempt
// (connection.ts). Guarantees: the client declares elicitation and sampling, speaks 2026-07-28 where the
// upstream offers it (else 2025-11-25; the probe bounded by connect_timeout_ms), and never answers a 2026
// upstream's questions by itself (question-rounds.ts asks them of the call that got them); the upstream's
// requests, log messages, list changes and resource updates go to `on`. A stdio upstream is a child in its
// own process group (wire/stdio-transport.ts); a Streamable HTTP upstream gets the manifest's headers, the
// connection's credential on every request no call's own credential replaces (credentials.ts), answers cut
// past max_bytes with the pending request told at once (wire/capped-fetch.ts), and its answers' bodies watched
// for an upstream that dies mid-answer (wire/body-watch.ts); either way a message may be max_bytes plus room
// for the JSON-RPC envelope around it.

import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { OutboundCredential } from '../outbound/index.js';
import { packageVersion } from '../util/package-root.js';
import { credentialedFetch } from './credentials.js';
import type { UpstreamSpec } from './spec.js';
import { watchBodies } from './wire/body-watch.js';
import { cappedFetch } from './wire/capped-fetch.js';
import { GroupStdioTransport, TOO_LARGE_RPC } from './wire/stdio-transport.js';

/** Room for the JSON-RPC envelope around an answer of max_bytes. */
const ENVELOPE = 64 * 1024;

/** Where the client's messages from the upstream go. */
export interface ClientEvents {
  /** elicitation/create, sampling/createMessage: the answer, or a rejection sent back as an error. */
  ask(method: string, params: Record<string, unknown>): Promise<unknown>;
  log(params: { level: string; data: unknown; logger?: string }): void;
  listChanged(): void;
  resourceUpdated(uri: string): void;
}

export function upstreamClient(connectTimeoutMs: number, on: ClientEvents): Client {
  const client = new Client({ name: 'fastsvc', version: packageVersion() }, {
    capabilities: { elicitation: {}, sampling: {} },
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: connectTimeoutMs } },
    // A 2026 upstream's questions are asked by the call that got them (question-rounds.ts), never by the SDK for no one in particular.
    inputRequired: { autoFulfill: false },
  });
  client.setRequestHandler('elicitation/create', (req) => on.ask('elicitation/create', req.params as Record<string, unknown>) as never);
  client.setRequestHandler('sampling/createMessage', (req) => on.ask('sampling/createMessage', req.params as Record<string, unknown>) as never);
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
  const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(s.url!), {
    requestInit: { headers: { ...s.headers } },
    fetch: credentialedFetch(watchBodies(cappedFetch(maxLine, (id) => transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_RPC, message: `the answer is larger than ${maxLine} bytes` } })), onGone), credential),
  });
  return transport;
}
