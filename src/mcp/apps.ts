// The MCP Apps extension (io.modelcontextprotocol/ui, SEP-1865) as both eras negotiate it.
// Guarantees: a client declares it in its capabilities' `extensions` (2025: initialize;
// 2026-07-28: each request's _meta clientCapabilities), with `mimeTypes` — when given — naming
// text/html;profile=mcp-app; only such a client gets _meta.ui on tools, view resources and the
// contents of a view it reads, and sees app-only tools (the Runtime's lists take `apps`).

import { findResource, type Catalog } from '../core/catalog.js';
import type { ResourceContents } from '../core/types.js';
import { VIEW_MIME_TYPE } from '../runtime/view-shell.js';

/** The extension's identifier (advertised in constants.ts SERVER_CAPABILITIES). */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** Whether the client capabilities declare MCP Apps for this server's view type. */
export function declaresApps(clientCapabilities: Record<string, unknown>): boolean {
  const ext = clientCapabilities.extensions as Record<string, unknown> | undefined;
  const ui = ext !== null && typeof ext === 'object' ? ext[UI_EXTENSION] as { mimeTypes?: unknown } | undefined : undefined;
  if (ui === null || typeof ui !== 'object' || Array.isArray(ui)) return false;
  return !Array.isArray(ui.mimeTypes) || ui.mimeTypes.includes(VIEW_MIME_TYPE);
}

/** A read's contents, each with the view's _meta.ui when `uri` is a view (what a client that declares the extension is sent). */
export function withViewMeta(cat: Catalog, uri: string, contents: ResourceContents[]): ResourceContents[] {
  const ui = findResource(cat, uri)?.entry.def.ui;
  return ui ? contents.map((c) => ({ ...c, _meta: { ui } })) : contents;
}
