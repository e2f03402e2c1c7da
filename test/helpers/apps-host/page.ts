// The test host's page script (runs in Chromium; bundled by ../apps-host.ts with esbuild): a minimal
// MCP Apps host built on the real parts — @modelcontextprotocol/client 2.x connects to fastsvc's
// /mcp with a bearer token, declaring the io.modelcontextprotocol/ui extension (or not), and
// @modelcontextprotocol/ext-apps's AppBridge talks to the view over postMessage. open() lists the
// tools, reads the tool's view (its ui:// resource), renders it in an iframe sandboxed to
// allow-scripts only, with the CSP built from the resource's _meta.ui.csp as the extension says a
// host does, then calls the tool and hands the view the input and the result; the view's own
// tools/call requests are forwarded to fastsvc by the bridge through the same client (same token).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE, buildAllowAttribute, getToolUiResourceUri, isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge';

const UI_EXTENSION = 'io.modelcontextprotocol/ui';

export interface OpenRequest {
  mcpUrl: string;
  token: string;
  tool: string;
  args: Record<string, unknown>;
  /** 'modern' lets the client negotiate 2026-07-28 (versionNegotiation auto); 'legacy' keeps its default 2025-11-25 handshake. */
  era: Era;
}

export type Era = 'modern' | 'legacy';

export interface Opened {
  protocolVersion: string | undefined;
  serverExtensions: Record<string, unknown> | undefined;
  tools: { name: string; _meta?: Record<string, unknown> }[];
  /** The tools this host would offer its model: those ext-apps's isToolVisibilityAppOnly() does not keep for views. */
  modelTools: string[];
  resources: { uri: string; mimeType?: string }[];
  resourceUri: string;
  mimeType: string | undefined;
  resourceMeta: Record<string, unknown> | undefined;
  csp: string;
  allow: string;
}

interface UiCsp { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] }

/** The iframe's policy from _meta.ui.csp: nothing beyond inline code and the declared origins. */
function cspOf(csp: UiCsp = {}): string {
  const list = (v: string[] | undefined) => (v ?? []).join(' ');
  const res = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`,
    `style-src 'unsafe-inline' ${res}`,
    `img-src data: ${res}`,
    `font-src data: ${res}`,
    `media-src data: ${res}`,
    `connect-src ${list(csp.connectDomains) || "'none'"}`,
    `frame-src ${list(csp.frameDomains) || "'none'"}`,
    `base-uri ${list(csp.baseUriDomains) || "'none'"}`,
    "object-src 'none'",
  ].map((d) => d.trim()).join('; ');
}

/** The view's HTML with the policy as the first thing in its head. */
function withCsp(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return meta + html;
}

/** A client for fastsvc in that era, declaring the extension when `ui` is true. */
async function connect(mcpUrl: string, token: string, ui: boolean, era: Era): Promise<Client> {
  const client = new Client({ name: 'fastsvc-apps-test-host', version: '1.0.0' }, {
    capabilities: ui ? { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {},
    ...(era === 'modern' && { versionNegotiation: { mode: 'auto' as const } }),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: { token: async () => token } }));
  return client;
}

async function open(req: OpenRequest): Promise<Opened> {
  const client = await connect(req.mcpUrl, req.token, true, req.era);
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === req.tool);
  if (!tool) throw new Error(`tool ${req.tool} not listed: ${tools.map((t) => t.name).join(', ')}`);
  const resourceUri = getToolUiResourceUri(tool);
  if (!resourceUri) throw new Error(`tool ${req.tool} names no view: ${JSON.stringify(tool._meta)}`);
  const { resources } = await client.listResources();
  const read = await client.readResource({ uri: resourceUri });
  const content = read.contents[0];
  if (!content || !('text' in content)) throw new Error(`${resourceUri} has no text content`);
  const resourceMeta = (content._meta as { ui?: Record<string, unknown> } | undefined)?.ui;
  const csp = cspOf(resourceMeta?.csp as UiCsp | undefined);
  const allow = buildAllowAttribute(resourceMeta?.permissions as Parameters<typeof buildAllowAttribute>[0]);

  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.setAttribute('sandbox', 'allow-scripts');
  if (allow) iframe.setAttribute('allow', allow);
  iframe.srcdoc = withCsp(content.text, csp);
  document.body.append(iframe);

  const bridge = new AppBridge(client, { name: 'fastsvc-apps-test-host', version: '1.0.0' }, { serverTools: {}, serverResources: {}, logging: {} });
  const initialized = new Promise<void>((resolve) => { bridge.oninitialized = () => resolve(); });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  await initialized;
  const result = await client.callTool({ name: req.tool, arguments: req.args });
  await bridge.sendToolInput({ arguments: req.args });
  await bridge.sendToolResult(result as Parameters<typeof bridge.sendToolResult>[0]);
  return {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    serverExtensions: client.getServerCapabilities()?.extensions as Record<string, unknown> | undefined,
    tools: tools.map((t) => ({ name: t.name, _meta: t._meta })),
    modelTools: tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name),
    resources: resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType })),
    resourceUri,
    mimeType: content.mimeType,
    resourceMeta,
    csp,
    allow,
  };
}

/** What a client without the extension is offered: tool names and their _meta. */
async function listPlain(mcpUrl: string, token: string, era: Era): Promise<{ name: string; _meta?: Record<string, unknown> }[]> {
  const client = await connect(mcpUrl, token, false, era);
  try {
    return (await client.listTools()).tools.map((t) => ({ name: t.name, _meta: t._meta }));
  } finally {
    await client.close();
  }
}

Object.assign(window, { appsHost: { open, listPlain } });
