// Whether a tools/call may run the way it was asked, given the tool's declared task support.
// Guarantees: the one check the MCP transports (both revisions, /mcp and /ws), POST /svc/tools
// and `svc explain` all ask — a plain call to a `task: required` tool is refused here and only
// here; `task: forbidden` ignores a task request (the tool runs as a plain call).

import type { TaskSupport } from '../core/types.js';

export type Augmentation = { ok: true; task: boolean } | { ok: false; reason: 'task_required' };

/** `augmented`: the call asked to run as a task (params.task, the tasks extension, Prefer: respond-async). */
export function decideAugmentation(support: TaskSupport, augmented: boolean): Augmentation {
  if (support === 'forbidden') return { ok: true, task: false };
  if (augmented) return { ok: true, task: true };
  return support === 'required' ? { ok: false, reason: 'task_required' } : { ok: true, task: false };
}
