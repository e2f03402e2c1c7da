// A provider shared by processes that hear of each other's revocations through a relay rather
// than through the store (the workers of `server.workers` on one SQLite file: SQLite has no
// LISTEN/NOTIFY). Guarantees: every destroy or revoke that removes a grant or one of its tokens
// sends the grant id once the store has it removed — as the PostgreSQL provider NOTIFYs it — and
// resolves only when every process has handled it (a revocation answered is refused everywhere), and
// watch() reports every grant id any process sent (this one's included) to revoked(), so every
// process drops its cached tokens of that grant; the relay is the process's link to its primary,
// which lives as long as the process does, so listening() never goes down; everything else is
// the inner provider's.

import type { Adapter, AdapterPayload, OAuthKeys, OAuthProvider, StoreEvents } from '../../../core/oauth-provider.js';

/** How a revoked grant id reaches every process sharing the store (the sender included); send() resolves once all have it. */
export interface RevocationRelay {
  send(grantId: string): Promise<void>;
  onRevoked(fn: (grantId: string) => void): void;
}

export class RelayedRevocations implements OAuthProvider {
  constructor(readonly inner: OAuthProvider, readonly relay: RevocationRelay) {}

  adapter(model: string): Adapter {
    const a = this.inner.adapter(model);
    const relay = this.relay;
    return {
      upsert: (id: string, payload: AdapterPayload, expiresIn: number) => a.upsert(id, payload, expiresIn),
      find: (id: string) => a.find(id),
      findByUid: (uid: string) => a.findByUid(uid),
      findByUserCode: (code: string) => a.findByUserCode(code),
      consume: (id: string) => a.consume(id),
      async destroy(id: string) {
        // The grant an entry belongs to is in its payload: read it before the entry goes.
        const grantId = model === 'Grant' ? id : (await a.find(id))?.grantId;
        await a.destroy(id);
        if (grantId) await relay.send(grantId);
      },
      async revokeByGrantId(grantId: string) {
        await a.revokeByGrantId(grantId);
        await relay.send(grantId);
      },
    };
  }

  loadKeys(): Promise<OAuthKeys | undefined> {
    return this.inner.loadKeys();
  }

  saveKeys(keys: OAuthKeys): Promise<void> {
    return this.inner.saveKeys(keys);
  }

  async addKeysIfAbsent(keys: OAuthKeys): Promise<OAuthKeys> {
    if (this.inner.addKeysIfAbsent) return this.inner.addKeysIfAbsent(keys);
    await this.inner.saveKeys(keys);
    return keys;
  }

  sweep(): number | Promise<number> {
    return this.inner.sweep?.() ?? 0;
  }

  watch(events: StoreEvents): void {
    this.relay.onRevoked((grantId) => events.revoked(grantId));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
