// What a query asks to do — read, write or delete — and what a definition does, so that among tools that
// share the query's nouns ("comment on issue 17": list, get, create, update and delete an issue comment)
// the one whose kind of act matches ranks first. Guarantees: pure tables and functions; a query's act is
// read from its first meaningful word (a question word or a reading verb: read; a removal verb: delete; any
// other verb of a closed list: write; "give me", "send me": read) and is `undefined` when that word is none of these (a noun phrase,
// an unknown word), so an unknown act never moves a score; a definition's act comes from its MCP
// annotations (readOnlyHint: read, destructiveHint: delete, otherwise write) and is `undefined` for a
// definition without annotations (a manifest tool that says nothing of itself, a prompt, a resource).

export type Act = 'read' | 'write' | 'delete';

/** Words said before the verb that carry no act of their own ("please", "can you", "I want to", "now"). */
const LEAD = new Set(['please', 'pls', 'can', 'could', 'would', 'will', 'you', 'u', 'i', 'we', 'want', 'wanna', 'need', 'to', 'let', 'lets', 'let\'s', 'us', 'me', 'just', 'now', 'quickly', 'help', 'go', 'ahead', 'and', 'then', 'also', 'hey', 'ok', 'd', 'like', 'try', 'should', 'must', 'shall', 'gotta', 'have']);

/** Question words and verbs of looking (a user asking to see, count or check something). */
const READ = new Set(['what', 'whats', 'what\'s', 'which', 'who', 'whos', 'who\'s', 'whom', 'whose', 'how', 'when', 'where', 'why', 'is', 'are', 'was', 'were', 'does', 'do', 'did', 'has', 'have', 'any',
  'list', 'show', 'get', 'see', 'view', 'find', 'search', 'look', 'lookup', 'check', 'read', 'fetch', 'retrieve', 'display', 'count', 'tell', 'print', 'download', 'browse', 'inspect', 'query', 'lookup', 'export', 'compare', 'diff', 'audit', 'monitor', 'track', 'print', 'dump']);

/** Verbs of removing. */
const DELETE = new Set(['delete', 'remove', 'drop', 'destroy', 'erase', 'purge', 'nuke', 'wipe', 'kick', 'revoke', 'uninstall', 'clear', 'rm', 'del', 'discard',
  'unstar', 'unfollow', 'unwatch', 'unblock', 'unlock', 'unassign', 'unsubscribe', 'unpin', 'untag', 'unlabel']);

/** Verbs of making or changing (a closed list: an unknown first word stays unknown). */
const WRITE = new Set(['create', 'add', 'make', 'new', 'open', 'leave', 'post', 'publish', 'write', 'start', 'trigger', 'run', 'rerun', 'retry', 'set', 'update', 'edit', 'change',
  'rename', 'fix', 'modify', 'close', 'reopen', 'merge', 'approve', 'reject', 'dismiss', 'star', 'follow', 'fork', 'lock', 'assign', 'invite',
  'accept', 'decline', 'enable', 'turn', 'switch', 'block', 'mute', 'subscribe', 'watch', 'archive', 'transfer', 'move',
  'protect', 'tag', 'label', 'comment', 'reply', 'react', 'submit', 'request', 'ask', 'give', 'grant', 'allow', 'upload', 'push', 'commit', 'sync', 'mark', 'pin', 'convert',
  'replace', 'restore', 'undelete', 'rotate', 'register', 'install', 'configure', 'put', 'send', 'generate', 'render', 'redeliver', 'ping', 'schedule', 'bump', 'promote', 'demote',
  'limit', 'restrict', 'require', 'store', 'save', 'attach', 'link', 'kickoff', 'deploy', 'release', 'resolve', 'hide', 'force', 'apply', 'cap', 'customise', 'customize', 'draft', 'report']);

/** Verbs whose `me` is whom something is given: "give me", "send me" ask to see it. */
const TO_ME = new Set(['give', 'send', 'bring', 'get', 'show', 'tell', 'find']);

/** The act a query asks for, from its words (lower-case, as queryWords gives them), or undefined. */
export function queryAct(words: readonly string[]): Act | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (LEAD.has(w)) continue;
    // "how do I …", "how to …": the act is the verb's that follows; "how many" asks to count.
    if (w === 'how' && /^(do|can|to|would|should|could|does)$/.test(words[i + 1] ?? '')) {
      i++;
      continue;
    }
    if (TO_ME.has(w) && (words[i + 1] === 'me' || words[i + 1] === 'us')) return 'read';
    if (READ.has(w)) return 'read';
    if (DELETE.has(w)) return 'delete';
    if (WRITE.has(w)) return 'write';
    return undefined;
  }
  return undefined;
}

/** A tool's act from its annotations, or undefined when it has none. */
export function definitionAct(annotations: Readonly<Record<string, unknown>> | undefined): Act | undefined {
  if (!annotations) return undefined;
  if (annotations.readOnlyHint === true) return 'read';
  if (annotations.destructiveHint === true) return 'delete';
  return 'write';
}
