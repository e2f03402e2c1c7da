// The tasks fixtures of conformance 0.2 (the io.modelcontextprotocol/tasks extension, SEP-2663).
// Each is an ordinary module tool; `task:` in svc.yaml makes it a task. Waiting honours
// context.signal, so a cancelled task stops at once.

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => {
    clearTimeout(t);
    reject(signal.reason);
  }, { once: true });
});

export async function slowCompute({ seconds = 1, label = '' }, ctx) {
  await sleep(seconds * 1000, ctx.signal);
  return `computed ${label} after ${seconds}s`;
}

export async function failingJob(_input, ctx) {
  await sleep(1000, ctx.signal);
  return { content: [{ type: 'text', text: 'the job failed' }], isError: true };
}

/** A protocol-level failure (not a tool error): the task ends `failed` with a JSON-RPC error. */
export async function protocolErrorJob(_input, ctx) {
  await sleep(100, ctx.signal);
  throw Object.assign(new Error('protocol_error_job always fails at the protocol level'), { name: 'SvcError', code: 'INTERNAL' });
}

const CONFIRM = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] };
const NAME = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

export async function confirmDelete({ filename }, ctx) {
  const answer = await ctx.channel.request('elicitation/create', { mode: 'form', message: `Delete ${filename}?`, requestedSchema: CONFIRM }, { key: 'confirm' });
  return answer?.action === 'accept' && answer.content?.confirm ? `deleted ${filename}` : `kept ${filename}`;
}

export async function multiInput(_input, ctx) {
  const [name, confirm] = await Promise.all([
    ctx.channel.request('elicitation/create', { mode: 'form', message: 'Your name?', requestedSchema: NAME }, { key: 'name' }),
    ctx.channel.request('elicitation/create', { mode: 'form', message: 'Proceed?', requestedSchema: CONFIRM }, { key: 'confirm' }),
  ]);
  return `name=${name?.content?.name ?? '?'} confirm=${confirm?.content?.confirm ?? '?'}`;
}

/**
 * ask_before_task: asks the user's name as an input_required round of the tools/call itself,
 * then becomes a task (context.channel.startTask()) that answers with the name.
 */
export async function greetAsTask(_input, ctx) {
  const answer = await ctx.channel.request('elicitation/create', { mode: 'form', message: 'What is your name?', requestedSchema: NAME }, { key: 'user_name' });
  ctx.channel.startTask?.();
  await sleep(200, ctx.signal);
  return `Hello, ${answer?.action === 'accept' ? answer.content?.name ?? 'stranger' : 'stranger'}!`;
}
