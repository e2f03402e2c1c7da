// What an HTTP answer becomes. Guarantees: for a tool, a JSON body (application/json or
// +json) is a JsonReply (structured content and its text, whatever output_mode says); a text
// body (text/*, XML, YAML, …, or no Content-Type) is text; an image or audio body an image or
// audio block; any other body an embedded resource holding the bytes (base64) — not a
// resource_link, since the upstream URL is not one the caller could fetch (it lacks the
// backend's credential, and its origin may be private); all within max_bytes, already read.
// A non-2xx answer's message is the API's own: the JSON body's message, error, detail, title
// or error_description, else the start of the body, whitespace collapsed, ≤ 300 characters.

import type { ToolResult } from '../../core/types.js';
import { isTextMime } from './file-content.js';
import { JsonReply } from './contract.js';

const MESSAGE_CHARS = 300;
const MESSAGE_KEYS = ['message', 'error', 'detail', 'title', 'error_description'];

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function isJsonMime(contentType: string | null): boolean {
  const base = mediaType(contentType);
  return base === 'application/json' || base.endsWith('+json');
}

/** A tool's result from a 2xx answer's body; `url` names an embedded resource (without its query, which may carry secrets). */
export function toolReply(contentType: string | null, buf: Buffer, url: URL): string | JsonReply | ToolResult {
  const mimeType = mediaType(contentType);
  const text = () => new TextDecoder().decode(buf);
  if (isJsonMime(contentType)) {
    const raw = text();
    try {
      return new JsonReply(JSON.parse(raw));
    } catch {
      return raw; // mislabelled: the text as it came
    }
  }
  if (mimeType === '' || isTextMime(mimeType) || buf.length === 0) return text();
  const data = buf.toString('base64');
  if (mimeType.startsWith('image/')) return { content: [{ type: 'image', data, mimeType }] };
  if (mimeType.startsWith('audio/')) return { content: [{ type: 'audio', data, mimeType }] };
  return { content: [{ type: 'resource', resource: { uri: url.origin + url.pathname, mimeType, blob: data } }] };
}

/** The API's own message in a failed answer's body. */
export function apiMessage(contentType: string | null, buf: Buffer): string {
  const text = new TextDecoder().decode(buf);
  let found: string | undefined;
  if (isJsonMime(contentType) || /^\s*\{/.test(text)) {
    try {
      const body = JSON.parse(text) as Record<string, unknown>;
      for (const k of MESSAGE_KEYS) {
        const v = body?.[k];
        const s = typeof v === 'string' ? v : typeof (v as { message?: unknown })?.message === 'string' ? (v as { message: string }).message : undefined;
        if (s?.trim()) {
          found = s;
          break;
        }
      }
    } catch {
      // not JSON after all: the text itself
    }
  }
  const msg = (found ?? text).replace(/\s+/g, ' ').trim();
  return msg.length <= MESSAGE_CHARS ? msg : msg.slice(0, MESSAGE_CHARS) + '…';
}
