// A CallContext for unit tests: a principal, a fresh AbortController (exposed as
// `controller` so a test can abort), a silent pino logger, transport 'code' and a
// channel whose methods do nothing.

import { pino } from 'pino';
import type { CallChannel, CallContext, Principal } from '../../src/core/types.js';

export interface TestContext extends CallContext {
  readonly controller: AbortController;
}

const noopChannel: CallChannel = {
  progress: async () => undefined,
  log: async () => undefined,
  request: async () => undefined,
  supports: () => false,
};

export function makeContext(overrides: Partial<CallContext> & { scopes?: string[] } = {}): TestContext {
  const { scopes = [], ...rest } = overrides;
  const controller = new AbortController();
  const principal: Principal = { sub: 'test', scopes: new Set(scopes), kind: 'static' };
  return {
    principal,
    signal: controller.signal,
    log: pino({ level: 'silent' }),
    transport: 'code',
    channel: noopChannel,
    ...rest,
    controller,
  };
}
