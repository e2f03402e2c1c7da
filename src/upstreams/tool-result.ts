// The shape check of a tools/call answer that direct-calls.ts brought back (the client's own schema pass
// is skipped there). Guarantees: what it returns is a ToolResult fastsvc can serve — `content` an array of
// objects each with a string `type` (absent `content` is an empty one, as the client reads a 2025 answer),
// `structuredContent` a JSON object when present, `isError` a boolean when present; anything else is
// refused with SdkError InvalidResult. The content blocks themselves are passed on as they came: the
// client in front of fastsvc checks what it receives.

import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { ToolResult } from '../core/types.js';

export function toolResult(r: Record<string, unknown>): ToolResult {
  const { content, structuredContent: sc, isError } = r;
  if (content !== undefined && !(Array.isArray(content) && content.every((b) => b !== null && typeof b === 'object' && typeof (b as { type?: unknown }).type === 'string'))) {
    throw invalid('content must be an array of content blocks');
  }
  if (sc !== undefined && (sc === null || typeof sc !== 'object' || Array.isArray(sc))) throw invalid('structuredContent must be a JSON object');
  if (isError !== undefined && typeof isError !== 'boolean') throw invalid('isError must be a boolean');
  return (content === undefined ? { ...r, content: [] } : r) as unknown as ToolResult;
}

function invalid(what: string): SdkError {
  return new SdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${what}`);
}
