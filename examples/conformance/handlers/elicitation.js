// The elicitation tools: one elicitation/create request each, with the forms the conformance suite
// inspects (a plain form, SEP-1034 defaults, SEP-1330 enum variants). The answer comes back as text.

async function elicit(ctx, message, properties, required = []) {
  const answer = await ctx.channel.request('elicitation/create', {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties, required },
  });
  return `action=${answer?.action}, content=${JSON.stringify(answer?.content ?? {})}`;
}

export async function elicitation({ message }, ctx) {
  const text = await elicit(ctx, message, {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  }, ['username', 'email']);
  return `User response: ${text}`;
}

export async function elicitationDefaults(_input, ctx) {
  const text = await elicit(ctx, 'Please review and update the form fields with defaults', {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  });
  return `Elicitation completed: ${text}`;
}

export async function elicitationEnums(_input, ctx) {
  const titled = (prefix, names) => names.map((title, i) => ({ const: `value${i + 1}`, title: `${title} ${prefix}` }));
  const text = await elicit(ctx, 'Please select options from the enum fields', {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: titled('Option', ['First', 'Second', 'Third']) },
    legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
    untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: { type: 'array', description: 'Select multiple options with titles', minItems: 1, maxItems: 3, items: { anyOf: titled('Choice', ['First', 'Second', 'Third']) } },
  });
  return `Elicitation completed: ${text}`;
}

// test_streaming_elicitation: a progress notification first, then one elicitation. On 2026-07-28 the
// elicitation travels as an input request of the result, never as a request frame on the stream.
export async function streamingElicitation(_input, ctx) {
  await ctx.channel.progress(0, 1, 'asking for a name');
  await ctx.channel.log('info', 'about to ask for a name');
  const text = await elicit(ctx, 'What is your name?', { name: { type: 'string' } }, ['name']);
  return `Elicitation completed: ${text}`;
}
