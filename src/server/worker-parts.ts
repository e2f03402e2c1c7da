// What `server.workers` needs beyond one process, in one module: the primary (workers.ts) and a worker's end
// (worker-link.ts) with the shared SQLite parts a worker opens. The command loads it with one dynamic import
// whichever side it is on, so one process never loads it and the bundle splits start-up once for it, not per part.
export { runPrimary } from './workers.js';
export { WorkerLink } from './worker-link.js';
export { SQLiteOAuthProvider } from '../auth/oauth/providers/sqlite-provider.js';
export { RelayedRevocations } from '../auth/oauth/providers/relayed-revocations.js';
export { SqliteSessionStore } from '../sessions/sqlite-store.js';
