// What a server with upstreams needs beyond one without: the connections, the gateway catalog and
// the pin lock's reader and watcher. Guarantees: app.ts imports this module only when the config
// lists upstreams, so a server without them never loads the MCP client, its schemas or the watcher.

export { UpstreamSet } from '../upstreams/upstream-set.js';
export { resolveUpstream } from '../upstreams/spec.js';
export { lockPathFor, readLockFile } from '../upstreams/pin/lock-file.js';
export { GatewayCatalog } from './gateway.js';
export { watchLock } from './pin-lock-watch.js';
