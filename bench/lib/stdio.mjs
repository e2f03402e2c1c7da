// MCP over a child's stdio (issue 31's direct row): newline-delimited JSON-RPC on the child's stdin and stdout.
// Guarantees: StdioConn has WsConn's interface (send(method, params, cb), call(), `closed`), so lib/load.mjs's
// wsLoad drives it unchanged — `inFlight` calls outstanding on the one pipe, callbacks keyed by id, no promise on the
// hot path; a line that is not JSON, a notification or an answer to no pending call is ignored (the upstream's own
// business); when the pipe closes, every pending call is answered { transport: true } at once.
import { StringDecoder } from 'node:string_decoder';
import { callOn, initParams } from './clients.mjs';

export class StdioConn {
  constructor(child) {
    this.child = child;
    this.waiting = new Map();
    this.nextId = 1;
    this.closed = false;
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += decoder.write(chunk);
      let nl;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.#receive(line);
      }
    });
    child.stdout.once('close', () => {
      this.closed = true;
      for (const cb of this.waiting.values()) cb({ error: { message: 'stdio closed' }, transport: true });
      this.waiting.clear();
    });
    child.stdin.on('error', () => {}); // a dead child's EPIPE: its stdout's close answers the pending calls
  }
  #receive(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    const cb = msg.id !== undefined && !msg.method && this.waiting.get(msg.id);
    if (!cb) return;
    this.waiting.delete(msg.id);
    cb(msg);
  }
  send(method, params, cb) {
    if (this.closed) return void queueMicrotask(() => cb({ error: { message: 'stdio closed' }, transport: true }));
    const id = this.nextId++;
    this.waiting.set(id, cb);
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  }
  notify(method) {
    if (!this.closed) this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }
  call(method, params, timeoutMs = 5000) {
    return callOn(this, method, params, timeoutMs);
  }
  /** The MCP handshake: initialize (bounded by timeoutMs), then notifications/initialized. */
  async initialize(timeoutMs) {
    const msg = await this.call('initialize', initParams, timeoutMs);
    this.notify('notifications/initialized');
    return msg.result;
  }
}
