// The input_required fixtures of conformance 0.2 (MCP 2026-07-28 multi-round-trip requests, SEP-2322).
// Each handler asks through ctx.channel.request(method, params, { key }) as any module tool would:
// in the 2026 era fastsvc answers input_required and runs the handler again with the answers; in the
// 2025 era the same call is a server-to-client request. The keys are the ones the suite expects.

const NAME_FORM = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

const askName = (ctx, key, message = 'What is your name?') =>
  ctx.channel.request('elicitation/create', { mode: 'form', message, requestedSchema: NAME_FORM }, { key });

const askCapital = (ctx) => ctx.channel.request('sampling/createMessage', {
  messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
  maxTokens: 100,
}, { key: 'capital_question' });

const text = (answer) => answer?.content?.text ?? '(no text)';

export async function elicitation(_input, ctx) {
  const answer = await askName(ctx, 'user_name');
  return answer.action === 'accept' ? `Hello, ${answer.content?.name ?? 'stranger'}!` : `Elicitation ${answer.action}ed`;
}

export async function sampling(_input, ctx) {
  return `The model answered: ${text(await askCapital(ctx))}`;
}

export async function listRoots(_input, ctx) {
  const { roots } = await ctx.channel.request('roots/list', {}, { key: 'client_roots' });
  return `Client roots: ${roots.map((r) => r.uri).join(', ') || '(none)'}`;
}

export async function requestState(_input, ctx) {
  const answer = await ctx.channel.request('elicitation/create', {
    mode: 'form', message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  }, { key: 'confirm' });
  return `state-ok: confirmation ${answer.action}`;
}

export async function multipleInputs(_input, ctx) {
  const [user, greeting, { roots }] = await Promise.all([
    askName(ctx, 'user_name'),
    ctx.channel.request('sampling/createMessage', {
      messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
      maxTokens: 50,
    }, { key: 'greeting' }),
    ctx.channel.request('roots/list', {}, { key: 'client_roots' }),
  ]);
  return `${text(greeting)} ${user.content?.name ?? 'stranger'} (${roots.length} roots)`;
}

export async function multiRound(_input, ctx) {
  const first = await askName(ctx, 'step1');
  const second = await ctx.channel.request('elicitation/create', {
    mode: 'form', message: 'What is your favourite color?',
    requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
  }, { key: 'step2' });
  return `${first.content?.name ?? 'stranger'} likes ${second.content?.color ?? 'no color'}`;
}

export async function tamperedState(_input, ctx) {
  const answer = await askName(ctx, 'user_name');
  return `Hello, ${answer.content?.name ?? 'stranger'}!`;
}

/** Asks only what the client declared: sampling and/or elicitation. */
export async function capabilities(_input, ctx) {
  const asks = [];
  if (ctx.channel.supports('sampling/createMessage')) asks.push(askCapital(ctx).then(text));
  if (ctx.channel.supports('elicitation/create')) asks.push(askName(ctx, 'user_name').then((a) => a.content?.name ?? a.action));
  if (asks.length === 0) return 'The client declared neither sampling nor elicitation';
  return `Answers: ${(await Promise.all(asks)).join(', ')}`;
}

/** The prompt fixture: elicits some context, then returns it as the prompt's message. */
export async function prompt(_args, ctx) {
  const answer = await ctx.channel.request('elicitation/create', {
    mode: 'form', message: 'What context should the prompt use?',
    requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
  }, { key: 'user_context' });
  return [{ role: 'user', content: { type: 'text', text: `Context: ${answer.content?.context ?? '(none)'}` } }];
}
